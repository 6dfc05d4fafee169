"""Writes profiles.txt, the data of package langdetect, from the
language profiles and messages of Python's langdetect (Debian's
python3-langdetect 1.0.9, Apache 2.0; its profiles are those of Shuyo
Nakatani's language-detection). Run from this directory:

    /usr/bin/python3 gen.py /usr/lib/python3/dist-packages/langdetect

Lines, tab-separated:
  langs  <name> …              the profiles in the order langdetect loads
                               them on Debian (os.listdir of its profiles
                               directory, recorded here: the order of its
                               sums, so of its roundings)
  nwords <n1> <n2> <n3> …      each profile's n_words, in that order
  cjk    <chars>               one class of CJK ideographs (each maps to
                               its first)
  <gram> <i>:<freq> …          an n-gram of 1 to 3 characters and its
                               frequency in profile i
"""
import json
import os
import sys

src = sys.argv[1]
pdir = os.path.join(src, "profiles")
names = os.listdir(pdir)
profiles = [json.load(open(os.path.join(pdir, n), encoding="utf-8")) for n in names]
messages = {}
for line in open(os.path.join(src, "utils", "messages.properties")):
    k, _, v = line.strip().partition("=")
    messages[k] = v.encode().decode("unicode_escape")
grams = {}
for i, p in enumerate(profiles):
    for w, f in p["freq"].items():
        if 1 <= len(w) <= 3:
            assert "\t" not in w and "\n" not in w and " :" not in w
            grams.setdefault(w, []).append((i, f))
with open("profiles.txt", "w", encoding="utf-8", newline="\n") as out:
    out.write("langs\t" + " ".join(p["name"] for p in profiles) + "\n")
    out.write("nwords\t" + " ".join(",".join(str(n) for n in p["n_words"]) for p in profiles) + "\n")
    for k in sorted(messages):
        if k.startswith("NGram.KANJI_"):
            out.write("cjk\t" + messages[k] + "\n")
    for w in sorted(grams):
        out.write(w + "\t" + " ".join(f"{i}:{f}" for i, f in grams[w]) + "\n")
