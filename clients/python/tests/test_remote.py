"""rewardd_client.remote against a real `rewardd serve` (the embedded default config)."""

from __future__ import annotations

import inspect
import math
import os
import pickle
import types
import unittest
import warnings

import _support  # puts this tree's rewardd_client first on sys.path
from _support import Server, direct_score, trl_batch

import rewardd_client
from rewardd_client import Client, RewardFunctions, remote

FUNCTIONS = ["accuracy", "format", "tag_count", "reasoning_steps"]


def call_like_trl(reward_funcs, inputs, completions=None, log_extra=None):
    """What TRL's GRPOTrainer._calculate_rewards does with custom reward
    functions (trl/trainer/grpo_trainer.py): every column of the inputs but
    prompt/completion/completion_ids becomes a keyword argument, plus
    trainer_state, log_extra and log_metric; each function is called in turn
    with the same arguments; None becomes NaN."""
    prompts = [x["prompt"] for x in inputs]
    if completions is None:
        completions = [x["completion"] for x in inputs]
    completion_ids_list = [[ord(ch) for ch in x["completion"]] for x in inputs]
    keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
    reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
    reward_kwargs["trainer_state"] = types.SimpleNamespace(global_step=3, epoch=0.1)
    reward_kwargs["log_extra"] = log_extra or (lambda *a, **k: None)
    reward_kwargs["log_metric"] = lambda *a, **k: None
    rewards_per_func = []
    for reward_func in reward_funcs:
        output_reward_func = reward_func(
            prompts=prompts, completions=completions, completion_ids=completion_ids_list, **reward_kwargs
        )
        rewards_per_func.append([reward if reward is not None else math.nan for reward in output_reward_func])
    return rewards_per_func


def nan_to_none(xs):
    return [None if isinstance(x, float) and math.isnan(x) else x for x in xs]


