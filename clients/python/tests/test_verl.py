"""rewardd_client.verl, loaded and called as verl loads and calls a custom
reward function, against a real `rewardd serve` with code execution."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import math
import os
import random
import socket
import unittest
import warnings
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from unittest import mock

import _support  # noqa: F401
from _support import Server

import grpc

import rewardd_client
from rewardd_client import verl
from rewardd_client.proto import reward_pb2, reward_pb2_grpc

CONFIG = """
functions:
  - name: accuracy
    kind: exact_match
    reference_field: answer
    reference_extract: [gsm8k, none]
    extract: [answer_tag, boxed, gsm8k, last_number]
    normalize: [strip, numeric]
  - name: format
    kind: format
    mode: strict
    tags: [think, answer]
  - name: closeness
    kind: similarity
    metric: fuzzy
    reference_field: answer
  - name: tests
    kind: code_exec
    test_style: io
    tests_field: tests
weights: {format: 0.5}
"""
WEIGHTS = {"accuracy": 1.0, "format": 0.5, "closeness": 1.0, "tests": 1.0}
FUNCTIONS = list(WEIGHTS)

# reward_kwargs of the runs below: math rows by accuracy and format, code rows
# by their tests, every other data source by closeness to the ground truth.
REWARD_KWARGS = {
    "functions": {"openai/gsm8k": ["accuracy", "format"], "codecontests": "tests", "*": "closeness"},
    "ground_truth_field": {"codecontests": "tests"},
}
SOURCE_FUNCTIONS = {"openai/gsm8k": ["accuracy", "format"], "codecontests": ["tests"], "textgen": ["closeness"]}
SOURCE_FIELD = {"openai/gsm8k": "answer", "codecontests": "tests", "textgen": "answer"}

DOUBLE = json.dumps({"inputs": ["2\n", "21\n"], "outputs": ["4\n", "42\n"]})  # verl's code ground truth: JSON tests
PROGRAMS = ["```python\nprint(int(input()) * 2)\n```", "```python\nprint(int(input()) + 2)\n```", "print(0)"]  # right, one test of two, wrong


# --- verl's code, transcribed ---------------------------------------------------
# verl/trainer/ppo/reward.py (get_custom_reward_fn), verl/utils/import_utils.py
# (load_module, load_extern_object),
# verl/experimental/reward_loop/reward_manager/naive.py (run_single),
# verl/experimental/reward_loop/reward_loop.py (RewardLoopWorker.compute_score_batch),
# verl/workers/reward_manager/{naive,prime,batch}.py.


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
    merged_kwargs = {**kwargs, **extra_kwargs}
    return raw_fn(*args, **merged_kwargs)


async def _call_with_kwargs_async(raw_fn, extra_kwargs, *args, **kwargs):
    merged_kwargs = {**kwargs, **extra_kwargs}
    return await raw_fn(*args, **merged_kwargs)


def load_module(module_path):
    if module_path.startswith("pkg://"):
        return importlib.import_module(module_path[len("pkg://") :].replace("/", "."))
    spec = importlib.util.spec_from_file_location(f"custom_module_{hash(os.path.abspath(module_path))}", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def get_custom_reward_fn(path, name, reward_kwargs):
    raw_fn = getattr(load_module(path), name)
    reward_kwargs = dict(reward_kwargs)
    if not inspect.iscoroutinefunction(raw_fn):
        return partial(_call_with_kwargs, raw_fn, reward_kwargs)
    return partial(_call_with_kwargs_async, raw_fn, reward_kwargs)


def reward_loop(compute_score, samples, return_exceptions=False):
    """RewardLoopWorker.compute_score_batch over NaiveRewardManager.run_single:
    one task per sample, all gathered; each decodes its response in the
    loop's executor, then awaits compute_score (or runs it in the executor
    when it is not a coroutine function). Returns (reward_score, reward_extra_info)."""
    is_async = inspect.iscoroutinefunction(compute_score)

    async def run_single(sample):
        loop = asyncio.get_running_loop()
        extra_info = dict(sample["extra_info"])
        extra_info["num_turns"] = None
        extra_info["rollout_reward_scores"] = {}
        response_str = await loop.run_in_executor(None, lambda: sample["solution_str"])  # tokenizer.decode
        kw = dict(data_source=sample["data_source"], solution_str=response_str, ground_truth=sample["ground_truth"], extra_info=extra_info)
        if is_async:
            result = await compute_score(**kw)
        else:
            result = await loop.run_in_executor(None, lambda: compute_score(**kw))
        if isinstance(result, dict):
            return result["score"], dict(result)
        return result, {"acc": result}

    async def compute_score_batch():
        tasks = [asyncio.create_task(run_single(s)) for s in samples]
        return await asyncio.gather(*tasks, return_exceptions=return_exceptions)

    return asyncio.run(compute_score_batch())


# --- samples and what they must score ---------------------------------------------


def make_samples(seed, n):
    """verl samples of three data sources in turn: GSM8K-like math (right and
    wrong, formatted or not; extra_info carries the question's own "answer",
    which the ground truth must override), code with JSON tests, and text
    scored by closeness (distinct values, so a mix-up shows; every 7th one
    without a ground truth)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            a = rng.randint(1, 500)
            guess = a if rng.random() < 0.5 else a + rng.randint(1, 9)
            sol = rng.choice([f"<think>{a - 1} + 1</think><answer>{guess}</answer>", f"The answer is \\boxed{{{guess}}}."])
            out.append(dict(data_source="openai/gsm8k", solution_str=sol, ground_truth=str(a), extra_info={"split": "train", "index": i, "answer": "#### 99999"}))
        elif kind == 1 and i % 8 == 1:
            out.append(dict(data_source="codecontests", solution_str=PROGRAMS[(i // 24) % 3], ground_truth=DOUBLE, extra_info={"index": i}))
        else:
            text = "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(20, 60)))
            ref = None if i % 7 == 0 else "".join(c if rng.random() < 0.7 else rng.choice("abcdefgh ") for c in text)
            out.append(dict(data_source="textgen", solution_str=text, ground_truth=ref, extra_info={}))
    return out


def expected(grpc_addr, samples, on_not_applicable=0.0):
    """What each sample must get, from a bare stub: every function on every
    row, then each row's own functions weighted and summed."""
    req = reward_pb2.ScoreRequest(functions=FUNCTIONS)
    for s in samples:
        r = req.rollouts.add(completion=s["solution_str"])
        fields = dict(s["extra_info"])
        fields[SOURCE_FIELD[s["data_source"]]] = s["ground_truth"]
        r.fields.update({k: v for k, v in fields.items() if v is not None})
    with grpc.insecure_channel(grpc_addr) as ch:
        resp = reward_pb2_grpc.RewardServiceStub(ch).Score(req, timeout=60)
    cols = {fs.name: fs for fs in resp.functions}
    out = []
    for i, s in enumerate(samples):
        own = SOURCE_FUNCTIONS[s["data_source"]]
        want = {name: math.nan for name in FUNCTIONS}
        total, any_ok = 0.0, False
        for name in own:
            fs = cols[name]
            assert fs.status[i] != reward_pb2.SCORE_STATUS_ERROR, (i, name, fs.errors.get(i))
            if fs.status[i] == reward_pb2.SCORE_STATUS_OK:
                want[name] = fs.values[i]
                total += WEIGHTS[name] * fs.values[i]
                any_ok = True
        score = total if any_ok else on_not_applicable
        want.update(score=score, acc=score, rewardd_status="ok" if any_ok else "not_applicable")
        out.append(want)
    return out


def same(got, want):
    """got's numbers and status equal want's (NaN equals NaN)."""
    keys = set(want) | {"rewardd_reason"}
    if set(got) != keys:
        return False
    for k, v in want.items():
        g = got[k]
        if isinstance(v, float) and math.isnan(v):
            if not (isinstance(g, float) and math.isnan(g)):
                return False
        elif g != v:
            return False
    return isinstance(got["rewardd_reason"], str)


class VerlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(config=CONFIG)
        cls.addClassCleanup(cls.server.stop)

    def setUp(self):
        env = mock.patch.dict(os.environ, {"REWARDD_ADDR": self.server.grpc_addr})
        env.start()
        for var in list(os.environ):
            if var.startswith("REWARDD_") and var != "REWARDD_ADDR":
                del os.environ[var]
        self.addCleanup(env.stop)
        rewardd_client.reset()
        self.addCleanup(rewardd_client.reset)

    def score_rpcs(self):
        return self.server.counter("rewardd_requests_total", method="Score")

    def assert_results(self, results, want):
        self.assertEqual(len(results), len(want))
        for i, (got, w) in enumerate(zip(results, want)):
            self.assertTrue(same(got, w), f"sample {i}: got {got}, want {w}")

    def test_reward_loop_batches_concurrent_calls(self):
        samples = make_samples(seed=1, n=256)
        want = expected(self.server.grpc_addr, samples)
        # The data has every outcome: right and wrong math, passing, partial
        # and failing programs, text with and without a reference.
        gsm = [w for s, w in zip(samples, want) if s["data_source"] == "openai/gsm8k"]
        self.assertEqual({w["accuracy"] for w in gsm}, {0.0, 1.0})
        self.assertEqual({w["format"] for w in gsm}, {0.0, 1.0})
        self.assertEqual({w["tests"] for s, w in zip(samples, want) if s["data_source"] == "codecontests"}, {0.0, 0.5, 1.0})
        self.assertIn("not_applicable", {w["rewardd_status"] for w in want})
        text_scores = [w["score"] for s, w in zip(samples, want) if s["data_source"] == "textgen" and w["rewardd_status"] == "ok"]
        self.assertGreater(len(set(text_scores)), len(text_scores) // 2)  # mostly distinct: a mix-up would show

        compute_score = get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score", REWARD_KWARGS)
        self.assertTrue(inspect.iscoroutinefunction(compute_score))  # so verl awaits it
        before = self.score_rpcs()
        out = reward_loop(compute_score, samples)
        rpcs = self.score_rpcs() - before
        self.assertEqual([score for score, _ in out], [w["score"] for w in want])
        self.assert_results([info for _, info in out], want)
        # The 256 calls arrive within a few windows of 5 ms: a handful of RPCs.
        self.assertGreaterEqual(rpcs, 1)
        self.assertLessEqual(rpcs, 256 // 16, f"{rpcs} Score RPCs for 256 calls")

    def test_max_batch_cuts_batches(self):
        os.environ["REWARDD_VERL_MAX_BATCH"] = "16"
        os.environ["REWARDD_VERL_WINDOW_MS"] = "1000"  # only the size cuts a batch
        rewardd_client.reset()
        samples = make_samples(seed=2, n=64)
        want = expected(self.server.grpc_addr, samples)
        before = self.score_rpcs()
        out = reward_loop(get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score", REWARD_KWARGS), samples)
        self.assertEqual(self.score_rpcs() - before, 4)
        self.assert_results([info for _, info in out], want)

    def test_synchronous_managers(self):
        samples = make_samples(seed=3, n=12)
        want = expected(self.server.grpc_addr, samples)
        compute_score = get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score_sync", REWARD_KWARGS)
        self.assertFalse(inspect.iscoroutinefunction(compute_score))

        # verl/workers/reward_manager/naive.py: one keyword call per sample, in turn.
        before = self.score_rpcs()
        got = [compute_score(data_source=s["data_source"], solution_str=s["solution_str"], ground_truth=s["ground_truth"], extra_info=s["extra_info"]) for s in samples]
        self.assertEqual(self.score_rpcs() - before, len(samples))
        self.assert_results(got, want)

        # The reward loop runs a function that is not a coroutine function in its executor.
        out = reward_loop(compute_score, samples)
        self.assert_results([info for _, info in out], want)

        # verl/workers/reward_manager/prime.py: positional calls in worker
        # processes (64 there; 2 here), floats only.
        prime = get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score_sync", dict(REWARD_KWARGS, return_dict=False))
        with ProcessPoolExecutor(max_workers=2) as executor:
            futures = [executor.submit(partial(prime, s["data_source"], s["solution_str"], s["ground_truth"], s["extra_info"])) for s in samples]
            scores = [f.result(timeout=60) for f in futures]
        self.assertEqual(scores, [w["score"] for w in want])

    def test_batch_signature(self):
        import numpy as np

        samples = make_samples(seed=4, n=40)
        want = expected(self.server.grpc_addr, samples)
        compute_score = get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score_batch", REWARD_KWARGS)
        before = self.score_rpcs()
        # verl/workers/reward_manager/batch.py: data sources and extra infos
        # are the batch's numpy object arrays, the rest lists.
        got = compute_score(
            data_sources=np.array([s["data_source"] for s in samples], dtype=object),
            solution_strs=[s["solution_str"] for s in samples],
            ground_truths=[s["ground_truth"] for s in samples],
            extra_infos=np.array([dict(s["extra_info"], rollout_reward_scores={}) for s in samples], dtype=object),
        )
        self.assertEqual(self.score_rpcs() - before, 1)
        self.assert_results(got, want)
        with self.assertRaisesRegex(ValueError, "3 ground_truths"):
            compute_score(data_sources=["a"] * 2, solution_strs=["x"] * 2, ground_truths=["y"] * 3)

    def test_loaded_from_its_file_path(self):
        # Older verl loads custom_reward_function.path as a file.
        compute_score = get_custom_reward_fn(verl.__file__, "compute_score", REWARD_KWARGS)
        self.assertTrue(inspect.iscoroutinefunction(compute_score))
        samples = make_samples(seed=5, n=9)
        out = reward_loop(compute_score, samples)
        self.assert_results([info for _, info in out], expected(self.server.grpc_addr, samples))

    def test_reward_kwargs_from_a_verl_config(self):
        try:
            from omegaconf import OmegaConf
        except ImportError:
            self.skipTest("omegaconf is not installed (make deps installs python3-omegaconf): verl's reward_kwargs are DictConfig values")
        cfg = OmegaConf.create({"reward": {"custom_reward_function": {"path": "pkg://rewardd_client.verl", "name": "compute_score", "reward_kwargs": REWARD_KWARGS}}})
        fn_cfg = cfg.reward.get("custom_reward_function")
        compute_score = get_custom_reward_fn(fn_cfg.get("path"), fn_cfg.get("name"), fn_cfg.get("reward_kwargs", {}))
        samples = make_samples(seed=6, n=30)
        out = reward_loop(compute_score, samples)
        self.assert_results([info for _, info in out], expected(self.server.grpc_addr, samples))

    def test_functions_from_the_environment(self):
        os.environ["REWARDD_VERL_FUNCTIONS"] = json.dumps({"openai/gsm8k": "accuracy,format", "codecontests": ["tests"], "*": "closeness"})
        os.environ["REWARDD_VERL_GROUND_TRUTH_FIELD"] = json.dumps({"codecontests": "tests"})
        rewardd_client.reset()
        samples = make_samples(seed=7, n=12)
        out = reward_loop(get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score", {}), samples)
        self.assert_results([info for _, info in out], expected(self.server.grpc_addr, samples))
        # reward_kwargs win over the environment.
        got = verl.compute_score_sync("openai/gsm8k", "<answer>3</answer>", "3", functions="format")
        # An OK 0 comes with its reason (issue 19, item 1).
        self.assertEqual(got, {"score": 0.0, "acc": 0.0, "format": 0.0, "rewardd_status": "ok", "rewardd_reason": "format: does not start with <think>"})
        # Weights over the server's (format: 0.5), and the bare float.
        os.environ["REWARDD_VERL_WEIGHTS"] = '{"format": 2}'
        os.environ["REWARDD_VERL_RETURN_DICT"] = "false"
        rewardd_client.reset()
        self.assertEqual(verl.compute_score_sync("openai/gsm8k", "<think>x</think><answer>3</answer>", "3"), 3.0)
        self.assertEqual(verl.compute_score_sync("openai/gsm8k", "<think>x</think><answer>3</answer>", "3", weights={"accuracy": 0.25}), 0.25 + 0.5)

    def test_every_served_function_by_default(self):
        got = verl.compute_score_sync("any", "<think>1+2</think><answer>3</answer>", "3")
        self.assertEqual(got["rewardd_status"], "ok")
        self.assertEqual([k for k in got if k in WEIGHTS], FUNCTIONS)
        # tests does not apply (no tests field): its weight is not counted.
        self.assertEqual(got["score"], 1.0 + 0.5 + got["closeness"])
        self.assertTrue(math.isnan(got["tests"]))

    def test_unknown_function_and_bad_options(self):
        async def both():
            return await asyncio.gather(
                verl.compute_score("openai/gsm8k", "<answer>3</answer>", "3", functions="no-such-fn"),
                verl.compute_score("openai/gsm8k", "<answer>3</answer>", "3", functions="accuracy"),
                return_exceptions=True,
            )

        bad, good = asyncio.run(both())
        self.assertIsInstance(bad, rewardd_client.RewarddError)
        self.assertIn("'no-such-fn'", str(bad))
        self.assertIn("accuracy, format, closeness, tests", str(bad))  # what is served
        self.assertEqual(good["score"], 1.0)  # the other caller of the batch is scored

        before = self.score_rpcs()
        cases = [
            (dict(functions={"openai/gsm8k": "accuracy"}), "'textgen' has no functions"),
            (dict(functon="accuracy"), "'functon'"),
            (dict(on_error="nan"), "NaN"),
            (dict(on_error="ignore"), "want 'raise' or a number"),
            (dict(on_not_applicable=True), "on_not_applicable"),
            (dict(functions=""), "empty function"),
            (dict(ground_truth_field={"textgen": 3}), "ground_truth_field"),
        ]
        for kw, msg in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(rewardd_client.ConfigError) as ctx:
                    asyncio.run(verl.compute_score("textgen", "a", "b", **kw))
                self.assertIn(msg, str(ctx.exception))
        self.assertEqual(self.score_rpcs(), before)  # refused before any call
        os.environ["REWARDD_VERL_ON_ERROR"] = "maybe"
        rewardd_client.reset()
        with self.assertRaisesRegex(rewardd_client.ConfigError, "REWARDD_VERL_ON_ERROR"):
            verl.compute_score_sync("textgen", "a", "b")

    def _error_samples(self):
        broken = dict(data_source="codecontests", solution_str=PROGRAMS[0], ground_truth="{not json", extra_info={})
        return [broken] + make_samples(seed=8, n=6)

    def test_error_raises_by_default(self):
        samples = self._error_samples()
        out = reward_loop(get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score", REWARD_KWARGS), samples, return_exceptions=True)
        err = out[0]
        self.assertIsInstance(err, rewardd_client.ScoreError)
        self.assertEqual(err.function, "tests")
        self.assertIn("not JSON", err.reason)
        self.assertIn("'codecontests'", str(err))
        # Only that sample's caller raises.
        self.assert_results([info for _, info in out[1:]], expected(self.server.grpc_addr, samples[1:]))
        with self.assertRaises(rewardd_client.ScoreError):
            verl.compute_score_batch(**plural(samples), **REWARD_KWARGS)

    def test_error_scored_as_configured(self):
        samples = self._error_samples()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = reward_loop(get_custom_reward_fn("pkg://rewardd_client.verl", "compute_score", dict(REWARD_KWARGS, on_error=-1)), samples)
        score, info = out[0]
        self.assertEqual(score, -1.0)
        self.assertEqual(info["rewardd_status"], "error")
        self.assertIn("tests: field", info["rewardd_reason"])
        self.assertTrue(math.isnan(info["tests"]))
        msgs = [str(w.message) for w in caught if issubclass(w.category, rewardd_client.RewarddWarning)]
        self.assertEqual(len(msgs), 1, msgs)
        self.assertRegex(msgs[0], r"1 of \d+ rollouts got ERROR and score -1.0 .*data source 'codecontests': tests: field")
        self.assert_results([i for _, i in out[1:]], expected(self.server.grpc_addr, samples[1:]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rewardd_client.RewarddWarning)
            self.assertEqual(verl.compute_score_batch(**plural(samples[:1]), **REWARD_KWARGS, on_error=0, return_dict=False), [0.0])

    def test_not_applicable(self):
        kw = dict(REWARD_KWARGS)
        got = verl.compute_score_sync("textgen", "some text", None, **kw)
        self.assertEqual((got["score"], got["rewardd_status"]), (0.0, "not_applicable"))
        self.assertIn("closeness: no reference", got["rewardd_reason"])
        self.assertEqual(verl.compute_score_sync("textgen", "some text", None, **kw, on_not_applicable=-0.5, return_dict=False), -0.5)
        with self.assertRaisesRegex(rewardd_client.ScoreError, "does not apply"):
            verl.compute_score_sync("textgen", "some text", None, **kw, on_not_applicable="raise")
        # One function of two applying is enough: the sum of what applies.
        got = verl.compute_score_sync("openai/gsm8k", "<think>x</think><answer>3</answer>", None, **kw)
        self.assertEqual((got["score"], got["rewardd_status"]), (0.5, "ok"))

    def test_cancelled_caller_leaves_the_others_alone(self):
        # verl's prime manager gives each call a timeout (asyncio.wait_for);
        # a call that gives up while its batch waits is not sent.
        os.environ["REWARDD_VERL_WINDOW_MS"] = "300"
        rewardd_client.reset()
        samples = make_samples(seed=9, n=6)

        async def run():
            first = asyncio.wait_for(verl.compute_score(**samples[0], **REWARD_KWARGS), timeout=0.05)
            rest = [verl.compute_score(**s, **REWARD_KWARGS) for s in samples[1:]]
            return await asyncio.gather(first, *rest, return_exceptions=True)

        before = self.server.counter("rewardd_rollouts_scored_total")
        out = asyncio.run(run())
        self.assertIsInstance(out[0], asyncio.TimeoutError)
        self.assert_results(out[1:], expected(self.server.grpc_addr, samples[1:]))
        self.assertEqual(self.server.counter("rewardd_rollouts_scored_total") - before, 2 * len(samples[1:]))  # the batch and expected()'s

    def test_reset_scores_what_is_pending(self):
        os.environ["REWARDD_VERL_WINDOW_MS"] = "10000"  # nothing leaves on its own
        rewardd_client.reset()
        samples = make_samples(seed=10, n=6)

        async def run():
            calls = [asyncio.ensure_future(verl.compute_score(**s, **REWARD_KWARGS)) for s in samples]
            await asyncio.sleep(0.05)  # the calls are queued
            # rewardd_client.reset() sends them at once; 30 s only guards against a hang.
            await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, rewardd_client.reset), timeout=30)
            return await asyncio.wait_for(asyncio.gather(*calls), timeout=30)

        self.assert_results(asyncio.run(run()), expected(self.server.grpc_addr, samples))

    def test_fingerprint_is_checked(self):
        os.environ["REWARDD_FINGERPRINT"] = "sha256:0000expected"
        rewardd_client.reset()
        with self.assertRaisesRegex(rewardd_client.FingerprintMismatchError, "sha256:0000expected"):
            asyncio.run(verl.compute_score("textgen", "a", "b"))


def plural(samples):
    return dict(
        data_sources=[s["data_source"] for s in samples],
        solution_strs=[s["solution_str"] for s in samples],
        ground_truths=[s["ground_truth"] for s in samples],
        extra_infos=[s["extra_info"] for s in samples],
    )


class ServerDownTest(unittest.TestCase):
    def test_every_caller_gets_the_failure(self):
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = mock.patch.dict(os.environ, {"REWARDD_ADDR": f"127.0.0.1:{port}", "REWARDD_MAX_ATTEMPTS": "2", "REWARDD_TIMEOUT": "5"})
        env.start()
        self.addCleanup(env.stop)
        rewardd_client.reset()
        self.addCleanup(rewardd_client.reset)

        async def calls():
            return await asyncio.gather(*[verl.compute_score("textgen", f"a{i}", "b", functions="closeness") for i in range(8)], return_exceptions=True)

        for err in asyncio.run(calls()):
            self.assertIsInstance(err, rewardd_client.RPCError)
            self.assertEqual(err.code, grpc.StatusCode.UNAVAILABLE)
            self.assertEqual(err.attempts, 2)
        with self.assertRaises(rewardd_client.RPCError):
            verl.compute_score_sync("textgen", "a", "b")


if __name__ == "__main__":
    unittest.main()
