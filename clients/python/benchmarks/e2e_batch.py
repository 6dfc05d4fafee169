"""End-to-end time of one GRPO batch scored through rewardd_client versus the
same reward functions in-process in Python, TRL style, side by side in one
invocation: the two alternate round by round, so both see the same machine.

    make build
    /usr/bin/python3 clients/python/benchmarks/e2e_batch.py --rewardd bin/rewardd \
        --data ../shared/data/gsm8k_test.jsonl --rows 5000 --rounds 15

The server runs the embedded default config; the batch asks for the
functions named by --functions (by default all six of that config). The
in-process side is bench/baseline/trl_rewards.py, the TRL-style Python that
rewardd-bench compares against, whose values equal the server's on these
rows (checked before the clock). Each function is called as TRL's
GRPOTrainer calls it: one call per function on the whole batch, with the
dataset columns, trainer_state, log_extra and log_metric (--no-log-extra:
without the last two, as TRL before them did); the client's first call
scores the batch for all of them in one round trip, and log_extra gets
each function's reasons.

Prints JSON: the medians and the best of each side, "speedup" (in-process
median ÷ client median: above 1 the client is faster), the spread of the
per-round ratios (each round's in-process time ÷ its client time), and the
CPU time per batch of each side over all rounds (the client process's,
the server's from /proc; "cpu_speedup" = in-process CPU ÷ client and server
CPU), which other processes on the machine move less than wall time.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "baseline"))

import trl_rewards  # noqa: E402  (bench/baseline: the in-process side)

DEFAULT_FUNCTIONS = "accuracy,format,tag_count,reasoning_steps,repetition,overlong"


def batch(path, n):
    """n GSM8K rollouts as TRL passes them: a GRPO group per question
    (rows repeat after the file's 1,319), half as <think>…</think><answer>n</answer>,
    half as the solution is written (… #### n), a quarter with a wrong number."""
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    prompts, completions, answer = [], [], []
    for i in range(n):
        r = rows[i % len(rows)]
        gold = r["answer"].split("####")[-1].strip()
        body = r["answer"].split("####")[0].strip()
        c = f"<think>\n{body}\n</think>\n<answer>{gold}</answer>" if i % 2 == 0 else r["answer"]
        if i % 4 == 3:
            c = c.replace(gold, gold + "1")
        prompts.append(r["question"])
        completions.append(c)
        answer.append(r["answer"])
    return {"prompts": prompts, "completions": completions, "answer": answer}


def cpu_seconds(pid=None):
    """CPU time (user + system) of this process, or of process pid from /proc."""
    if pid is None:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    ap.add_argument("--functions", default=DEFAULT_FUNCTIONS, help="comma-separated; the default config's six by default")
    ap.add_argument("--no-log-extra", action="store_true", help="call without TRL's log_extra and log_metric")
    args = ap.parse_args()

    kwargs = batch(args.data, args.rows)
    kwargs["trainer_state"] = types.SimpleNamespace(global_step=1, epoch=0.0)
    if not args.no_log_extra:
        logged = {}
        kwargs["log_extra"] = logged.__setitem__
        kwargs["log_metric"] = lambda *a, **k: None
    names = args.functions.split(",")
    local = trl_rewards.select(args.functions)

    proc, addr = start_server(args.rewardd)
    try:
        os.environ["REWARDD_ADDR"] = addr
        from rewardd_client import remote
        fns = [getattr(remote, n) for n in names]

        def via_rewardd():
            return [f(**kwargs) for f in fns]

        def in_process():
            return [local[n](**kwargs) for n in names]

        # Same numbers first: the comparison is between equal work.
        a, b = via_rewardd(), in_process()
        if a != b:
            diff = sum(x != y for fa, fb in zip(a, b) for x, y in zip(fa, fb))
            raise SystemExit(f"the two sides disagree on {diff} values; fix the baseline before timing")

        t_rw, t_py = [], []
        cpu = {"client": 0.0, "server": 0.0, "in_process": 0.0}
        for _ in range(args.rounds):
            c0, s0, start = cpu_seconds(), cpu_seconds(proc.pid), time.perf_counter()
            via_rewardd()
            t_rw.append(time.perf_counter() - start)
            c1, s1 = cpu_seconds(), cpu_seconds(proc.pid)
            start = time.perf_counter()
            in_process()
            t_py.append(time.perf_counter() - start)
            cpu["client"] += c1 - c0
            cpu["server"] += s1 - s0
            cpu["in_process"] += cpu_seconds() - c1
        per_round = sorted(p / r for p, r in zip(t_py, t_rw))
        report = {
            "rows": args.rows, "functions": names, "rounds": args.rounds, "log_extra": not args.no_log_extra,
            "rewardd_client_ms": {"best": min(t_rw) * 1e3, "median": statistics.median(t_rw) * 1e3},
            "in_process_python_ms": {"best": min(t_py) * 1e3, "median": statistics.median(t_py) * 1e3},
            "speedup": statistics.median(t_py) / statistics.median(t_rw),
            "per_round_speedup": {"min": per_round[0], "median": statistics.median(per_round), "max": per_round[-1]},
            "cpu_ms_per_batch": {k: v / args.rounds * 1e3 for k, v in cpu.items()},
            "cpu_speedup": cpu["in_process"] / (cpu["client"] + cpu["server"]),
            "load_average": os.getloadavg()[0],
        }
        print(json.dumps(report, indent=2))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
