"""verl's reward loop over one worker's samples, scored through
rewardd_client.verl: compute_score (async, the calls of a window in one Score
RPC) against compute_score_sync run in the loop's executor (one RPC per
call), side by side in one invocation (interleaved, median and best of N
rounds), with the Score RPCs each round cost.

    make build
    /usr/bin/python3 clients/python/benchmarks/verl_loop.py --rewardd bin/rewardd \
        --data ../shared/data/gsm8k_test.jsonl --samples 256 --rounds 7

A third line times the loop with a reward function that does nothing: the
part of the time that is verl's own. The server runs the embedded default
config; each sample is scored by its
`accuracy` and `format` functions. The reward loop is the one the tests
replay (tests/test_verl.py: RewardLoopWorker.compute_score_batch over
NaiveRewardManager.run_single).
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def samples_from(path, n):
    """GSM8K rows as verl's gsm8k preprocessing makes them, half answered
    right in <think>/<answer> tags, half wrong without them."""
    out = []
    with open(path) as f:
        for i, line in enumerate(f):
            if len(out) == n:
                break
            row = json.loads(line)
            gold = row["answer"].split("####")[-1].strip().replace(",", "")
            sol = f"<think>{row['answer']}</think><answer>{gold}</answer>" if i % 2 == 0 else f"It is {gold}1."
            out.append(dict(data_source="openai/gsm8k", solution_str=sol, ground_truth=gold, extra_info={"split": "test", "index": i, "answer": row["answer"], "question": row["question"]}))
    if len(out) < n:
        sys.exit(f"{path}: {len(out)} rows, want {n}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rewardd", required=True, help="the rewardd binary")
    ap.add_argument("--data", required=True, help="GSM8K JSONL (question, answer)")
    ap.add_argument("--samples", type=int, default=256, help="samples per round (one reward worker's share of a batch)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    os.environ["REWARDD_BIN"] = os.path.abspath(args.rewardd)

    from _support import Server  # first: puts this tree's rewardd_client on sys.path
    from test_verl import get_custom_reward_fn, reward_loop

    import rewardd_client

    samples = samples_from(args.data, args.samples)
    server = Server()
    try:
        os.environ["REWARDD_ADDR"] = server.grpc_addr
        rewardd_client.reset()
        kw = {"functions": ["accuracy", "format"]}
        variants = {
            "compute_score (batched)": get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score", kw),
            "compute_score_sync (per call)": get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score_sync", kw),
        }
        want = None
        for fn in variants.values():  # warm up, and the two agree
            got = [score for score, _ in reward_loop(fn, samples)]
            if want is not None and got != want:
                sys.exit("the two variants disagree")
            want = got
        async def nothing(**kwargs):
            return 0.0

        variants["the loop alone (no scoring)"] = nothing
        times = {name: [] for name in variants}
        rpcs = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, fn in variants.items():
                before = server.counter("rewardd_requests_total", method="Score")
                t = time.perf_counter()
                reward_loop(fn, samples)
                times[name].append(time.perf_counter() - t)
                rpcs[name].append(int(server.counter("rewardd_requests_total", method="Score") - before))
        print(f"verl reward loop, {args.samples} samples x {args.rounds} rounds, accuracy + format, server {server.grpc_addr}")
        base = statistics.median(times["compute_score_sync (per call)"])
        for name in variants:
            med = statistics.median(times[name])
            print(
                f"  {name:30s} median {med * 1e3:7.1f} ms  best {min(times[name]) * 1e3:7.1f} ms  "
                f"{args.samples / med:8.0f} samples/s  x{base / med:.2f}  Score RPCs per round {sorted(set(rpcs[name]))}"
            )
    finally:
        rewardd_client.reset()
        server.stop()


if __name__ == "__main__":
    main()
