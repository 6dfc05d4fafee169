"""rewardd_client.hatchery: gold answers parsed from the prompt, against a real server."""

from __future__ import annotations

import inspect
import unittest

import _support
from _support import direct_score

from rewardd_client import gold, hatchery


class GoldTest(unittest.TestCase):
    def test_parse(self):
        cases = [
            ("Solve 6*7.<|gold|>42<|/gold|>", "42"),
            ("<|im_start|>user\nSolve.<|gold|> 3/4 \n<|/gold|><|im_end|>", "3/4"),
            ("<|gold|>\\frac{1}{2}<|/gold|> and <|gold|>9<|/gold|>", "\\frac{1}{2}"),  # the first, as Hatchery reads it
            ("<|gold|>two\nlines<|/gold|>", "two\nlines"),
            ("no gold here", None),
            ("<|gold|>unterminated", None),
        ]
        for prompt, want in cases:
            with self.subTest(prompt=prompt):
                self.assertEqual(gold(prompt), want)


class HatcheryTest(_support.ServedTest):
    def test_called_as_hatchery_does(self):
        # HatcheryRLTrainer._compute_rewards: reward_fn(prompts, completions),
        # positional, prompts decoded with special tokens, one per sample;
        # the rewards of all functions are added up as floats.
        prompts = ["<|im_start|>user\nWhat is 6*7?<|gold|>42<|/gold|><|im_end|>\n"] * 2 + ["<|im_start|>user\nSay hi.<|im_end|>\n"] * 2
        completions = [
            "<think>6*7</think><answer>42</answer><|im_end|>",
            "<answer>41</answer><|im_end|>",
            "<think>hi</think><answer>hi</answer><|im_end|>",
            "hi",
        ]
        funcs = [hatchery.accuracy, hatchery.format]
        for f in funcs:
            self.assertGreaterEqual(len(inspect.signature(f).parameters), 2)
        before = self.server.score_ok()
        total = [0.0] * len(completions)
        per_func = []
        for reward_fn in funcs:
            rewards = reward_fn(prompts, completions)
            per_func.append(rewards)
            for i, r in enumerate(rewards):
                total[i] += r
        self.assertEqual(self.server.score_ok() - before, 1)  # one round trip for both functions

        rows = [{"prompt": p, "completion": c, "answer": gold(p)} for p, c in zip(prompts, completions)]
        want = direct_score(self.server.grpc_addr, rows, ["accuracy", "format"])
        self.assertEqual(want["accuracy"], [1.0, 0.0, None, None])  # no gold: not applicable…
        self.assertEqual(per_func[0], [1.0, 0.0, 0.0, 0.0])  # …which Hatchery's sum needs as 0.0
        self.assertEqual(per_func[1], want["format"])
        self.assertTrue(all(isinstance(r, float) for r in total))


if __name__ == "__main__":
    unittest.main()
