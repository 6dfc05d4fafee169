"""Builds nltk's punkt english.pickle from the Punkt parameters that
github.com/neurosnap/sentences ships (data/english.json, exported from
nltk's own english.pickle), so the reference evaluator runs offline."""
import json, os, pickle, sys
from collections import defaultdict
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
src, out = sys.argv[1], sys.argv[2]
d = json.load(open(src))
p = PunktParameters()
p.abbrev_types = set(d["AbbrevTypes"])
p.collocations = set(tuple(k.split(",", 1)) for k in d["Collocations"])
p.sent_starters = set(d["SentStarters"])
p.ortho_context = defaultdict(int, d["OrthoContext"])
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, "wb") as f:
    pickle.dump(PunktSentenceTokenizer(p), f, protocol=2)
