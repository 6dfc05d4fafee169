"""Check a TRL reward function before a training run depends on it.

    python -m rewardd_client.validate rewards.py:fn --samples rows.jsonl
    python -m rewardd_client.validate rewardd_client.remote:accuracy --samples rows.jsonl

The function is called twice the way TRL's GRPOTrainer calls it,
fn(prompts=…, completions=…, completion_ids=…, trainer_state=…,
log_extra=…, log_metric=…, **columns), with the rows of the samples file
(JSONL, one dataset row per line: `prompt` and `completion` are strings or
chat lists of {role, content}; `id` and `group` are ignored; every other key
is a column, None where a row lacks it). completion_ids are stand-ins (the
UTF-8 bytes of each completion): there is no tokenizer here.

Checks, each printed with a verdict: the call returns; one entry per
completion; every entry a finite number or None (bool, str, NaN and inf
fail); the same result on the second call. Also printed: time per call,
and warnings that do not fail (every entry None, every value the same).
Exit status: 0 when every check passes, 1 when one fails, 2 on bad usage
(unloadable function, unreadable samples).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import numbers
import os
import sys
import time
import traceback
import types
from typing import Any, Callable, Optional, Sequence, TextIO

RESERVED = ("id", "group", "prompt", "completion")


class UsageError(Exception):
    pass


def load_function(spec: str) -> Callable[..., Any]:
    """Loads `path/to/file.py:fn`, `package.module:fn` or `package.module.fn`."""
    if ":" in spec:
        where, _, name = spec.rpartition(":")
    else:
        where, _, name = spec.rpartition(".")
    if not where or not name:
        raise UsageError(f"{spec!r}: want file.py:function or package.module:function")
    if where.endswith(".py") or os.sep in where or "/" in where:
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise UsageError(f"{where}: no such file")
        # As when running the file: its directory is importable (sibling modules).
        sys.path.insert(0, os.path.dirname(path))
        modname = "_rewardd_validate_" + os.path.splitext(os.path.basename(path))[0]
        loader_spec = importlib.util.spec_from_file_location(modname, path)
        if loader_spec is None or loader_spec.loader is None:
            raise UsageError(f"{where}: cannot load it as a Python module")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[modname] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as err:
            raise UsageError(f"{where}: importing it failed: {type(err).__name__}: {err}") from err
    else:
        try:
            module = importlib.import_module(where)
        except Exception as err:
            raise UsageError(f"{where}: importing it failed: {type(err).__name__}: {err}") from err
    try:
        fn = getattr(module, name)
    except AttributeError:
        raise UsageError(f"{where} has no {name!r}") from None
    except Exception as err:  # a module __getattr__ may fail
        raise UsageError(f"{where}.{name}: {type(err).__name__}: {err}") from err
    if not callable(fn):
        raise UsageError(f"{spec}: is a {type(fn).__name__}, not a function")
    return fn


def read_samples(path: str) -> list[dict[str, Any]]:
    rows = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"{path}: {err.strerror}") from None
    with f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise UsageError(f"{path}:{lineno}: {err.msg}") from None
            if not isinstance(row, dict):
                raise UsageError(f"{path}:{lineno}: want a JSON object, got {type(row).__name__}")
            if "completion" not in row:
                raise UsageError(f"{path}:{lineno}: no `completion`")
            rows.append(row)
    if not rows:
        raise UsageError(f"{path}: no rows")
    return rows


def trl_kwargs(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The keyword arguments TRL's _calculate_rewards would pass for these rows."""
    completions = [r["completion"] for r in rows]
    columns: dict[str, list[Any]] = {}
    for r in rows:
        for k in r:
            if k not in RESERVED and k not in columns:
                columns[k] = [row.get(k) for row in rows]
    return dict(
        prompts=[r.get("prompt", "") for r in rows],
        completions=completions,
        completion_ids=[list(_completion_text(c).encode("utf-8")) for c in completions],
        trainer_state=types.SimpleNamespace(global_step=0, epoch=0.0, max_steps=1, is_world_process_zero=True),
        log_extra=lambda *a, **k: None,
        log_metric=lambda *a, **k: None,
        **columns,
    )


def _completion_text(c: Any) -> str:
    if isinstance(c, str):
        return c
    if isinstance(c, list) and c and isinstance(c[-1], dict):
        return str(c[-1].get("content", ""))
    return json.dumps(c)


