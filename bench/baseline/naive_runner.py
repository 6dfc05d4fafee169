"""The code runner users write instead of rewardd's code_exec.

This is the baseline `rewardd bench --scenario humaneval` (and `stdio`)
compares against: a code reward as RL users write it, one fresh interpreter
per submission (--style assert, HumanEval),

    subprocess.run([sys.executable, "-c", program + "\\n" + test + f"\\ncheck({entry_point})\\n"],
                   timeout=..., capture_output=True)

passing when the interpreter exits 0, or one per test case (--style io),

    subprocess.run([sys.executable, "-c", program], input=stdin, timeout=..., capture_output=True)

a case passing when it exits 0 and prints the expected output (compared as
rewardd does: trailing whitespace of each line and trailing empty lines
ignored), the submission scoring the fraction of its cases that pass. The
submissions of a batch run on a concurrent.futures.ThreadPoolExecutor
(max_workers=2), the cases of one submission one after the other. The
program is the completion's last fenced code block (```python, ```py,
```python3 or bare ```), or the whole completion when it has none, as
rewardd's code_exec takes it. It has no isolation at all: the programs run
as this user, with the network, the files and the time of this machine.

Run as a program, it scores the rows of a JSONL file (completion, test and
entry_point; or completion and tests, JSON [{stdin, stdout}]; batches in
file order) one batch at a time, as a trainer calls its reward function,
and prints timings and every row's verdict as JSON (see main). Standard
library only.
"""

import argparse
import concurrent.futures
import json
import re
import resource
import subprocess
import sys
import time

import measure  # beside this script (bench/baseline/measure.py)

FENCE = re.compile(r"^[ \t]*```[ \t]*(python3|python|py)?[ \t]*\n(.*?)^[ \t]*```", re.S | re.M)


def program(completion):
    """The completion's last fenced Python block, or the whole completion."""
    blocks = FENCE.findall(completion)
    return blocks[-1][1] if blocks else completion


def same_output(got, want):
    def lines(text):
        ls = [line.rstrip(" \t\r\f\v") for line in text.split("\n")]
        while ls and not ls[-1]:
            ls.pop()
        return ls

    return lines(got) == lines(want)


def run_io(row, timeout):
    """Run one submission once per test case; returns (score, seconds, why)."""
    code = program(row["completion"])
    cases = json.loads(row["tests"])
    start = time.perf_counter()
    passed, why = 0, ""
    for k, case in enumerate(cases):
        try:
            p = subprocess.run([sys.executable, "-c", code], input=case["stdin"].encode(), timeout=timeout, capture_output=True)
        except subprocess.TimeoutExpired:
            why = why or "test %d: timeout (%gs)" % (k + 1, timeout)
            continue
        if p.returncode == 0 and same_output(p.stdout.decode("utf-8", "surrogateescape"), case["stdout"]):
            passed += 1
        elif not why:
            why = "test %d: %s" % (k + 1, "wrong output" if p.returncode == 0 else "exit %d" % p.returncode)
    return passed / len(cases), time.perf_counter() - start, why


def run_assert(row, timeout):
    """Run one submission; returns (score, seconds, why)."""
    src = program(row["completion"]) + "\n" + row["test"] + f"\ncheck({row['entry_point']})\n"
    start = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", src], timeout=timeout, capture_output=True)
    except subprocess.TimeoutExpired:
        return 0.0, time.perf_counter() - start, "timeout (%gs)" % timeout
    took = time.perf_counter() - start
    if p.returncode == 0:
        return 1.0, took, ""
    lines = p.stderr.decode("utf-8", "replace").strip().splitlines()
    return 0.0, took, "exit %d: %s" % (p.returncode, lines[-1][:300] if lines else "")


def machine_cpu():
    """Busy CPU seconds of the whole machine so far (/proc/stat), or 0."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return 0.0
    if len(fields) < 9 or fields[0] != "cpu":
        return 0.0
    return sum(int(fields[k]) for k in (1, 2, 3, 6, 7, 8)) / 100.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--style", choices=("assert", "io"), default="assert")
    ap.add_argument("--rows", required=True, help="JSONL rows, batches in file order")
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--duration", type=float, default=0,
                    help="seconds to run (and at least once over every batch of the file)")
    ap.add_argument("--batches", type=int, default=0, help="batches to run (instead of --duration)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=6.0, help="seconds per subprocess")
    args = ap.parse_args()
    run_one = run_assert if args.style == "assert" else run_io

    with open(args.rows, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    b = args.batch_size
    batches = [rows[i : i + b] for i in range(0, len(rows), b)]

    verdicts = {}
    latencies, submission = [], []
    timeouts = 0
    rollouts = 0
    children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu0, mcpu0, t0 = time.process_time(), machine_cpu(), time.perf_counter()
    n = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.workers) as pool:
        while True:
            if args.batches and n >= args.batches:
                break
            if not args.batches and n >= len(batches) and time.perf_counter() - t0 >= args.duration:
                break
            batch = batches[n % len(batches)]
            start = time.perf_counter()
            results = list(pool.map(lambda row: run_one(row, args.timeout), batch))
            latencies.append(time.perf_counter() - start)
            for row, (score, took, why) in zip(batch, results):
                submission.append(took)
                if "timeout" in why:
                    timeouts += 1
                verdicts.setdefault(row["id"], {"score": score, "why": why})
            rollouts += len(batch)
            n += 1
    wall = time.perf_counter() - t0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (time.process_time() - cpu0) + (children.ru_utime - children0.ru_utime) + (children.ru_stime - children0.ru_stime)

    json.dump(
        {
            "python": sys.version.split()[0],
            "workers": args.workers,
            "batches": n,
            "rollouts": rollouts,
            "wall_seconds": wall,
            "cpu_seconds": cpu,
            "machine_cpu_seconds": machine_cpu() - mcpu0,
            "latencies_seconds": latencies,
            "submission_seconds": submission,
            "timeouts": timeouts,
            "peak_rss_bytes": measure.peak_rss_bytes(),
            "verdicts": verdicts,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
