"""End-to-end time of one GRPO batch scored through rewardd_client versus the
same two reward functions written in-process in Python, TRL style, side by
side in one invocation (interleaved, best and median of N rounds).

    make build
    /usr/bin/python3 clients/python/benchmarks/e2e_batch.py --rewardd bin/rewardd \
        --data ../shared/data/gsm8k_test.jsonl --rows 5000 --rounds 15

The server runs the embedded default config; the batch asks for its
`accuracy` (exact_match) and `format` (strict think/answer) functions.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


# --- the baseline: what a TRL user writes in-process -------------------------

ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.S)
GSM8K = re.compile(r"####\s*(.+)")
NUMBER = re.compile(r"-?[\d,]*\.?\d+")
FORMAT = re.compile(r"^<think>.*?</think>\s*<answer>.*?</answer>$", re.S)


def _number(text):
    m = NUMBER.findall(text or "")
    if not m:
        return None
    try:
        return float(m[-1].replace(",", ""))
    except ValueError:
        return None


def accuracy_reward(completions, answer, **kwargs):
    rewards = []
    for c, ref in zip(completions, answer):
        g = GSM8K.search(ref)
        gold = _number(g.group(1) if g else ref)
        m = ANSWER_TAG.findall(c)
        if m:
            pred = _number(m[-1])
        else:
            g = GSM8K.search(c)
            pred = _number(g.group(1) if g else c)
        rewards.append(1.0 if pred is not None and gold is not None and pred == gold else 0.0)
    return rewards


def format_reward(completions, **kwargs):
    return [1.0 if FORMAT.match(c.strip()) else 0.0 for c in completions]


# --- the run -------------------------------------------------------------------


def start_server(binary):
    proc = subprocess.Popen([binary, "serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("msg") == "serving":
            return proc, rec["grpc_addr"]
    raise SystemExit("rewardd exited before serving")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewardd", default="bin/rewardd")
    ap.add_argument("--data", default="../shared/data/gsm8k_test.jsonl")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()

    rows = [json.loads(l) for l in open(args.data)]
    prompts, completions, answer = [], [], []
    for i in range(args.rows):
        r = rows[i % len(rows)]
        gold = r["answer"].split("####")[-1].strip()
        body = r["answer"].split("####")[0].strip()
        c = f"<think>\n{body}\n</think>\n<answer>{gold}</answer>" if i % 2 == 0 else r["answer"]
        if i % 4 == 3:
            c = c.replace(gold, gold + "1")
        prompts.append(r["question"])
        completions.append(c)
        answer.append(r["answer"])

    proc, addr = start_server(args.rewardd)
    try:
        os.environ["REWARDD_ADDR"] = addr
        from rewardd_client import remote
        fns = [remote.accuracy, remote.format]

        def via_rewardd():
            return [f(prompts=prompts, completions=completions, answer=answer) for f in fns]

        def in_process():
            return [accuracy_reward(completions, answer), format_reward(completions)]

        # Same numbers first: the comparison is between equal work.
        a, b = via_rewardd(), in_process()
        if a != b:
            diff = sum(x != y for fa, fb in zip(a, b) for x, y in zip(fa, fb))
            raise SystemExit(f"the two sides disagree on {diff} values; fix the baseline before timing")

        t_rw, t_py = [], []
        for _ in range(args.rounds):
            for fn, out in ((via_rewardd, t_rw), (in_process, t_py)):
                start = time.perf_counter()
                fn()
                out.append(time.perf_counter() - start)
        report = {
            "rows": args.rows, "functions": 2, "rounds": args.rounds,
            "rewardd_client_ms": {"best": min(t_rw) * 1e3, "median": statistics.median(t_rw) * 1e3},
            "in_process_python_ms": {"best": min(t_py) * 1e3, "median": statistics.median(t_py) * 1e3},
        }
        report["ratio_median"] = statistics.median(t_rw) / statistics.median(t_py)
        print(json.dumps(report, indent=2))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
