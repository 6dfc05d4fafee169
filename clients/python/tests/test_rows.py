"""rewardd_client._rows: the request encoded by hand must be the one protobuf
builds, and batches must compare by exactly what they send. No server."""

from __future__ import annotations

import random
import unittest

import _support  # noqa: F401

from rewardd_client import _rows
from rewardd_client.proto import reward_pb2


def built_by_protobuf(batch: _rows.Batch) -> reward_pb2.ScoreRequest:
    """The request as client.score_batch used to build it: Rollout messages,
    fields through Struct.update, None left out."""
    req = reward_pb2.ScoreRequest()
    for i, (prompt, completion) in enumerate(zip(batch.prompts, batch.completions)):
        r = req.rollouts.add(prompt=prompt, completion=completion)
        fields = {name: values[i] for name, values in batch.columns.items() if values[i] is not None}
        if fields:
            r.fields.update(fields)
    return req


def decoded(batch: _rows.Batch) -> reward_pb2.ScoreRequest:
    """The rows form, as sent to servers older than the prompt-once form."""
    return reward_pb2.ScoreRequest.FromString(b"".join(batch.encode(rows=True)))


def expanded(batch: _rows.Batch) -> reward_pb2.ScoreRequest:
    """The prompt-once form as sent, expanded into rows as the server's
    Service.expand does: each rollout's prompt and fields from its prompt's
    and its own columns, nulls left out."""
    once = reward_pb2.ScoreRequest.FromString(b"".join(batch.encode()))
    req = reward_pb2.ScoreRequest()
    for i, r in enumerate(once.rollouts):
        out = req.rollouts.add(prompt=once.prompts[r.prompt_index], completion=r.completion)
        values = [(c.name, c.values[r.prompt_index]) for c in once.prompt_fields]
        values += [(c.name, c.values[i]) for c in once.rollout_fields]
        for name, v in values:
            if v.WhichOneof("kind") != "null_value":
                out.fields.fields[name].CopyFrom(v)
    return req


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(11 if depth < 3 else 9)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.randint(-(2**53), 2**53)
    if kind == 3:
        return rng.uniform(-1e6, 1e6)
    if kind == 4:
        return rng.choice([-0.0, 0, 0.0, 1, 1.5, 2**70])  # 2**70: sent as a string
    if kind == 5:
        return ""
    if kind in (6, 7, 8):
        return "é" * rng.randrange(300) + "x" * rng.choice([0, 1, 200, 5000])
    if kind == 9:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "b", "ключ", ""]): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


