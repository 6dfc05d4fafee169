#!/usr/bin/env bash
# Throughput of kind instruction_following against IFEval's reference
# evaluator, side by side on the same 541 rows: `rewardd score` (a whole
# process: start, load, score strict and loose, write) against the
# reference's evaluation of the same rows, strict and loose, in one Python
# process (its import and langdetect's profile loading counted too, since
# rewardd's are). Each side runs RUNS times, alternating; the medians are
# printed with their ratio, and each side's four headline accuracies.
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

now() { date +%s.%N; }
go_times=() py_times=()
for i in $(seq "$RUNS"); do
  t0=$(now)
  "$root/bin/rewardd" score --config "$here/ifeval.yaml" --in "$work/rows.jsonl" --out "$work/scores.jsonl"
  t1=$(now)
  PYTHONPATH="$IFEVAL_PARENT" NLTK_DATA="$work/nltk_data" /usr/bin/python3 "$here/reference.py" \
    "$data/ifeval_input_data.jsonl" "$work/responses.jsonl" > "$work/reference.txt" 2> "$work/reference.err"
  t2=$(now)
  go_times+=("$(echo "$t1 - $t0" | bc)") py_times+=("$(echo "$t2 - $t1" | bc)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
go_med=$(median "${go_times[@]}") py_med=$(median "${py_times[@]}")
echo "rows: 541 (IFEval's prompts; PaLM 2 responses, cycled where a prompt has none), strict and loose"
echo "rewardd score:   median ${go_med} s of ${RUNS} (${go_times[*]})"
echo "reference (py):  median ${py_med} s of ${RUNS} (${py_times[*]}); $(cat "$work/reference.err")"
echo "ratio: $(echo "scale=1; $py_med / $go_med" | bc)x"
echo "reference accuracies:"; sed 's/^/  /' "$work/reference.txt"
/usr/bin/python3 - "$work/scores.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for name in ("strict", "loose"):
    v = [r["scores"][f"ifeval_{name}"] for r in rows]
    print(f"  rewardd {name}: prompt-level {sum(v) / len(v):.4f}")
PY
