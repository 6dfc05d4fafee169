"""Test support: a real `rewardd serve` process on loopback, its metrics, sample batches.

The binary is $REWARDD_BIN (`make test-python` builds it); without it, the
tests build one with `go build` once per run.
"""

from __future__ import annotations

import atexit
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.request
from typing import Any, Optional
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT_DIR = os.path.dirname(HERE)  # clients/python
REPO = os.path.dirname(os.path.dirname(CLIENT_DIR))

# Test this tree's package, not an installed copy.
if sys.path[:1] != [CLIENT_DIR]:
    sys.path.insert(0, CLIENT_DIR)

import rewardd_client  # noqa: E402  (after the path is set)

_binary: Optional[str] = None
_binary_lock = threading.Lock()


def binary() -> str:
    global _binary
    with _binary_lock:
        if _binary is None:
            env = os.environ.get("REWARDD_BIN")
            if env:
                if not os.access(env, os.X_OK):
                    raise RuntimeError(f"REWARDD_BIN={env} is not an executable")
                _binary = env
            else:
                go = shutil.which("go") or "/usr/local/go/bin/go"
                out = tempfile.mkdtemp(prefix="rewardd-bin-")
                atexit.register(shutil.rmtree, out, True)
                path = os.path.join(out, "rewardd")
                subprocess.run([go, "build", "-o", path, "./cmd/rewardd"], cwd=REPO, check=True)
                _binary = path
        return _binary


class Server:
    """A `rewardd serve` process on free loopback ports."""

    def __init__(self, *args: str, config: Optional[str] = None):
        argv = [binary(), "serve", "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", *args]
        self._tmp = None
        if config is not None:
            self._tmp = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
            self._tmp.write(config)
            self._tmp.close()
            argv += ["--config", self._tmp.name]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.logs: list[str] = []
        self.grpc_addr = self.http_addr = self.fingerprint = ""
        ready = threading.Event()

        def drain() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.logs.append(line)
                if not ready.is_set():
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if rec.get("msg") == "serving":
                        self.grpc_addr, self.http_addr = rec["grpc_addr"], rec["http_addr"]
                        self.fingerprint = rec.get("config_fingerprint", "")
                        ready.set()
            ready.set()

        self._drain = threading.Thread(target=drain, daemon=True)
        self._drain.start()
        if not ready.wait(60) or not self.grpc_addr:
            self.kill()
            raise RuntimeError("rewardd did not log 'serving'; logs:\n" + "".join(self.logs))
        for addr in (self.grpc_addr, self.http_addr):
            if not addr.startswith("127.0.0.1:"):
                self.kill()
                raise RuntimeError(f"rewardd listens on {addr}, not loopback")

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://{self.http_addr}/metrics", timeout=10) as r:
            return r.read().decode()

    def counter(self, name: str, **labels: str) -> float:
        """The value of one sample of the server's metrics (0 when absent)."""
        return metric(self.metrics(), name, **labels)

    def score_ok(self) -> float:
        return self.counter("rewardd_requests_total", method="Score", code="OK")

    def kill(self) -> None:
        """SIGKILL, no drain."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._drain.join(5)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._drain.join(5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        if self._tmp is not None:
            os.unlink(self._tmp.name)
            self._tmp = None


class ServedTest(unittest.TestCase):
    """A test case class with one real server of its own: each test runs
    with REWARDD_ADDR naming it, the client's other REWARDD_* settings
    unset, and the client's state reset before and after."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.addClassCleanup(cls.server.stop)

    def setUp(self):
        env = mock.patch.dict(os.environ, {"REWARDD_ADDR": self.server.grpc_addr})
        env.start()
        for var in ("REWARDD_TOKEN", "REWARDD_FINGERPRINT", "REWARDD_ON_ERROR", "REWARDD_TIMEOUT", "REWARDD_MAX_ATTEMPTS"):
            os.environ.pop(var, None)
        self.addCleanup(env.stop)
        rewardd_client.reset()
        self.addCleanup(rewardd_client.reset)


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        got = dict(_LABEL.findall(m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


def trl_batch(seed: int, prompts: int = 4, generations: int = 4) -> dict[str, Any]:
    """A GSM8K-shaped batch as TRL hands it to reward functions: each prompt
    repeated `generations` times, an `answer` column (a plain number, a
    `#### n` solution, or None), a `level` column of ints."""
    rng = random.Random(seed)
    inputs = []
    for p in range(prompts):
        a = rng.randint(1, 200)
        ref: Any = None if p % 4 == 3 else rng.choice([str(a), f"Work it out.\n#### {a}", a])
        for _ in range(generations):
            guess = a if rng.random() < 0.5 else a + rng.randint(1, 3)
            completion = rng.choice(
                [
                    f"<think>{a - 1} + 1</think><answer>{guess}</answer>",
                    f"<think>Step 1: add.\nStep 2: carry.\nStep 3: done.</think>\n<answer>{guess}</answer>",
                    f"The answer is \\boxed{{{guess}}}.",
                    f"First, think. Next, compute.\n#### {guess}",
                    "I do not know.",
                    f"<answer>{guess}</answer><answer>{guess}</answer>",
                ]
            )
            inputs.append({"prompt": f"Question {seed}-{p}: what is {a - 1} + 1?", "completion": completion, "answer": ref, "level": p % 3})
    return {"inputs": inputs}


def direct_score(grpc_addr: str, rows: list[dict[str, Any]], functions: list[str]):
    """Scores rows with a bare gRPC stub: the reference the client must match.
    Returns {function: [value or None]}."""
    import grpc

    from rewardd_client.proto import reward_pb2, reward_pb2_grpc

    req = reward_pb2.ScoreRequest(functions=functions)
    for row in rows:
        r = req.rollouts.add(prompt=row["prompt"], completion=row["completion"])
        fields = {k: v for k, v in row.items() if k not in ("prompt", "completion") and v is not None}
        if fields:
            r.fields.update(fields)
    with grpc.insecure_channel(grpc_addr) as ch:
        resp = reward_pb2_grpc.RewardServiceStub(ch).Score(req, timeout=30)
    out = {}
    for fs in resp.functions:
        out[fs.name] = [v if s == reward_pb2.SCORE_STATUS_OK else None for v, s in zip(fs.values, fs.status)]
    return out
