"""Writes parity.jsonl: what the Python libraries behind IFEval's reference
evaluator say about texts rewardd must read the same way: for each text,
langdetect's language (DetectorFactory.seed = 0; "" where it raises, which
the reference counts as followed), NLTK's Punkt sentence count (what
length_constraints:number_sentences counts), and the count of
nltk.word_tokenize tokens that are str.isupper (what
change_case:capital_word_frequency counts), and the sentences of IFEval's
own rule-based instructions_util.split_into_sentences (what open-instruct's
IFEvalG sentence checks use).

The texts: IFEval's 541 prompts, and the 156 PaLM 2 responses each with the
seven other variants the loose evaluation tries (first line, last line,
both removed; "*" removed), without repeats and empty ones.

Needs Debian's python3-langdetect and python3-nltk, and NLTK's punkt
english.pickle, which no Debian package ships; bench/ifeval/make_punkt.py
builds it from the Punkt parameters github.com/neurosnap/sentences ships
(exported from NLTK's english.pickle; the reference's verdicts on the 156
responses come out identical with it). Run from this directory:

    NLTK_DATA=/tmp/nltk_data PYTHONPATH=IFEVAL_PARENT /usr/bin/python3 parity.py > parity.jsonl

(IFEVAL_PARENT holds the reference's instruction_following_eval package.)
"""
import json

import langdetect
import nltk
from instruction_following_eval import instructions_util

langdetect.DetectorFactory.seed = 0
punkt = nltk.data.load("nltk:tokenizers/punkt/english.pickle")


def variants(response):
    r = response.split("\n")
    first = "\n".join(r[1:]).strip()
    last = "\n".join(r[:-1]).strip()
    both = "\n".join(r[1:-1]).strip()
    out = [response, first, last, both]
    return out + [v.replace("*", "") for v in out]


texts = [json.loads(l)["prompt"] for l in open("ifeval_input_data.jsonl")]
for l in open("ifeval_responses_palm2_156.jsonl"):
    texts += variants(json.loads(l)["response"])
seen = set()
for t in texts:
    if not t.strip() or t in seen:
        continue
    seen.add(t)
    try:
        lang = langdetect.detect(t)
    except langdetect.LangDetectException:
        lang = ""
    caps = sum(1 for w in nltk.word_tokenize(t) if w.isupper())
    print(json.dumps({"text": t, "lang": lang, "sentences": len(punkt.tokenize(t)), "capital_words": caps,
                      "rule_sentences": instructions_util.split_into_sentences(t)}, ensure_ascii=False))