class Report:
    def __init__(self, out: TextIO):
        self.out = out
        self.failed: list[str] = []

    def line(self, verdict: str, check: str, msg: str) -> None:
        if verdict == "FAIL":
            self.failed.append(check)
        print(f"{verdict:<5} {check:<14} {msg}", file=self.out)


def entry_problem(v: Any) -> Optional[str]:
    """Why v is not a valid reward entry, or None when it is."""
    if v is None:
        return None
    if isinstance(v, bool):
        return f"bool {v!r} (return a float)"
    if isinstance(v, numbers.Real):
        f = float(v)
        if math.isnan(f):
            return "NaN (return None for 'does not apply')"
        if math.isinf(f):
            return f"{f} (not finite)"
        return None
    return f"{type(v).__name__} {v!r:.40}"


def run(fn: Callable[..., Any], rows: Sequence[dict[str, Any]], report: Report) -> None:
    kwargs = trl_kwargs(rows)
    n = len(rows)
    results, times = [], []
    for attempt in (1, 2):
        t0 = time.perf_counter()
        try:
            out = fn(**kwargs)
        except Exception as err:
            tb = traceback.extract_tb(err.__traceback__)[-1]
            report.line("FAIL", "call", f"call {attempt} raised {type(err).__name__}: {err} ({tb.filename}:{tb.lineno})")
            return
        times.append(time.perf_counter() - t0)
        kind = type(out).__name__
        try:
            out = list(out)
        except TypeError:
            report.line("FAIL", "call", f"returned {type(out).__name__}, want a list with one entry per completion")
            return
        results.append(out)
    report.line("PASS", "call", f"returned a {kind}, twice" + ("" if kind == "list" else " (TRL iterates it; a list is usual)"))

    first = results[0]
    if len(first) == n:
        report.line("PASS", "length", f"{n} entries for {n} completions")
    else:
        report.line("FAIL", "length", f"{len(first)} entries for {n} completions")

    problems = [(i, p) for i, p in ((i, entry_problem(v)) for i, v in enumerate(first)) if p]
    if problems:
        shown = "; ".join(f"entry {i}: {p}" for i, p in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        report.line("FAIL", "types", f"{len(problems)} of {len(first)} entries are not a finite number or None: {shown}{more}")
    else:
        report.line("PASS", "types", "every entry is a finite number or None")

    diff = [i for i, (a, b) in enumerate(zip(results[0], results[1])) if not _same(a, b)]
    if len(results[0]) != len(results[1]):
        report.line("FAIL", "deterministic", f"the second call returned {len(results[1])} entries, the first {len(results[0])}")
    elif diff:
        i = diff[0]
        report.line("FAIL", "deterministic", f"{len(diff)} entries differ between two calls (entry {i}: {results[0][i]!r} then {results[1][i]!r})")
    else:
        report.line("PASS", "deterministic", "same result on the second call")

    per_call = min(times)
    report.line("INFO", "time", f"{_dur(per_call)} per call, {_dur(per_call / n)} per completion (calls took {' and '.join(_dur(t) for t in times)})")

    nums = [float(v) for v in first if v is not None and entry_problem(v) is None]
    nones = sum(v is None for v in first)
    if nums:
        report.line("INFO", "values", f"{len(nums)} numbers (min {min(nums):g}, mean {sum(nums) / len(nums):g}, max {max(nums):g}), {nones} None")
    if first and nones == len(first):
        report.line("WARN", "values", "every entry is None: the function applies to none of these samples")
    elif len(nums) == len(first) > 1 and len(set(nums)) == 1:
        report.line("WARN", "values", f"every completion got {nums[0]:g}: GRPO advantages from this function alone would all be 0")


def _dur(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    return fa == fb or (math.isnan(fa) and math.isnan(fb))


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rewardd_client.validate",
        description="Check a TRL reward function: one entry per completion, finite float or None, same result twice.",
    )
    parser.add_argument("function", help="file.py:function, package.module:function (e.g. rewardd_client.remote:accuracy)")
    parser.add_argument("--samples", required=True, help="JSONL, one dataset row per line (prompt, completion, columns)")
    args = parser.parse_args(argv)
    try:
        fn = load_function(args.function)
        rows = read_samples(args.samples)
    except UsageError as err:
        print(f"rewardd validate: {err}", file=sys.stderr)
        return 2
    print(f"rewardd validate: {args.function} on {len(rows)} samples from {args.samples}", file=out)
    report = Report(out)
    run(fn, rows, report)
    if report.failed:
        print(f"verdict: FAIL ({', '.join(report.failed)})", file=out)
        return 1
    print("verdict: PASS", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
