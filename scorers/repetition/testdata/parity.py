"""Writes parity.jsonl: open-r1's n-gram repetition penalty (words, as in
get_repetition_penalty_reward: text.lower().split(), set of zipped n-grams,
(1 - unique/total) * max_penalty, 0 when shorter than n) on GSM8K solutions
and repetitive variants of them. Run from this directory:

    /usr/bin/python3 parity.py ../../../../shared/data/gsm8k_test.jsonl > parity.jsonl
"""
import json
import sys


def penalty(text, n, max_penalty):
    words = text.lower().split()
    if text == "" or len(words) < n:
        return 0.0
    grams = list(zip(*[words[i:] for i in range(n)]))
    return (1 - len(set(grams)) / len(grams)) * max_penalty


rows = [json.loads(line)["answer"] for line in open(sys.argv[1])][:60]
texts = []
for i, sol in enumerate(rows):
    first = sol.split("\n")[0]
    texts += [sol, sol + "\n" + sol, (first + " ") * (2 + i % 5) + sol, sol.upper()]
for i, text in enumerate(texts):
    n = [3, 1, 2, 4, 5][i % 5]
    mp = [-1.0, -0.5, -2.0][i % 3]
    print(json.dumps({"completion": text, "ngram_size": n, "max_penalty": mp, "want": penalty(text, n, mp)}))
