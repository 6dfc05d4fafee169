"""The code runner users write instead of rewardd's code_exec.

This is the baseline `rewardd-bench --scenario humaneval` (and `stdio`)
compares against: a code reward as RL users write it, one fresh interpreter
per submission (--style assert, HumanEval),

    subprocess.run([sys.executable, "-c", program + "\\n" + test + f"\\ncheck({entry_point})\\n"],
                   timeout=..., capture_output=True)

passing when the interpreter exits 0, or one per test case (--style io),

    subprocess.run([sys.executable, "-c", program], input=stdin, timeout=..., capture_output=True)

a case passing when it exits 0 and prints the expected output (compared as
rewardd does: trailing whitespace of each line and trailing empty lines
ignored), the submission scoring the fraction of its cases that pass; or,
for competitive programming (--style cp, C++ or Python), compiled once per
submission,

    subprocess.run(["g++", "-std=gnu++17", "-O2", "-o", exe, source])

and run once per test case, ([exe] or [sys.executable, source]) with the
test's stdin, each case judged by the row's checker (exact, exact_ci,
float:E, float_abs:E, float_rel:E as rewardd's code_exec judges them, or
special: the row's Kattis output validator, compiled once per problem
before the clock), the submission scoring the fraction that pass. The
submissions of a batch run on a concurrent.futures.ThreadPoolExecutor
(max_workers=2), the cases of one submission one after the other. The
program is the completion's last fenced code block (```python, ```py,
```python3 or bare ```; for C++ ```cpp, ```c++), or the whole completion
when it has none, as rewardd's code_exec takes it. It has no isolation at
all: the programs run as this user, with the network, the files and the
time of this machine.

Run as a program, it scores the rows of a JSONL file (completion, test and
entry_point; or completion and tests, JSON [{stdin, stdout}], and for cp
language, checker, checker_files and time_limit_s; batches in file order)
one batch at a time, as a trainer calls its reward function, and prints
timings and every row's verdict as JSON (see main). Standard library only.
"""

import argparse
import concurrent.futures
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import measure  # beside this script (bench/baseline/measure.py)

FENCE = re.compile(r"^[ \t]*```[ \t]*(python3|python|py)?[ \t]*\n(.*?)^[ \t]*```", re.S | re.M)
CPP_FENCE = re.compile(r"^[ \t]*```[ \t]*(cpp|c\+\+)?[ \t]*\n(.*?)^[ \t]*```", re.S | re.M)


def program(completion, fence=FENCE):
    """The completion's last fenced block (Python's by default), or the whole completion."""
    blocks = fence.findall(completion)
    return blocks[-1][1] if blocks else completion


def same_output(got, want):
    def lines(text):
        ls = [line.rstrip(" \t\r\f\v") for line in text.split("\n")]
        while ls and not ls[-1]:
            ls.pop()
        return ls

    return lines(got) == lines(want)


DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def same_tokens(got, want, tol, absolute, relative):
    """Tokens, as many; equal, or both decimal numbers within the tolerance of the expected one."""
    g, w = got.split(), want.split()
    if len(g) != len(w):
        return False
    for a, b in zip(g, w):
        if a == b:
            continue
        if not DECIMAL.fullmatch(a) or not DECIMAL.fullmatch(b):
            return False
        x, y = float(a), float(b)
        d = abs(x - y)
        if not (absolute and d <= tol or relative and d <= tol * abs(y)):
            return False
    return True


# Compiled special checkers, by problem (compile_checkers fills it before the clock).
CHECKERS = {}


def compile_checkers(rows, workdir):
    """Compile each special checker of rows once, as a trainer would when it loads its problems."""
    for row in rows:
        if row.get("checker") != "special" or row["task_id"] in CHECKERS:
            continue
        cf = row["checker_files"]
        d = tempfile.mkdtemp(prefix="checker-", dir=workdir)
        for name, src in cf["files"].items():
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(src)
        exe = os.path.join(d, "checker")
        std = cf.get("std") or "c++17"
        subprocess.run(["g++", "-std=" + std, "-O2", "-o", exe, os.path.join(d, cf["main"])], check=True, capture_output=True)
        CHECKERS[row["task_id"]] = exe