class EncodeTest(unittest.TestCase):
    def test_random_batches_decode_to_what_protobuf_builds(self):
        rng = random.Random(6)
        lengths = [0, 1, 127, 128, 4094, 4095, 4096, 16383, 16384, 70000]  # around the varint and table edges
        for trial in range(150):
            n = rng.randrange(8)
            prompts = [rng.choice(["", "π" * rng.randrange(50), "p" * rng.choice(lengths)]) for _ in range(n)]
            completions = [rng.choice(["", "<answer>4</answer>", "c" * rng.choice(lengths)]) for _ in range(n)]
            columns = {name: [random_value(rng) for _ in range(n)] for name in rng.sample(["answer", "level", "é", "z"], rng.randrange(4))}
            batch = _rows.make_batch(prompts, completions, columns)
            with self.subTest(trial=trial):
                self.assertEqual(decoded(batch), built_by_protobuf(batch))
                self.assertEqual(expanded(batch), built_by_protobuf(batch))

    def test_prompt_once(self):
        # Two prompts of three rollouts: answer agrees within each prompt (a
        # prompt column), tokens does not (a rollout column), none is
        # always None (left out).
        batch = _rows.make_batch(
            ["q1", "q1", "q1", "q2", "q2", "q2"],
            ["a", "b", "c", "d", "e", "f"],
            {"answer": ["1", "1", "1", 2, 2, 2], "tokens": [1, 2, 3, 4, 5, 6], "none": [None] * 6},
        )
        once = reward_pb2.ScoreRequest.FromString(b"".join(batch.encode()))
        self.assertEqual(list(once.prompts), ["q1", "q2"])
        self.assertEqual([r.prompt_index for r in once.rollouts], [0, 0, 0, 1, 1, 1])
        self.assertEqual([c.name for c in once.prompt_fields], ["answer"])
        self.assertEqual([c.name for c in once.rollout_fields], ["tokens"])
        self.assertEqual(expanded(batch), built_by_protobuf(batch))
        self.assertLess(len(b"".join(batch.encode())), len(b"".join(batch.encode(rows=True))))

    def test_chat_and_numpy_like_inputs(self):
        batch = _rows.make_batch(
            [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "6*7?"}]] * 2,
            [[{"role": "assistant", "content": [{"type": "text", "text": "<answer>42</answer>"}]}], "plain"],
            {"answer": ("42", None), "ids": [(1, 2), {"k": float("nan")}]},
        )
        self.assertEqual(batch.prompts, ["Be brief.\n6*7?"] * 2)
        self.assertEqual(decoded(batch), built_by_protobuf(batch))
        self.assertFalse(decoded(batch).rollouts[1].fields.fields["ids"].struct_value.fields["k"].HasField("number_value"))

    def test_empty_rows_and_texts(self):
        batch = _rows.make_batch(None, ["", "a"], {"answer": [None, None]})
        req = decoded(batch)
        self.assertEqual(len(req.rollouts), 2)
        self.assertEqual(req, built_by_protobuf(batch))
        self.assertFalse(req.rollouts[0].HasField("fields"))

    def test_lone_surrogate_fails_as_protobuf_does(self):
        batch = _rows.make_batch(["q"], ["a\ud800"])
        with self.assertRaises(UnicodeEncodeError):
            batch.encode()

    def test_request(self):
        batch = _rows.make_batch(["q", "q"], ["a", "b"], {"answer": ["1", "1"]})
        req = reward_pb2.ScoreRequest.FromString(_rows.request(batch, ["accuracy", "format"]))
        self.assertEqual(list(req.functions), ["accuracy", "format"])
        self.assertEqual(len(req.batch_id), 16)
        self.assertEqual(list(req.prompts), ["q"])
        self.assertEqual([r.completion for r in req.rollouts], ["a", "b"])
        rows = reward_pb2.ScoreRequest.FromString(_rows.request(batch, ["accuracy"], rows=True))
        self.assertEqual(list(rows.rollouts), list(built_by_protobuf(batch).rollouts))

    def test_batch_id_is_a_hash_of_the_content(self):
        def batch_id(*args):
            return reward_pb2.ScoreRequest.FromString(_rows.request(_rows.make_batch(*args), ["f"])).batch_id

        a = batch_id(["q"], ["a"], {"answer": ["1"]})
        self.assertEqual(a, batch_id(["q"], ["a"], {"answer": ["1"]}))
        self.assertNotEqual(a, batch_id(["q"], ["a"], {"answer": ["2"]}))
        self.assertNotEqual(a, batch_id(["q"], ["a"], {"answer": [True]}))
        self.assertNotEqual(a, batch_id(["qa"], [""], {"answer": ["1"]}))  # the boundary between texts counts


class SameTest(unittest.TestCase):
    def batch(self, answers, prompts=("q", "q"), completions=("a", "b")):
        return _rows.make_batch(list(prompts), list(completions), {"answer": answers})

    def test_same_lists_again(self):
        answers = ["1", {"x": [1.5, None]}]
        self.assertTrue(self.batch(answers).same(self.batch(answers)))
        self.assertTrue(self.batch(answers).same(self.batch(["1", {"x": [1.5, None]}])))  # equal, not identical

    def test_what_the_server_would_see_differently_differs(self):
        base = self.batch(["1", 1])
        for other in (
            self.batch(["1", True]),  # True == 1 in Python, not on the wire
            self.batch(["1", 1.0]),  # sent alike, but not the same object: scored again, harmlessly
            self.batch(["1", None]),
            self.batch(["1", 1], completions=("a", "c")),
            self.batch(["1", 1], prompts=("q", "r")),
            _rows.make_batch(["q", "q"], ["a", "b"], {"answer": ["1", 1], "level": [0, 0]}),
        ):
            with self.subTest(other=other):
                self.assertFalse(base.same(other))
                self.assertFalse(other.same(base))
        self.assertFalse(self.batch([0.0, 0]).same(self.batch([-0.0, 0])))
        self.assertFalse(self.batch([[0.0], 0]).same(self.batch([[-0.0], 0])))
        self.assertFalse(self.batch([{"k": 1}, 0]).same(self.batch([{"k": True}, 0])))

    def test_a_list_changed_in_place(self):
        answers = ["1", "2"]
        first = self.batch(answers)
        answers[1] = "3"
        self.assertFalse(first.same(self.batch(answers)))


if __name__ == "__main__":
    unittest.main()
