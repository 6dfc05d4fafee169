"""python -m rewardd_client.validate, run as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

import _support
from _support import Server

GOOD = '''
import re

def accuracy(prompts, completions, answer, **kwargs):
    """Exact match of the <answer> tag; None without a reference."""
    out = []
    for c, a in zip(completions, answer):
        text = c[-1]["content"] if isinstance(c, list) else c
        m = re.search(r"<answer>(.*?)</answer>", text)
        out.append(None if a is None else float(bool(m) and m.group(1).strip() == str(a)))
    return out
'''

BAD = '''
import random

def too_short(prompts, completions, **kwargs):
    return [1.0] * (len(completions) - 1)

def wrong_types(prompts, completions, **kwargs):
    out = [0.5] * len(completions)
    out[0], out[1], out[2], out[3] = True, "1", float("nan"), float("inf")
    return out

def random_reward(prompts, completions, **kwargs):
    return [random.random() for _ in completions]

def crashes(prompts, completions, **kwargs):
    return [len(c) / kwargs["missing_column"] for c in completions]
'''


class ValidateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.addClassCleanup(cls.dir.cleanup)
        d = cls.dir.name
        with open(os.path.join(d, "good.py"), "w") as f:
            f.write(GOOD)
        with open(os.path.join(d, "bad.py"), "w") as f:
            f.write(BAD)
        cls.samples = os.path.join(d, "rows.jsonl")
        with open(cls.samples, "w") as f:
            rows = [
                {"prompt": "What is 6*7?", "completion": "<think>6*7</think><answer>42</answer>", "answer": "42"},
                {"prompt": "What is 6*7?", "completion": "<answer>41</answer>", "answer": "42"},
                {"prompt": [{"role": "user", "content": "Say hi."}], "completion": [{"role": "assistant", "content": "<answer>hi</answer>"}], "answer": None},
                {"id": "x", "prompt": "What is 2+2?", "completion": "4"},
            ]
            for r in rows:
                f.write(json.dumps(r) + "\n")

    def validate(self, spec, samples=None, env=None):
        e = dict(os.environ, PYTHONPATH=_support.CLIENT_DIR, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
        p = subprocess.run(
            [sys.executable, "-m", "rewardd_client.validate", spec, "--samples", samples or self.samples],
            cwd=self.dir.name, env=e, capture_output=True, text=True, timeout=60,
        )
        return p.returncode, p.stdout, p.stderr

    def test_good_function_passes(self):
        code, out, err = self.validate("good.py:accuracy")
        self.assertEqual(code, 0, out + err)
        for check in ("call", "length", "types", "deterministic"):
            self.assertRegex(out, rf"(?m)^PASS\s+{check}\s")
        self.assertRegex(out, r"(?m)^INFO\s+time\s+[\d.]+ (µs|ms|s) per call")
        self.assertIn("verdict: PASS", out)

    def test_bad_functions_fail_with_the_check_named(self):
        cases = {
            "too_short": (r"(?m)^FAIL\s+length\s+3 entries for 4 completions",),
            "wrong_types": (r"(?m)^FAIL\s+types\s+4 of 4 entries", r"entry 0: bool", r"entry 1: str", r"entry 2: NaN", r"entry 3: inf"),
            "random_reward": (r"(?m)^FAIL\s+deterministic\s",),
            "crashes": (r"(?m)^FAIL\s+call\s+call 1 raised KeyError: 'missing_column'",),
        }
        for fn, patterns in cases.items():
            with self.subTest(fn=fn):
                code, out, err = self.validate(f"{os.path.join(self.dir.name, 'bad.py')}:{fn}")
                self.assertEqual(code, 1, out + err)
                for pat in patterns:
                    self.assertRegex(out, pat)
                self.assertIn("verdict: FAIL", out)

    def test_remote_function(self):
        server = Server()
        self.addCleanup(server.stop)
        code, out, err = self.validate("rewardd_client.remote:accuracy", env={"REWARDD_ADDR": server.grpc_addr})
        self.assertEqual(code, 0, out + err)
        self.assertIn("2 numbers (min 0, mean 0.5, max 1), 2 None", out)

    def test_usage_errors(self):
        for spec, samples, want in (
            ("nope.py:f", None, "nope.py: no such file"),
            ("good.py:nothing", None, "has no 'nothing'"),
            ("good.py:accuracy", "/nonexistent/rows.jsonl", "No such file"),
            ("good", None, "want file.py:function"),
        ):
            with self.subTest(spec=spec):
                code, out, err = self.validate(spec, samples)
                self.assertEqual(code, 2, out + err)
                self.assertIn(want, err)


if __name__ == "__main__":
    unittest.main()
