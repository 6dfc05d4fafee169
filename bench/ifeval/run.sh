#!/usr/bin/env bash
# Throughput of kind instruction_following against IFEval's reference
# evaluator, side by side on the same 541 rows: `rewardd score` (a whole
# process: start, load, score strict and loose, write) against the
# reference's evaluation of the same rows, strict and loose, in one Python
# process (its import and langdetect's profile loading counted too, since
# rewardd's are). Each side runs RUNS times, alternating; the medians of
# wall time and of CPU time (user + system, which a loaded machine moves
# less) are printed with their ratios, and the accuracies.
#
#   IFEVAL_PARENT=DIR bench/ifeval/run.sh      # from the repository root, after make build
#
# DIR holds google-research's instruction_following_eval package (the
# reference, unchanged). Its Python dependencies are Debian's:
# apt-get install python3-absl python3-langdetect python3-nltk python3-immutabledict.
# NLTK's punkt model is no Debian package and cannot be downloaded here:
# make_punkt.py builds english.pickle from the Punkt parameters that
# github.com/neurosnap/sentences ships (exported from NLTK's own
# english.pickle), found in the Go module cache; with it the reference's
# verdicts on the 156 PaLM 2 responses are the published ones.
set -euo pipefail
: "${IFEVAL_PARENT:?set IFEVAL_PARENT to the directory holding instruction_following_eval/}"
RUNS=${RUNS:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=$root/scorers/instructions/testdata
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sentences=$(cd "$root" && go list -m -f '{{.Dir}}' github.com/neurosnap/sentences)
mkdir -p "$work/nltk_data/tokenizers/punkt/PY3"
/usr/bin/python3 "$here/make_punkt.py" "$sentences/data/english.json" "$work/nltk_data/tokenizers/punkt/PY3/english.pickle"
/usr/bin/python3 "$here/rows.py" "$data/ifeval_input_data.jsonl" "$data/ifeval_responses_palm2_156.jsonl" "$work"

go_wall=() go_cpu=() py_wall=() py_cpu=()
for i in $(seq "$RUNS"); do
  /usr/bin/time -f "%e %U %S" -o "$work/go.time" \
    "$root/bin/rewardd" score --config "$here/ifeval.yaml" --in "$work/rows.jsonl" --out "$work/scores.jsonl"
  PYTHONPATH="$IFEVAL_PARENT" NLTK_DATA="$work/nltk_data" /usr/bin/time -f "%e %U %S" -o "$work/py.time" \
    /usr/bin/python3 "$here/reference.py" "$data/ifeval_input_data.jsonl" "$work/responses.jsonl" > "$work/reference.txt" 2> "$work/reference.err"
  read -r w u s < "$work/go.time"; go_wall+=("$w"); go_cpu+=("$(echo "$u + $s" | bc)")
  read -r w u s < "$work/py.time"; py_wall+=("$w"); py_cpu+=("$(echo "$u + $s" | bc)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
gw=$(median "${go_wall[@]}") gc=$(median "${go_cpu[@]}") pw=$(median "${py_wall[@]}") pc=$(median "${py_cpu[@]}")
echo "rows: 541 (IFEval's prompts; PaLM 2 responses, cycled where a prompt has none), strict and loose; $RUNS runs each"
echo "rewardd score:  wall median ${gw} s (${go_wall[*]}); CPU median ${gc} s (${go_cpu[*]})"
echo "reference (py): wall median ${pw} s (${py_wall[*]}); CPU median ${pc} s (${py_cpu[*]})"
echo "  $(cat "$work/reference.err")"
echo "ratio: wall $(echo "scale=1; $pw / $gw" | bc)x, CPU $(echo "scale=1; $pc / $gc" | bc)x"
echo "reference accuracies:"; sed 's/^/  /' "$work/reference.txt"
/usr/bin/python3 - "$work/scores.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for name in ("strict", "loose"):
    v = [r["scores"][f"ifeval_{name}"] for r in rows]
    print(f"  rewardd {name}: prompt-level {sum(v) / len(v):.4f}")
PY