class RemoteTest(_support.ServedTest):
    def test_values_match_a_direct_score(self):
        rows = trl_batch(seed=1, prompts=12, generations=4)["inputs"]
        want = direct_score(self.server.grpc_addr, rows, FUNCTIONS)
        fns = [getattr(remote, name) for name in FUNCTIONS]
        got = call_like_trl(fns, rows)
        for name, values in zip(FUNCTIONS, got):
            self.assertEqual(nan_to_none(values), want[name], name)
        # The data exercises all outcomes: right, wrong, and not applicable.
        acc = want["accuracy"]
        self.assertIn(1.0, acc)
        self.assertIn(0.0, acc)
        self.assertIn(None, acc)

    def test_reasons_go_to_log_extra(self):
        # Issue 19, item 1: a TRL user sees why each completion scored what
        # it did in the completions table (TRL's log_extra, one column per
        # function), an OK 0's reason included.
        rows = [
            {"prompt": "q1", "completion": "<answer>42</answer>", "answer": "42"},
            {"prompt": "q1", "completion": "I do not know.", "answer": "42"},
            {"prompt": "q1", "completion": "<answer>42</answer>", "answer": None},
        ]
        logged = {}
        got = call_like_trl([remote.accuracy, remote.format], rows, log_extra=lambda column, values: logged.setdefault(column, values))
        self.assertEqual(nan_to_none(got[0]), [1.0, 0.0, None])
        self.assertEqual(sorted(logged), ["accuracy_reason", "format_reason"])
        acc = logged["accuracy_reason"]
        self.assertEqual(acc[:2], ["", "no answer found"])
        self.assertTrue(acc[2].startswith("not applicable: "), acc[2])
        self.assertTrue(all(logged["format_reason"][:2]), logged["format_reason"])  # both 0: not <think>…</think><answer>…</answer>

    def test_both_wire_forms_match_a_direct_score(self):
        # The prompt-once form (each prompt once, answer and level as prompt
        # columns, a per-rollout column) and the rows form score alike.
        rows = trl_batch(seed=3, prompts=16, generations=4)["inputs"]
        for i, row in enumerate(rows):
            row["tokens"] = i % 7
        want = direct_score(self.server.grpc_addr, rows, FUNCTIONS)
        columns = {k: [r[k] for r in rows] for k in ("answer", "level", "tokens")}
        for wire in ("columns", "rows"):
            with rewardd_client.Client(addr=self.server.grpc_addr, wire=wire) as c:
                got = c.score([r["prompt"] for r in rows], [r["completion"] for r in rows], columns, FUNCTIONS)
            for name in FUNCTIONS:
                self.assertEqual(got.functions[name].rewards(), want[name], f"{wire}: {name}")

    def test_trl_loop_costs_one_rpc_per_batch(self):
        funcs = [remote.accuracy, remote.format, remote.tag_count]
        before = self.server.score_ok()
        batches = [trl_batch(seed=100 + i)["inputs"] for i in range(5)]
        for rows in batches:
            got = call_like_trl(funcs, rows)
            want = direct_score(self.server.grpc_addr, rows, ["accuracy", "format", "tag_count"])
            for fn, values in zip(funcs, got):
                self.assertEqual(nan_to_none(values), want[fn.__name__])
        # Each batch: one Score from the client, one from direct_score.
        self.assertEqual(self.server.score_ok() - before, 2 * len(batches))

    def test_ok_reasons_only_when_someone_reads_them(self):
        # Without log_extra the server leaves out the reasons of OK scores
        # (omit_ok_reasons); a function called with log_extra on a batch
        # cached without them has it scored again, with them.
        rf = RewardFunctions(lambda: Client(addr=self.server.grpc_addr))
        self.addCleanup(rf.reset)
        acc, fmt = rf.trl("accuracy"), rf.trl("format")
        kw = dict(prompts=["q"] * 3, completions=["<answer>1</answer>", "I do not know.", "<answer>1</answer>"], answer=["1", "1", None])
        before = self.server.score_ok()
        self.assertEqual(acc(**kw), [1.0, 0.0, None])
        self.assertEqual(self.server.score_ok() - before, 1)
        logged = {}
        self.assertEqual(fmt(**kw, log_extra=logged.__setitem__), [0.0, 0.0, 0.0])
        self.assertEqual(self.server.score_ok() - before, 2)
        self.assertTrue(all(logged["format_reason"]), logged)  # each an OK 0 with its reason

        with Client(addr=self.server.grpc_addr) as c:
            full = c.score(kw["prompts"], kw["completions"], {"answer": kw["answer"]}, ["accuracy"]).functions["accuracy"]
            lean = c.score(kw["prompts"], kw["completions"], {"answer": kw["answer"]}, ["accuracy"], ok_reasons=False).functions["accuracy"]
        self.assertEqual(full.reasons()[1], "no answer found")
        self.assertEqual(lean.reasons()[1], "")
        self.assertEqual(lean.reasons()[2], full.reasons()[2])  # NOT_APPLICABLE keeps its reason
        self.assertTrue(lean.reasons()[2].startswith("not applicable: "), lean.reasons())
        self.assertEqual((lean.rewards(), lean.status), (full.rewards(), full.status))

    def test_same_content_later_is_scored_again(self):
        rows = trl_batch(seed=7)["inputs"]
        before = self.server.score_ok()
        first = call_like_trl([remote.accuracy, remote.format], rows)
        again = call_like_trl([remote.accuracy, remote.format], rows)
        self.assertEqual(nan_to_none(first[0]), nan_to_none(again[0]))
        self.assertEqual(self.server.score_ok() - before, 2)

    def test_the_cache_compares_content(self):
        rf = RewardFunctions(lambda: Client(addr=self.server.grpc_addr))
        self.addCleanup(rf.reset)
        acc, fmt = rf.trl("accuracy"), rf.trl("format")
        kw = dict(prompts=["q", "q"], completions=["<answer>1</answer>", "1"], answer=["1", "1"])
        before = self.server.score_ok()
        self.assertEqual(acc(**kw), [1.0, 1.0])
        self.assertEqual(fmt(**{k: list(v) for k, v in kw.items()}), [0.0, 0.0])  # equal copies: from the cache
        self.assertEqual(self.server.score_ok() - before, 1)
        self.assertEqual(acc(**kw), [1.0, 1.0])
        self.assertEqual(fmt(**dict(kw, answer=["1", True])), [0.0, 0.0])  # True is not "1": scored again
        self.assertEqual(self.server.score_ok() - before, 3)

    def test_functions_look_like_trl_and_axolotl_want(self):
        f = remote.accuracy
        self.assertIs(f, remote.accuracy)
        self.assertEqual(f.__name__, "accuracy")  # TRL logs rewards/<__name__>
        # Axolotl's get_reward_func: at least two parameters.
        self.assertGreaterEqual(len(inspect.signature(f).parameters), 2)
        self.assertIs(pickle.loads(pickle.dumps(f)), f)
        import importlib

        mod = importlib.import_module("rewardd_client.remote")  # as Axolotl resolves "rewardd_client.remote.accuracy"
        self.assertIs(getattr(mod, "accuracy"), f)
        with self.assertRaises(AttributeError):
            remote.__wrapped__  # noqa: B018

    def test_chat_format(self):
        rows = trl_batch(seed=3)["inputs"]
        chat_prompts = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": r["prompt"]}] for r in rows]
        chat_completions = [[{"role": "assistant", "content": r["completion"]}] for r in rows]
        plain = call_like_trl([remote.accuracy, remote.format], rows)
        chat_rows = [dict(r, prompt=p) for r, p in zip(rows, chat_prompts)]
        chat = call_like_trl([remote.accuracy, remote.format], chat_rows, completions=chat_completions)
        self.assertEqual([nan_to_none(v) for v in chat], [nan_to_none(v) for v in plain])
        # Content as a list of parts, as multimodal chat templates write it.
        parts = [[{"role": "assistant", "content": [{"type": "text", "text": r["completion"]}]}] for r in rows]
        self.assertEqual(nan_to_none(remote.accuracy(prompts=chat_prompts, completions=parts, answer=[r["answer"] for r in rows])), nan_to_none(plain[0]))

    def test_fingerprint_mismatch_names_both(self):
        served = Client(addr=self.server.grpc_addr).list_functions().config_fingerprint
        self.assertTrue(served.startswith("sha256:"))
        os.environ["REWARDD_FINGERPRINT"] = "sha256:0000expected"
        rewardd_client.reset()
        with self.assertRaises(rewardd_client.FingerprintMismatchError) as ctx:
            remote.accuracy(prompts=["q"], completions=["<answer>1</answer>"], answer=["1"])
        self.assertIn("sha256:0000expected", str(ctx.exception))
        self.assertIn(served, str(ctx.exception))
        os.environ["REWARDD_FINGERPRINT"] = served
        rewardd_client.reset()
        self.assertEqual(remote.accuracy(prompts=["q"], completions=["<answer>1</answer>"], answer=["1"]), [1.0])

    def _error_batch(self):
        # A completion over limits.max_completion_bytes (1 MiB) gets ERROR in
        # every function; the rest of the batch is scored.
        big = "x" * (1 << 20) + "<answer>4</answer>"
        return dict(prompts=["q"] * 3, completions=["<answer>4</answer>", big, "<answer>5</answer>"], answer=["4", "4", "4"])

    def test_on_error_warn(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = remote.accuracy(**self._error_batch())
        self.assertEqual(got, [1.0, None, 0.0])
        msgs = [str(w.message) for w in caught if issubclass(w.category, rewardd_client.RewarddWarning)]
        self.assertEqual(len(msgs), 1, msgs)
        self.assertIn("1 of 3 rollouts got ERROR", msgs[0])
        self.assertIn("row 1", msgs[0])
        self.assertIn("max_completion_bytes", msgs[0])

    def test_on_error_raise(self):
        os.environ["REWARDD_ON_ERROR"] = "raise"
        rewardd_client.reset()
        with self.assertRaises(rewardd_client.ScoreError) as ctx:
            remote.accuracy(**self._error_batch())
        err = ctx.exception
        self.assertEqual((err.function, err.row), ("accuracy", 1))
        self.assertIn("max_completion_bytes", err.reason)
        self.assertIn("'accuracy'", str(err))
        self.assertIn("row 1", str(err))

    def test_columns(self):
        import numpy as np

        n = 3
        with self.assertWarnsRegex(rewardd_client.RewarddWarning, "column 'image' is not sent"):
            got = remote.accuracy(
                prompts=["q"] * n,
                completions=["<answer>12345678901234567890</answer>", "<answer>7</answer>", "<answer>8</answer>"],
                answer=[12345678901234567890, np.int64(7), np.array([9, 8])],  # big int, numpy scalar, acceptable answers
                image=[object()] * n,  # not JSON: dropped, with a warning
                trainer_state=object(),
                num_generations=4,  # not a column: ignored
            )
        self.assertEqual(got, [1.0, 1.0, 1.0])

    def test_unknown_function_lists_served(self):
        with self.assertRaises(rewardd_client.RewarddError) as ctx:
            getattr(remote, "no-such-fn")(prompts=["q"], completions=["a"])
        self.assertIn("no-such-fn", str(ctx.exception))
        self.assertIn("accuracy", str(ctx.exception))

    def test_only_requested_functions_are_scored(self):
        # A RewardFunctions of its own: only the functions made from it count.
        rf = RewardFunctions(lambda: Client(addr=self.server.grpc_addr))
        self.addCleanup(rf.reset)
        acc = rf.trl("accuracy")
        before = self.server.counter("rewardd_function_outcomes_total", function="format")
        self.assertEqual(acc(prompts=["q"], completions=["<answer>2</answer>"], answer=["2"]), [1.0])
        self.assertEqual(self.server.counter("rewardd_function_outcomes_total", function="format"), before)


class AuthTest(unittest.TestCase):
    def test_bearer_token_against_a_server_that_requires_one(self):
        import tempfile

        import grpc

        with tempfile.NamedTemporaryFile("w", suffix=".token", delete=False) as f:
            f.write("s3cret-token\n")
        self.addCleanup(os.unlink, f.name)
        server = Server("--auth-token-file", f.name)
        self.addCleanup(server.stop)
        rf = RewardFunctions(lambda: Client(addr=server.grpc_addr, token="s3cret-token"))
        self.addCleanup(rf.reset)
        self.assertEqual(rf.trl("accuracy")(prompts=["q"], completions=["<answer>2</answer>"], answer=["2"]), [1.0])

        for token in (None, "wrong"):
            with self.subTest(token=token):
                c = Client(addr=server.grpc_addr, token=token)
                self.addCleanup(c.close)
                with self.assertRaises(rewardd_client.RPCError) as ctx:
                    c.score(["q"], ["a"])
                self.assertEqual(ctx.exception.code, grpc.StatusCode.UNAUTHENTICATED)
                self.assertEqual(ctx.exception.attempts, 1)  # not retried


class SettingsTest(unittest.TestCase):
    def test_env(self):
        s = rewardd_client.Settings.from_env(
            {"REWARDD_ADDR": " 127.0.0.1:1 ", "REWARDD_TIMEOUT": "2.5", "REWARDD_ON_ERROR": "RAISE", "REWARDD_TOKEN": "t", "REWARDD_FINGERPRINT": "sha256:x"}
        )
        self.assertEqual((s.addr, s.timeout, s.on_error, s.token, s.fingerprint), ("127.0.0.1:1", 2.5, "raise", "t", "sha256:x"))
        self.assertEqual(rewardd_client.Settings.from_env({}).addr, "127.0.0.1:50051")

    def test_bad_env_names_the_variable(self):
        for env, var in (
            ({"REWARDD_TIMEOUT": "soon"}, "REWARDD_TIMEOUT"),
            ({"REWARDD_TIMEOUT": "0"}, "REWARDD_TIMEOUT"),
            ({"REWARDD_ON_ERROR": "ignore"}, "REWARDD_ON_ERROR"),
            ({"REWARDD_MAX_ATTEMPTS": "0"}, "REWARDD_MAX_ATTEMPTS"),
            ({"REWARDD_ADDR": "127.0.0.1"}, "REWARDD_ADDR"),
            ({"REWARDD_ADDR": "127.0.0.1:1,[::1]:2"}, "REWARDD_ADDR"),
        ):
            with self.subTest(env=env):
                with self.assertRaises(rewardd_client.ConfigError) as ctx:
                    rewardd_client.Settings.from_env(env)
                self.assertIn(var, str(ctx.exception))

    def test_targets(self):
        from rewardd_client.client import grpc_target

        self.assertEqual(grpc_target("127.0.0.1:5"), "127.0.0.1:5")
        self.assertEqual(grpc_target("dns:///rewardd.default.svc:50051"), "dns:///rewardd.default.svc:50051")
        self.assertEqual(grpc_target("127.0.0.1:5, 127.0.0.2:6"), "ipv4:127.0.0.1:5,127.0.0.2:6")
        self.assertEqual(grpc_target("[::1]:5,[::1]:6"), "ipv6:[::1]:5,[::1]:6")
        self.assertEqual(grpc_target("localhost:5,127.0.0.1:6"), "ipv4:127.0.0.1:5,127.0.0.1:6")


if __name__ == "__main__":
    unittest.main()
