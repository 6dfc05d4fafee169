"""Three servers on loopback, 10,000 batches from clients given all three
addresses. One server SIGKILLed in the middle; in a second run one server
SIGKILLed and a new process started on its port while several clients keep
scoring. Every batch gets exactly one complete answer, equal to a
single-server run of the same batches, and the restarted server is used
again.

The figures (counts, retries, wall times) are printed; RELIABILITY.md quotes
them.
"""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
import unittest
from typing import Callable, Sequence

import _support  # noqa: F401
from _support import Server, trl_batch

from rewardd_client import Client, Status
from rewardd_client import _rows
from rewardd_client.client import ScoreResult

BATCHES = 10_000
PROMPTS, GENERATIONS = 2, 4  # 8 rollouts a batch, scored by every served function
KILL_AT = BATCHES // 2  # batches answered when the SIGKILL lands
RESTART_KILL_AT = 2_000  # the restart run: SIGKILL here...
RESTART_AFTER = 500  # ...and start the new process once this many more are answered
THREADS = 4  # scoring threads: RPCs in flight when the SIGKILL lands
WAIT = 120.0  # bound on every wait in this file (seconds)


def make_batches() -> list[_rows.Batch]:
    out = []
    for i in range(BATCHES):
        rows = trl_batch(seed=70_000 + i, prompts=PROMPTS, generations=GENERATIONS)["inputs"]
        out.append(
            _rows.make_batch(
                [r["prompt"] for r in rows],
                [r["completion"] for r in rows],
                {"answer": [r["answer"] for r in rows], "level": [r["level"] for r in rows]},
            )
        )
    return out


def digest(res: ScoreResult) -> tuple:
    """What must equal across runs: the echoed batch id (a hash of the
    rollouts sent) and every function's values and statuses."""
    return (
        res.batch_id,
        tuple(
            (name, tuple(None if math.isnan(v) else v for v in fr.values), tuple(int(s) for s in fr.status))
            for name, fr in res.functions.items()
        ),
    )


