"""Two servers on loopback, one SIGKILLed mid-run: no batch is lost. One
server restarted: the call in between waits for it."""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
import unittest

import _support  # noqa: F401
from _support import Server, trl_batch

from rewardd_client import Client, RewardFunctions

BATCHES = 200
KILL_AFTER = 60


def run(rf: RewardFunctions, batches, on_batch=None):
    """Scores every batch as TRL would (accuracy, then format), returning the values."""
    funcs = [rf.trl("accuracy"), rf.trl("format")]
    out = []
    for i, rows in enumerate(batches):
        kw = dict(
            prompts=[r["prompt"] for r in rows],
            completions=[r["completion"] for r in rows],
            answer=[r["answer"] for r in rows],
            level=[r["level"] for r in rows],
        )
        out.append([[math.nan if v is None else v for v in f(**kw)] for f in funcs])
        if on_batch is not None:
            on_batch(i)
    return out


def same(a, b):
    return all(
        len(x) == len(y) and all((u == v) or (math.isnan(u) and math.isnan(v)) for u, v in zip(x, y))
        for fa, fb in zip(a, b)
        for x, y in zip(fa, fb)
    ) and len(a) == len(b)


class FailoverTest(unittest.TestCase):
    def test_kill_one_of_two_servers_mid_run(self):
        batches = [trl_batch(seed=1000 + i, prompts=8, generations=8)["inputs"] for i in range(BATCHES)]

        # The reference: one server alone.
        solo = Server()
        self.addCleanup(solo.stop)
        ref_rf = RewardFunctions(lambda: Client(addr=solo.grpc_addr))
        self.addCleanup(ref_rf.reset)
        want = run(ref_rf, batches)
        ref_rf.reset()  # close the connection first: an idle gRPC Python channel is slow to see GOAWAY
        solo.stop()

        a, b = Server(), Server()
        self.addCleanup(a.stop)
        self.addCleanup(b.stop)
        rf = RewardFunctions(lambda: Client(addr=f"{a.grpc_addr},{b.grpc_addr}", timeout=20))
        self.addCleanup(rf.reset)

        # SIGKILL server a from another thread while the main thread keeps
        # scoring, so the kill lands wherever the run happens to be (often in
        # the middle of an RPC to a).
        reached, killed = threading.Event(), threading.Event()
        served_by_a = []

        def killer():
            reached.wait(60)
            served_by_a.append(a.score_ok())
            a.kill()
            killed.set()

        t = threading.Thread(target=killer, daemon=True)
        t.start()
        after_kill = []

        def on_batch(i):
            if i == KILL_AFTER:
                reached.set()
            if killed.is_set():
                after_kill.append(i)

        with self.assertLogs("rewardd_client", logging.INFO) as logs:
            logging.getLogger("rewardd_client").info("start")  # assertLogs needs one record
            got = run(rf, batches, on_batch)
        t.join(10)

        self.assertEqual(len(got), BATCHES)
        self.assertTrue(same(got, want), "results differ from the single-server run")
        self.assertEqual(a.proc.returncode, -9)
        self.assertGreater(served_by_a[0], 0, "round robin never used server a before the kill")
        self.assertGreater(len(after_kill), 20, "the kill did not happen mid-run")
        # b scored every batch finished after the kill (but perhaps the one in
        # flight when it landed, which a may have answered just before).
        self.assertGreaterEqual(b.score_ok(), len(after_kill) - 1)
        retries = [r for r in logs.output if "retry" in r]
        print(f"\n  failover: a scored {served_by_a[0]:.0f} batches before SIGKILL, b {b.score_ok():.0f}; {len(retries)} retries", flush=True)

    def test_restart_of_the_only_server(self):
        with socket.socket() as s:  # a free loopback port for both lives of the server
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        addr = f"127.0.0.1:{port}"
        first = Server("--grpc-addr", addr)
        self.addCleanup(first.stop)
        rf = RewardFunctions(lambda: Client(addr=addr))
        self.addCleanup(rf.reset)
        acc = rf.trl("accuracy")
        kw = dict(prompts=["q", "q"], completions=["<answer>3</answer>", "<answer>4</answer>"], answer=["3", "3"])
        self.assertEqual(acc(**kw), [1.0, 0.0])

        first.kill()
        second = []

        def restart():
            time.sleep(1.5)
            second.append(Server("--grpc-addr", addr))

        t = threading.Thread(target=restart, daemon=True)
        t.start()
        t0 = time.monotonic()
        kw["answer"] = ["4", "4"]  # another batch: not in the cache
        self.assertEqual(acc(**kw), [0.0, 1.0])
        waited = time.monotonic() - t0
        t.join(30)
        self.addCleanup(second[0].stop)
        self.assertGreater(waited, 1.0)
        self.assertLess(waited, 10.0)  # a retry soon after the restart got through
        self.assertEqual(second[0].score_ok(), 1)
        rf.reset()


if __name__ == "__main__":
    unittest.main()
