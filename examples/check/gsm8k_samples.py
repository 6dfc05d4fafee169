#!/usr/bin/env python3
"""Samples for `rewardd check --samples`, made from GSM8K without a model.

Reads GSM8K rows as JSONL ({"question", "answer"}: the answer is a worked
solution ending in "#### <number>") and writes, for each of the first
--questions rows, four completions of one group, as rewardd's JSONL rows
({"id", "group", "prompt", "completion", "answer"}):

  0. the solution as numbered steps in <think>, the gold number in <answer>
  1. the solution as written ("… #### n")
  2. the solution with a wrong final number (n + 1)
  3. the solution in <think>, the wrong number in <answer>

With rewardd's embedded default config, accuracy, format and tag_count then
average 0.5 with no zero-variance group: docs/check.md's `rewardd check` table.
Your real samples come from your base model (a few completions per prompt);
these show what `check` reports before you have them.

    python3 examples/check/gsm8k_samples.py gsm8k_test.jsonl --questions 100 > samples.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys

_INTEGER = re.compile(r"[+-]?[0-9]+")


def samples(rows, questions: int):
    """Yields the sample rows for the first `questions` GSM8K rows."""
    for q, row in enumerate(rows):
        if q == questions:
            return
        reasoning, sep, gold = row["answer"].partition("\n#### ")
        if not sep:
            raise ValueError(f"GSM8K row {q + 1} has no '#### ': {row['answer']!r}")
        plain = gold.replace(",", "")
        wrong = str(int(plain) + 1) if _INTEGER.fullmatch(plain) else gold + "1"
        steps = "".join(f"Step {i + 1}: {line}\n" for i, line in enumerate(reasoning.split("\n")))
        completions = [
            f"<think>{steps}</think>\n<answer>{gold}</answer>",
            row["answer"],
            f"{reasoning}\n#### {wrong}",
            f"<think>{reasoning}</think><answer>{wrong}</answer>",
        ]
        for j, completion in enumerate(completions):
            yield {"id": f"gsm8k-{q}-{j}", "group": f"gsm8k-{q}", "prompt": row["question"], "completion": completion, "answer": row["answer"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gsm8k", help="GSM8K rows as JSONL ('-' for stdin)")
    ap.add_argument("--questions", type=int, default=100, help="how many questions (default 100: 400 samples)")
    args = ap.parse_args(argv)
    src = sys.stdin if args.gsm8k == "-" else open(args.gsm8k, encoding="utf-8")
    with src:
        rows = (json.loads(line) for line in src if line.strip())
        try:
            for sample in samples(rows, args.questions):
                sys.stdout.write(json.dumps(sample, ensure_ascii=False) + "\n")
        except (ValueError, KeyError) as err:
            print(f"gsm8k_samples: {args.gsm8k}: {err}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
