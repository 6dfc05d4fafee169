"""Writes parity.jsonl: reference values of the three metrics on pairs made
from GSM8K test solutions, computed by other implementations:

- fuzzy: python-Levenshtein's ratio (Debian python3-levenshtein 0.12), which
  equals rapidfuzz's fuzz.ratio / 100;
- bleu: NLTK's sentence_bleu with SmoothingFunction().method3 (Debian
  python3-nltk 3.8), which equals sacrebleu's sentence_bleu with tokenize
  "none" and smooth_method "exp" when the candidate has at least 4 tokens
  (NLTK has no effective order), so only such pairs are written;
- rouge_l: rouge-score's LCS F-measure written out below with a plain
  dynamic-programming table (rouge-score is not packaged for Debian).

Run from this directory:

    /usr/bin/python3 parity.py ../../../../shared/data/gsm8k_test.jsonl > parity.jsonl
"""
import json
import re
import sys

import Levenshtein
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu


def rouge_l(cand, ref):
    c, r = cand.split(), ref.split()
    if not c or not r:
        return 0.0
    table = [[0] * (len(c) + 1) for _ in range(len(r) + 1)]
    for i in range(1, len(r) + 1):
        for j in range(1, len(c) + 1):
            if r[i - 1] == c[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    lcs = table[-1][-1]
    p, rec = lcs / len(c), lcs / len(r)
    return 0.0 if p + rec == 0 else 2 * p * rec / (p + rec)


def bleu(cand, ref):
    return sentence_bleu([ref.split()], cand.split(), smoothing_function=SmoothingFunction().method3)


sols = [json.loads(line)["answer"] for line in open(sys.argv[1])]
pairs = []
for i, sol in enumerate(sols[:15]):
    plain = re.sub(r"<<[^>]*>>", "", sol)
    words = sol.split()
    pairs += [
        (plain, sol),                                  # calculator notes dropped
        (sols[i + 100], sol),                          # another problem
        (" ".join(words[len(words) // 2:] + words[: len(words) // 2]), sol),  # halves swapped
        (sol[: len(sol) // 3], sol),                   # truncated
        (sol.upper(), sol),                            # case differs
    ]
long_ref = "\n".join(sols[200:215])
long_cand = "\n".join(re.sub(r"<<[^>]*>>", "", s) for s in sols[200:215][::-1])
pairs += [(long_cand, long_ref), (long_ref[::-1], long_ref), ("\n".join(sols[300:312]), long_ref)]
pairs += [("数学题的答案是十八。", "这道数学题的答案是十八"), ("é\u0301", "e\u0301\u0301")]

for cand, ref in pairs:
    print(json.dumps({"metric": "fuzzy", "completion": cand, "reference": ref, "want": Levenshtein.ratio(cand, ref)}, ensure_ascii=False))
    print(json.dumps({"metric": "rouge_l", "completion": cand, "reference": ref, "want": rouge_l(cand, ref)}, ensure_ascii=False))
    if len(cand.split()) >= 4:
        print(json.dumps({"metric": "bleu", "completion": cand, "reference": ref, "want": bleu(cand, ref)}, ensure_ascii=False))