class Progress:
    """Counts answered batches and calls in flight; other threads wait for a count."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.done = 0
        self.inflight = 0

    def begin(self) -> None:
        with self._cond:
            self.inflight += 1

    def add(self) -> None:
        with self._cond:
            self.inflight -= 1
            self.done += 1
            self._cond.notify_all()

    def wait_for(self, n: int, timeout: float = WAIT) -> int:
        with self._cond:
            self._cond.wait_for(lambda: self.done >= n, timeout)
            return self.done


def score_all(clients: Sequence[Client], batches: list[_rows.Batch], progress: Progress, functions: Sequence[str]):
    """Scores every batch once from THREADS threads, thread k through
    clients[k % len(clients)]. Returns (answers, errors): answers[i] lists
    every answer received for batch i."""
    answers: list[list[ScoreResult]] = [[] for _ in batches]
    errors: list[tuple[int, BaseException]] = []
    lock = threading.Lock()
    nxt = [0]

    def worker(client: Client) -> None:
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(batches):
                return
            progress.begin()
            try:
                res = client.score_batch(batches[i], functions)
            except BaseException as err:  # noqa: BLE001 - recorded, the test fails on it
                with lock:
                    errors.append((i, err))
                progress.add()
                continue
            answers[i].append(res)
            progress.add()

    threads = [threading.Thread(target=worker, args=(clients[k % len(clients)],), daemon=True) for k in range(THREADS)]
    for t in threads:
        t.start()
    end = time.monotonic() + WAIT
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    if any(t.is_alive() for t in threads):
        raise AssertionError(f"scoring did not finish within {WAIT:.0f} s")
    return answers, errors


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThreeReplicasTest(unittest.TestCase):
    batches: list[_rows.Batch]
    want: list[tuple]
    functions: tuple[str, ...]

    @classmethod
    def setUpClass(cls) -> None:
        t0 = time.monotonic()
        cls.batches = make_batches()
        solo = Server()
        try:
            with Client(addr=solo.grpc_addr, timeout=20) as c:
                cls.functions = tuple(f.name for f in c.list_functions().functions)
                t1 = time.monotonic()
                answers, errors = score_all([c], cls.batches, Progress(), cls.functions)
                t2 = time.monotonic()
        finally:
            solo.stop()
        if errors or any(len(a) != 1 for a in answers):
            raise AssertionError(f"the single-server reference run failed: {errors[:3]}")
        cls.want = [digest(a[0]) for a in answers]
        if len({w[0] for w in cls.want}) != BATCHES:  # distinct batches: an answer paired with the wrong batch shows
            raise AssertionError("the batches are not all distinct")
        print(
            f"\n  reference: {BATCHES} batches x {PROMPTS * GENERATIONS} rollouts x {len(cls.functions)} functions "
            f"on one server in {t2 - t1:.1f} s (batches made in {t1 - t0:.1f} s)",
            flush=True,
        )

    def check_answers(self, answers: list[list[ScoreResult]], errors: list) -> None:
        """Every batch: exactly one answer, complete, equal to the reference."""
        self.assertEqual(errors[:3], [], f"{len(errors)} batches failed")
        counts = [len(a) for a in answers]
        self.assertEqual(counts.count(1), BATCHES, f"answers per batch: {sorted(set(counts))}")
        n = PROMPTS * GENERATIONS
        for i, (a,) in enumerate(answers):
            self.assertEqual(tuple(a.functions), self.functions, f"batch {i}")
            for fr in a.functions.values():
                self.assertEqual((len(fr.values), len(fr.status)), (n, n), f"batch {i} {fr.name}")
                self.assertNotIn(Status.UNSPECIFIED, fr.status, f"batch {i} {fr.name}")
        differ = [i for i, (a,) in enumerate(answers) if digest(a) != self.want[i]]
        self.assertEqual(differ[:5], [], f"{len(differ)} batches differ from the single-server run")

    def run_logged(self, fn: Callable[[], tuple]) -> tuple[tuple, int]:
        """fn's result and the number of retries the client logged meanwhile."""
        with self.assertLogs("rewardd_client", logging.INFO) as logs:
            logging.getLogger("rewardd_client").info("start")  # assertLogs needs one record
            out = fn()
        return out, sum("retry" in r for r in logs.output)

    def test_kill_one_of_three_during_10000_batches(self):
        servers = [Server() for _ in range(3)]
        for s in servers:
            self.addCleanup(s.stop)
        a, b, c = servers
        client = Client(addr=",".join(s.grpc_addr for s in servers), timeout=20)
        self.addCleanup(client.close)
        progress = Progress()
        at_kill: dict[str, float] = {}

        def killer() -> None:
            # SIGKILL b from its own thread once half the batches are answered,
            # with THREADS calls in flight (some of them on b).
            progress.wait_for(KILL_AT)
            at_kill.update(a=a.score_ok(), b=b.score_ok(), c=c.score_ok())
            at_kill["inflight"] = progress.inflight
            b.kill()
            at_kill["done"] = progress.done

        kt = threading.Thread(target=killer, daemon=True)
        kt.start()
        t0 = time.monotonic()
        (answers, errors), retries = self.run_logged(lambda: score_all([client], self.batches, progress, self.functions))
        wall = time.monotonic() - t0
        kt.join(WAIT)
        self.assertFalse(kt.is_alive())

        self.check_answers(answers, errors)
        self.assertEqual(b.proc.returncode, -9)
        self.assertTrue(KILL_AT <= at_kill["done"] < KILL_AT + 2_000, f"SIGKILL landed after {at_kill['done']} batches")
        self.assertGreater(at_kill["b"], 1_000, "round robin hardly used b before the kill")
        fa, fc = a.score_ok(), c.score_ok()
        # The two survivors took b's share: each answered more than a third
        # of the batches after the kill.
        after = BATCHES - at_kill["done"]
        self.assertGreater(fa - at_kill["a"], after / 3)
        self.assertGreater(fc - at_kill["c"], after / 3)
        # Server side: nothing scored twice but the calls in flight on b.
        self.assertLessEqual(fa + fc + at_kill["b"], BATCHES + THREADS)
        print(
            f"\n  kill -9 of 1 of 3: {BATCHES} batches, {BATCHES} answered once each, 0 lost, all equal the reference; "
            f"SIGKILL after {at_kill['done']:.0f} with {at_kill['inflight']:.0f} calls in flight; scored by a {fa:.0f}, b {at_kill['b']:.0f} (read just before SIGKILL), "
            f"c {fc:.0f}; {retries} retries; {wall:.1f} s",
            flush=True,
        )

    def test_restart_one_of_three_under_load(self):
        port = free_port()
        addr_b = f"127.0.0.1:{port}"
        a, b, c = Server(), Server("--grpc-addr", addr_b), Server()
        servers = [a, b, c]
        for s in servers:
            self.addCleanup(s.stop)
        # Several clients, as several trainer processes would be: each its own
        # channel, each given all three addresses.
        addrs = ",".join(s.grpc_addr for s in servers)
        clients = [Client(addr=addrs, timeout=20) for _ in range(THREADS)]
        for cl in clients:
            self.addCleanup(cl.close)
        progress = Progress()
        ev: dict[str, float] = {}
        b2: list[Server] = []

        def restarter() -> None:
            progress.wait_for(RESTART_KILL_AT)
            ev["b_before"] = b.score_ok()
            ev["inflight"] = progress.inflight
            b.kill()
            ev["killed_at"], ev["t_kill"] = progress.done, time.monotonic()
            progress.wait_for(ev["killed_at"] + RESTART_AFTER)
            ev["restart_at"] = progress.done
            new = Server("--grpc-addr", addr_b)
            b2.append(new)
            ev["t_up"] = time.monotonic()  # logged "serving"
            ev["up_at"] = progress.done
            # Poll the new process until it has answered a Score call (bounded).
            end = time.monotonic() + 30
            while time.monotonic() < end and progress.done < BATCHES:
                if new.score_ok() > 0:
                    ev["t_used"], ev["used_at"] = time.monotonic(), progress.done
                    return
                time.sleep(0.02)

        rt = threading.Thread(target=restarter, daemon=True)
        rt.start()
        t0 = time.monotonic()
        (answers, errors), retries = self.run_logged(lambda: score_all(clients, self.batches, progress, self.functions))
        wall = time.monotonic() - t0
        rt.join(WAIT)
        self.assertFalse(rt.is_alive())
        self.assertEqual(len(b2), 1, "the new process did not start")
        self.addCleanup(b2[0].stop)

        self.check_answers(answers, errors)
        self.assertEqual(b.proc.returncode, -9)
        self.assertEqual(b2[0].grpc_addr, addr_b)
        self.assertEqual(b2[0].fingerprint, a.fingerprint)
        self.assertIn("t_used", ev, "the restarted server was not used again")
        scored_b2 = b2[0].score_ok()
        after_use = BATCHES - ev["used_at"]
        # Used again by the clients, not just once: at least a sixth of the
        # batches answered after it was first used (a third when every
        # client's round robin has it back).
        self.assertGreater(after_use, 1_000, "too few batches left after the restart to tell")
        self.assertGreater(scored_b2, after_use / 6)
        fa, fc = a.score_ok(), c.score_ok()
        print(
            f"\n  restart under load, {THREADS} clients: {BATCHES} batches, {BATCHES} answered once each, 0 lost, all equal "
            f"the reference; SIGKILL after {ev['killed_at']:.0f} with {ev['inflight']:.0f} calls in flight, new process serving after {ev['up_at']:.0f} "
            f"({ev['t_up'] - ev['t_kill']:.2f} s after the kill), first answer from it {ev['t_used'] - ev['t_up']:.2f} s "
            f"after it logged serving; scored by a {fa:.0f}, b {ev['b_before']:.0f} + restarted b {scored_b2:.0f}, "
            f"c {fc:.0f}; {retries} retries; {wall:.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    unittest.main()
