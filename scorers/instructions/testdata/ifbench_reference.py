"""Writes ifbench_reference_290.jsonl: IFBench's reference verdicts, strict
and loose, one per instruction, on the 290 model responses IFBench
publishes (data/sample_output.jsonl) that answer one of its 300 prompts
(data/IFBench_test.jsonl), for TestIFBenchAgreement.

The verdicts are those of IFBench's own registry classes run here, with its
evaluation's strict and loose rules (evaluation_lib.py). IFBench imports
emoji and syllapy, which are no Debian packages: stand-ins are imported
whose functions raise, so that the instructions needing them (and those
needing NLTK data that is not installed: stopwords, the POS tagger) get a
null verdict instead of one. langdetect is seeded with 0; NLTK's Punkt
model is built as bench/ifeval/make_punkt.py says.

  NLTK_DATA=DIR /usr/bin/python3 ifbench_reference.py IFBENCH_CHECKOUT > ifbench_reference_290.jsonl
"""
import json, sys, types
root = sys.argv[1]
sys.path.insert(0, root)
for name in ('emoji', 'syllapy'):
    m = types.ModuleType(name)
    def missing(*a, _n=name, **k): raise RuntimeError(_n + ' is not installed')
    m.is_emoji = missing; m.count = missing
    sys.modules[name] = m
import nltk
nltk.download = lambda *a, **k: None
import langdetect
langdetect.DetectorFactory.seed = 0
from ifbench import instructions_registry as reg

def verdict(id, kwargs, texts):
    inst = reg.INSTRUCTION_DICT[id](id)
    try:
        inst.build_description(**kwargs)
        return any(t.strip() and inst.check_following(t) for t in texts)
    except Exception:
        return None

def variants(response):
    r = response.split("\n")
    first = "\n".join(r[1:]).strip()
    last = "\n".join(r[:-1]).strip()
    both = "\n".join(r[1:-1]).strip()
    v = [response, first, last, both]
    return v + [x.replace("*", "") for x in v]

responses = {}
for l in open(f"{root}/data/sample_output.jsonl"):
    d = json.loads(l)
    responses[d["prompt"]] = d["response"]
for l in open(f"{root}/data/IFBench_test.jsonl"):
    d = json.loads(l)
    resp = responses.get(d["prompt"], responses.get(d["prompt"].strip()))
    if resp is None:
        continue
    kws = [{k: v for k, v in kw.items() if v is not None} for kw in d["kwargs"]]
    strict = [verdict(i, kw, [resp]) for i, kw in zip(d["instruction_id_list"], kws)]
    loose = [verdict(i, kw, variants(resp)) for i, kw in zip(d["instruction_id_list"], kws)]
    print(json.dumps({"key": d["key"], "instruction_id_list": d["instruction_id_list"], "kwargs": kws,
                      "response": resp, "strict": strict, "loose": loose}, ensure_ascii=False))
