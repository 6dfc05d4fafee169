"""Client transport behaviour against an in-process gRPC server on loopback
that answers what a test tells it to: the bearer token, retries, deadlines."""

from __future__ import annotations

import threading
import time
import unittest
from concurrent import futures

import grpc

import _support  # noqa: F401

from rewardd_client import Client, FunctionResult, RPCError, Status
from rewardd_client.proto import reward_pb2, reward_pb2_grpc


class Scripted(reward_pb2_grpc.RewardServiceServicer):
    """Fails the first len(failures) Score calls with the given codes, then
    scores every rollout 1.0 with function "one"."""

    def __init__(self):
        self.failures: list[grpc.StatusCode] = []
        self.calls = 0
        self.metadata: list[dict[str, str]] = []
        self.delay = 0.0
        self.lock = threading.Lock()
        # The reasons of the answer (rollout index: reason), sent as the
        # request asks (reasons_as_lists) unless old_server, as a server
        # before that field does: in the map.
        self.reasons: dict[int, str] = {}
        self.old_server = False
        self.requests: list[reward_pb2.ScoreRequest] = []

    def Score(self, request, context):
        with self.lock:
            self.calls += 1
            self.metadata.append(dict(context.invocation_metadata()))
            fail = self.failures.pop(0) if self.failures else None
        if fail is not None:
            context.abort(fail, f"scripted {fail.name}")
        time.sleep(self.delay)
        self.requests.append(request)
        n = len(request.rollouts)
        fs = reward_pb2.FunctionScores(name="one", values=[1.0] * n, status=[reward_pb2.SCORE_STATUS_OK] * n)
        if request.reasons_as_lists and not self.old_server:
            fs.reason_rollouts.extend(sorted(self.reasons))
            fs.reason_texts.extend(self.reasons[i] for i in sorted(self.reasons))
        else:
            fs.reasons.update(self.reasons)
        return reward_pb2.ScoreResponse(batch_id=request.batch_id, config_fingerprint="sha256:scripted", functions=[fs])

    def ListFunctions(self, request, context):
        return reward_pb2.ListFunctionsResponse(functions=[reward_pb2.FunctionInfo(name="one", kind="test")], config_fingerprint="sha256:scripted")


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.servicer = Scripted()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        reward_pb2_grpc.add_RewardServiceServicer_to_server(self.servicer, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.addCleanup(self.server.stop, None)
        self.addr = f"127.0.0.1:{port}"

    def client(self, **kw):
        c = Client(addr=self.addr, backoff=0.01, max_backoff=0.05, **kw)
        self.addCleanup(c.close)
        return c

    def test_bearer_token(self):
        self.client(token="s3cret").score(["q"], ["a"])
        self.assertEqual(self.servicer.metadata[-1].get("authorization"), "Bearer s3cret")
        self.client().score(["q"], ["a"])
        self.assertNotIn("authorization", self.servicer.metadata[-1])

    def test_reasons_as_lists_or_as_the_map(self):
        # The client asks for the reasons as lists and reads them from the
        # map too, as a server before reasons_as_lists sends them.
        self.servicer.reasons = {0: "no answer found", 2: "three steps"}
        for old in (False, True):
            self.servicer.old_server = old
            res = self.client().score(["q"] * 3, ["a", "b", "c"])
            self.assertTrue(self.servicer.requests[-1].reasons_as_lists)
            self.assertEqual(res.functions["one"].errors, {0: "no answer found", 2: "three steps"}, f"old server: {old}")
            self.assertEqual(res.functions["one"].reasons(), ["no answer found", "", "three steps"])

    def test_retries_unavailable_and_resource_exhausted(self):
        self.servicer.failures = [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED]
        res = self.client().score(["q", "q"], ["a", "b"])
        self.assertEqual(res.functions["one"].rewards(), [1.0, 1.0])
        self.assertEqual(res.functions["one"].status, [Status.OK, Status.OK])
        self.assertEqual(self.servicer.calls, 3)

    def test_gives_up_after_max_attempts(self):
        self.servicer.failures = [grpc.StatusCode.UNAVAILABLE] * 10
        with self.assertRaises(RPCError) as ctx:
            self.client(max_attempts=3).score(["q"], ["a"])
        self.assertEqual(ctx.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(ctx.exception.attempts, 3)
        self.assertIn("after 3 attempts", str(ctx.exception))
        self.assertEqual(self.servicer.calls, 3)

    def test_does_not_retry_other_codes(self):
        for code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INTERNAL):
            with self.subTest(code=code):
                self.servicer.calls = 0
                self.servicer.failures = [code]
                with self.assertRaises(RPCError) as ctx:
                    self.client().score(["q"], ["a"])
                self.assertEqual(ctx.exception.code, code)
                self.assertEqual(self.servicer.calls, 1)

    def test_timeout_is_the_deadline_of_an_attempt(self):
        self.servicer.delay = 1.0
        t0 = time.monotonic()
        with self.assertRaises(RPCError) as ctx:
            self.client(timeout=0.2).score(["q"], ["a"])
        self.assertEqual(ctx.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertLess(time.monotonic() - t0, 0.9)
        self.assertEqual(self.servicer.calls, 1)  # a slow server is not retried

    def test_no_server(self):
        self.server.stop(None)
        t0 = time.monotonic()
        with self.assertRaises(RPCError) as ctx:
            self.client(max_attempts=2).score(["q"], ["a"])
        self.assertEqual(ctx.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertLess(time.monotonic() - t0, 10)


class FunctionResultTest(unittest.TestCase):
    """rewards, reasons and error_rows skip their per-rollout loops when
    every status is OK; each must say what the loops say."""

    @staticmethod
    def by_loop(r: FunctionResult):
        rewards = [v if s == Status.OK else None for v, s in zip(r.values, r.status)]
        reasons = []
        for i, s in enumerate(r.status):
            reason = r.errors.get(i, "")
            if s == Status.NOT_APPLICABLE:
                reason = "not applicable: " + reason
            elif s != Status.OK:
                reason = "ERROR: " + reason
            reasons.append(reason)
        errors = [i for i, s in enumerate(r.status) if s not in (Status.OK, Status.NOT_APPLICABLE)]
        return rewards, reasons, errors

    def test_fast_paths_say_what_the_loops_say(self):
        nan = float("nan")
        cases = [
            ([1.0, 0.0, 0.5], [Status.OK] * 3, {}),
            ([1.0, 0.0, 0.5], [Status.OK] * 3, {1: "no answer found", 7: "beyond the batch"}),
            ([1.0, nan, nan, 0.0], [Status.OK, Status.NOT_APPLICABLE, Status.ERROR, Status.OK], {1: "no reference", 2: "timeout", 3: "wrong"}),
            ([nan, nan], [Status.NOT_APPLICABLE, Status.UNSPECIFIED], {}),
            ([], [], {}),
        ]
        for values, status, errors in cases:
            r = FunctionResult("f", values, status, errors)
            with self.subTest(status=status, errors=errors):
                want_rewards, want_reasons, want_errors = self.by_loop(r)
                self.assertEqual(r.rewards(), want_rewards)
                self.assertEqual(r.reasons(), want_reasons)
                self.assertEqual(r.error_rows(), want_errors)
                self.assertIsNot(r.rewards(), r.values)  # a list of the caller's own


if __name__ == "__main__":
    unittest.main()
