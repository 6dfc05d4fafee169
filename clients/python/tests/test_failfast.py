"""Failing fast on the trainer side, against a real `rewardd serve`: a
function name the server does not serve fails when the trainer builds its
list of reward functions, before any generation; a function that applies to
no rollout of a batch (a misnamed column) is reported."""

from __future__ import annotations

import os
import socket
import unittest
import warnings
from unittest import mock

import _support  # noqa: F401
from _support import Server

import rewardd_client
from rewardd_client import Client, RewardFunctions, RewarddWarning, RPCError, UnknownFunctionError, remote


class FailFastTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.addClassCleanup(cls.server.stop)

    def functions(self, addr=None, **kw):
        rf = RewardFunctions(lambda: Client(addr=addr or self.server.grpc_addr, **kw))
        self.addCleanup(rf.reset)
        return rf

    def test_an_unknown_name_fails_when_the_list_is_built(self):
        rf = self.functions()
        before = self.server.score_ok()
        with self.assertRaises(UnknownFunctionError) as ctx:
            [rf.trl("accuracy"), rf.trl("acuracy")]  # as a trainer writes reward_funcs=[…]
        self.assertIsInstance(ctx.exception, AttributeError)
        self.assertIn("'acuracy'", str(ctx.exception))
        self.assertIn("served: accuracy, format", str(ctx.exception))
        with self.assertRaises(UnknownFunctionError):
            rf.hatchery("acuracy")
        self.assertEqual(self.server.score_ok(), before)  # nothing was scored

        # Through the module, as TRL's and Axolotl's configs name them.
        with mock.patch.dict(os.environ, {"REWARDD_ADDR": self.server.grpc_addr}):
            rewardd_client.reset()
            self.addCleanup(rewardd_client.reset)
            self.assertFalse(hasattr(remote, "acuracy"))
            self.assertTrue(callable(remote.format))

    def test_a_server_down_when_the_list_is_built_is_checked_at_the_first_call(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # nobody listens there once closed
        rf = self.functions(addr=f"127.0.0.1:{port}", max_attempts=1)
        with self.assertWarnsRegex(RewarddWarning, "cannot check now .* 'accuracy'"):
            acc = rf.trl("accuracy")
        with self.assertRaises(RPCError):
            acc(prompts=["q"], completions=["<answer>1</answer>"], answer=["1"])

    def test_a_function_that_applies_to_no_rollout_is_reported_once(self):
        acc = self.functions().trl("accuracy")
        batch = dict(prompts=["q", "q"], completions=["<answer>4</answer>", "<answer>5</answer>"], answr=["4", "4"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = acc(**batch)
            again = acc(**batch)
            right = acc(prompts=["q"], completions=["<answer>4</answer>"], answer=["4"])
        self.assertEqual((got, again, right), ([None, None], [None, None], [1.0]))
        msgs = [str(w.message) for w in caught if issubclass(w.category, RewarddWarning)]
        self.assertEqual(len(msgs), 1, msgs)
        self.assertIn("'accuracy' applied to none of the 2 rollouts", msgs[0])
        self.assertIn('no reference in field "answer"', msgs[0])  # the server's reason
        self.assertIn("columns sent: answr", msgs[0])


if __name__ == "__main__":
    unittest.main()