def judge(row, stdin, out, want, tmp):
    """Whether out is a right output for the test, by the row's checker."""
    name, _, tol = (row.get("checker") or "exact").partition(":")
    if name == "exact":
        return same_output(out, want)
    if name == "exact_ci":
        return same_output(out.lower(), want.lower())
    if name in ("float", "float_abs", "float_rel"):
        return same_tokens(out, want, float(tol), name != "float_rel", name != "float_abs")
    if name == "special":
        with open(os.path.join(tmp, "input"), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(stdin)
        with open(os.path.join(tmp, "answer"), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(want)
        feedback = os.path.join(tmp, "feedback")
        os.makedirs(feedback, exist_ok=True)
        p = subprocess.run([CHECKERS[row["task_id"]], os.path.join(tmp, "input"), os.path.join(tmp, "answer"), feedback + "/"],
                           input=out.encode("utf-8", "surrogateescape"), capture_output=True, timeout=60)
        if p.returncode not in (42, 43):
            raise RuntimeError("the checker failed: exit %d" % p.returncode)
        return p.returncode == 42
    raise ValueError("unknown checker %r" % row.get("checker"))


def run_cp(row, time_limit, factor):
    """Compile one submission once (C++), then run it once per test case
    under the row's time limit; returns (score, seconds, why, tests)."""
    cases = json.loads(row["tests"])
    tmp = tempfile.mkdtemp(prefix="naive-cp-")
    try:
        start = time.perf_counter()
        if row["language"] == "cpp":
            src = os.path.join(tmp, "main.cpp")
            with open(src, "w", encoding="utf-8") as f:
                f.write(program(row["completion"], CPP_FENCE))
            exe = os.path.join(tmp, "main")
            try:
                p = subprocess.run(["g++", "-std=gnu++17", "-O2", "-o", exe, src], capture_output=True, timeout=60)
            except subprocess.TimeoutExpired:
                return 0.0, time.perf_counter() - start, "compile: timeout", len(cases)
            if p.returncode != 0:
                return 0.0, time.perf_counter() - start, "compile error: " + p.stderr.decode("utf-8", "replace")[:300], len(cases)
            argv = [exe]
        else:
            src = os.path.join(tmp, "main.py")
            with open(src, "w", encoding="utf-8") as f:
                f.write(program(row["completion"]))
            argv = [sys.executable, src]
        limit = (row.get("time_limit_s") or time_limit) * factor
        passed, why = 0, ""
        for k, case in enumerate(cases):
            try:
                p = subprocess.run(argv, input=case["stdin"].encode("utf-8", "surrogateescape"), timeout=2 * limit + 1, capture_output=True, cwd=tmp)
            except subprocess.TimeoutExpired:
                why = why or "test %d: timeout (%gs)" % (k + 1, 2 * limit + 1)
                continue
            out = p.stdout.decode("utf-8", "surrogateescape")
            if p.returncode == 0 and judge(row, case["stdin"], out, case["stdout"], tmp):
                passed += 1
            elif not why:
                why = "test %d: %s" % (k + 1, "wrong output" if p.returncode == 0 else "exit %d" % p.returncode)
        return passed / len(cases), time.perf_counter() - start, why, len(cases)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_io(row, timeout):
    """Run one submission once per test case; returns (score, seconds, why, tests)."""
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
    return passed / len(cases), time.perf_counter() - start, why, len(cases)


def run_assert(row, timeout):
    """Run one submission; returns (score, seconds, why, tests)."""
    src = program(row["completion"]) + "\n" + row["test"] + f"\ncheck({row['entry_point']})\n"
    start = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", src], timeout=timeout, capture_output=True)
    except subprocess.TimeoutExpired:
        return 0.0, time.perf_counter() - start, "timeout (%gs)" % timeout, 1
    took = time.perf_counter() - start
    if p.returncode == 0:
        return 1.0, took, "", 1
    lines = p.stderr.decode("utf-8", "replace").strip().splitlines()
    return 0.0, took, "exit %d: %s" % (p.returncode, lines[-1][:300] if lines else ""), 1


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
    ap.add_argument("--style", choices=("assert", "io", "cp"), default="assert")
    ap.add_argument("--rows", required=True, help="JSONL rows, batches in file order")
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--duration", type=float, default=0,
                    help="seconds to run (and at least once over every batch of the file)")
    ap.add_argument("--batches", type=int, default=0, help="batches to run (instead of --duration)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=6.0, help="seconds per subprocess (assert, io)")
    ap.add_argument("--time-limit", type=float, default=5.0, help="cp: CPU seconds per test of a row without time_limit_s")
    ap.add_argument("--time-limit-factor", type=float, default=1.0, help="cp: multiplies each test's time limit")
    args = ap.parse_args()
    if args.style == "cp":
        run_one = lambda row, _: run_cp(row, args.time_limit, args.time_limit_factor)
    else:
        run_one = run_assert if args.style == "assert" else run_io

    with open(args.rows, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    checkers_dir = tempfile.mkdtemp(prefix="naive-checkers-")
    compile_checkers(rows, checkers_dir)
    b = args.batch_size
    batches = [rows[i : i + b] for i in range(0, len(rows), b)]

    verdicts = {}
    latencies, submission = [], []
    timeouts = 0
    rollouts = tests = 0
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
            for row, (score, took, why, n_tests) in zip(batch, results):
                submission.append(took)
                tests += n_tests
                if "timeout" in why:
                    timeouts += 1
                verdicts.setdefault(row["id"], {"score": score, "why": why})
            rollouts += len(batch)
            n += 1
    wall = time.perf_counter() - t0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (time.process_time() - cpu0) + (children.ru_utime - children0.ru_utime) + (children.ru_stime - children0.ru_stime)
    shutil.rmtree(checkers_dir, ignore_errors=True)

    json.dump(
        {
            "python": sys.version.split()[0],
            "workers": args.workers,
            "batches": n,
            "rollouts": rollouts,
            "tests": tests,
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
