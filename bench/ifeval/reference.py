"""Runs IFEval's reference evaluation (google-research's
instruction_following_eval, unchanged, importable as the package
instruction_following_eval from IFEVAL_PARENT) on every prompt of
INPUT_DATA that RESPONSES answers, strict then loose as its evaluation_main
does, with langdetect seeded with 0, and prints the four headline
accuracies and the time the evaluation took (imports and loading left out).

    PYTHONPATH=IFEVAL_PARENT NLTK_DATA=DIR /usr/bin/python3 reference.py INPUT_DATA RESPONSES
"""
import sys
import time

import langdetect
from instruction_following_eval import evaluation_lib

langdetect.DetectorFactory.seed = 0
inputs = evaluation_lib.read_prompt_list(sys.argv[1])
responses = evaluation_lib.read_prompt_to_response_dict(sys.argv[2])
inputs = [i for i in inputs if i.prompt in responses]
start = time.perf_counter()
results = {}
for name, fn in (("strict", evaluation_lib.test_instruction_following_strict),
                 ("loose", evaluation_lib.test_instruction_following_loose)):
    results[name] = [fn(i, responses) for i in inputs]
took = time.perf_counter() - start
for name, outs in results.items():
    prompt = sum(o.follow_all_instructions for o in outs) / len(outs)
    n = sum(len(o.follow_instruction_list) for o in outs)
    inst = sum(sum(o.follow_instruction_list) for o in outs) / n
    print(f"{name}: prompt-level {prompt:.4f} instruction-level {inst:.4f}")
print(f"{len(inputs)} rows, strict and loose, in {took:.3f} s of evaluation", file=sys.stderr)
