"""Writes ifbench_tests.jsonl: every check IFBench's own tests make
(instructions_test.py of allenai/IFBench), recorded as it runs: the
registry id, the checker's arguments (get_instruction_args), the response
and the reference's verdict, for TestIFBenchReferenceTests.

IFBench imports emoji and syllapy, which are no Debian packages: stand-ins
are imported whose functions raise, so the tests of the checkers that need
them (and of those that need NLTK data not installed here: stopwords, the
POS tagger) raise before anything is recorded. NLTK's Punkt model is built
as bench/ifeval/make_punkt.py says.

  NLTK_DATA=DIR /usr/bin/python3 ifbench_tests.py IFBENCH_CHECKOUT > ifbench_tests.jsonl
"""
import json, sys, types, unittest
root = sys.argv[1]
sys.path.insert(0, root)
for name in ('emoji', 'syllapy'):
    m = types.ModuleType(name)
    def missing(*a, _n=name, **k): raise RuntimeError(_n + ' is not installed')
    m.is_emoji = missing; m.count = missing
    sys.modules[name] = m
import nltk
nltk.download = lambda *a, **k: None
from ifbench import instructions_registry as reg
ids = {cls: id for id, cls in reg.INSTRUCTION_DICT.items()}
out = []
for cls in set(ids):
    def wrapped(self, value, _orig=cls.check_following, _cls=cls):
        got = _orig(self, value)
        out.append({"id": ids[_cls], "kwargs": self.get_instruction_args() or {}, "completion": value, "reference": bool(got)})
        return got
    cls.check_following = wrapped
import importlib.util
spec = importlib.util.spec_from_file_location("instructions_test", f"{root}/instructions_test.py")
tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tests)
unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(unittest.defaultTestLoader.loadTestsFromModule(tests))
seen = set()
for o in out:
    k = json.dumps(o, sort_keys=True)
    if k not in seen:
        seen.add(k)
        print(json.dumps(o, ensure_ascii=False))
