"""Reference graders for the math side-by-side (test only).

Reads JSON lines {"gold": ..., "answer": ...} on stdin (answer is the final
answer a model gave, already extracted) and writes one JSON line per input,
{"prm800k": bool, "minerva": bool}, then a last line
{"checks": n, "prm800k_seconds": s, "minerva_seconds": s} with the CPU time
each grader spent (interpreter start and imports left out).

The rules are transcribed, not copied, from two public graders:

- prm800k: OpenAI's PRM800K grader (grading/grader.py with
  grading/math_normalize.py): equal after the MATH normalisation, or after
  its own normalisation (units, \\text, commas, LaTeX to text with
  pylatexenc), or, element by element for tuples and intervals, equal under
  sympy.simplify of the difference (integers and a/b fractions compared as
  strings, expressions with more than two letters not evaluated).
- minerva: the answer normalisation of Minerva (Lewkowycz et al. 2022,
  appendix D.1) followed by string equality.

Run with Debian's /usr/bin/python3 and its python3-sympy and
python3-pylatexenc packages.
"""

import json
import re
import signal
import sys
import time

import sympy
from pylatexenc import latex2text
from sympy.parsing import sympy_parser

# --- PRM800K: the MATH normalisation (math_normalize.py) ---------------------


def _braced_fracs(s):
    # \frac12 -> \frac{1}{2}, \frac1{72} -> \frac{1}{72}
    parts = s.split("\\frac")
    out = parts[0]
    for part in parts[1:]:
        out += "\\frac"
        if part.startswith("{") or len(part) < 2:
            out += part
            continue
        a, b, rest = part[0], part[1], part[2:]
        out += "{" + a + "}" + (b + rest if b == "{" else "{" + b + "}" + rest)
    return out


def _slash_to_frac(s):
    a, sep, b = s.partition("/")
    if not sep or "/" in b:
        return s
    try:
        ia, ib = int(a), int(b)
    except ValueError:
        return s
    if s != f"{ia}/{ib}":
        return s
    return "\\frac{%d}{%d}" % (ia, ib)


def _braced_sqrt(s):
    parts = s.split("\\sqrt")
    out = parts[0]
    for part in parts[1:]:
        if part and part[0] != "{":
            out += "\\sqrt{" + part[0] + "}" + part[1:]
        else:
            out += "\\sqrt" + part
    return out


def math_normalize(answer):
    answer = answer.strip()
    m = re.search(r"^\\text\{(?P<text>.+?)\}$", answer)
    if m:
        answer = m.group("text").strip()
    s = answer.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    s = s.replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("^{\\circ}", "").replace("^\\circ", "")
    s = s.replace("\\$", "")
    if "\\text{ " in s:  # units on the right
        pieces = s.split("\\text{ ")
        if len(pieces) != 2:
            return answer  # the original raises here and keeps the answer
        s = pieces[0]
    s = s.replace("\\%", "").replace("\\%", "")
    s = s.replace(" .", " 0.").replace("{.", "{0.")
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    pieces = s.split("=")
    if len(pieces) == 2 and len(pieces[0]) <= 2:
        s = pieces[1]
    s = _braced_sqrt(s)
    s = s.replace(" ", "")
    s = _braced_fracs(s)
    if s == "0.5":
        s = "\\frac{1}{2}"
    return _slash_to_frac(s)


# --- PRM800K: grader.py --------------------------------------------------------

UNITS = ["degree", "cm", "centimeter", "meter", "mile", "second", "minute", "hour", "day",
         "week", "month", "year", "foot", "feet", "inch", "yard"]
LATEX_TO_TEXT = latex2text.LatexNodes2Text()


def _is_float(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def _near_int(x):
    try:
        return abs(x - int(round(x))) <= 1e-7
    except (OverflowError, ValueError):
        return False


def _drop_thousands_commas(s):
    pattern = re.compile(r"(\d)(,)(\d\d\d)($|\D)")
    while True:
        t = pattern.sub(r"\1\3\4", s)
        if t == s:
            return t
        s = t


def _str_is_int(s):
    try:
        return _near_int(float(_drop_thousands_commas(s)))
    except ValueError:
        return False


def _is_frac(s):
    return re.search(r"^-?[0-9]+.?/0*[1-9][0-9]*.?$", s) is not None


def _latex_to_text(s):
    s = s.replace("\\tfrac", "\\frac").replace("\\dfrac", "\\frac").replace("\\frac", " \\frac")
    s = LATEX_TO_TEXT.latex_to_text(s)
    for old, new in (("√", "sqrt"), ("π", "pi"), ("∞", "inf"), ("∪", "U"), ("·", "*"), ("×", "*")):
        s = s.replace(old, new)
    return s.strip()


def grader_normalize(s):
    m = re.search(r"^\\text\{(?P<text>.+?)\}$", s)
    if m:
        s = m.group("text")
    s = s.replace("\\%", "%").replace("\\$", "$").replace("$", "").replace("%", "")
    s = s.replace(" or ", " , ").replace(" and ", " , ")
    s = s.replace("million", "*10^6").replace("billion", "*10^9").replace("trillion", "*10^12")
    for unit in UNITS:
        s = re.sub(unit + r"(es)?(s)? *(\^[0-9]+)?", "", s)
    s = re.sub(r"\^ *\\circ", "", s)
    if s and s[0] == "{" and s[-1] == "}":
        s = s[1:-1]
    s = re.sub(r",\\! *", "", s)
    if _is_float(s) and _near_int(float(s)):
        s = str(int(round(float(s))))
    if "\\" in s:
        try:
            s = _latex_to_text(s)
        except Exception:
            pass
    s = re.sub("- *", "-", s)
    s = re.sub("([0-9]) +([0-9])", r"\1+\2", s)  # a mixed number: 7 3/4
    s = s.replace(" ", "").replace("{", "").replace("}", "").lower()
    if _str_is_int(s):
        s = str(int(float(s.replace(",", ""))))
    return s


def _letters(expr):
    return len({c for c in expr.replace("sqrt", "").replace("frac", "") if c.isalpha()})


def _may_evaluate(expr):
    if _letters(expr) > 2:
        return False
    if "^{" in expr or "^(" in expr:
        return False
    return re.search(r"\^[0-9]+\^", expr) is None and re.search(r"\^[0-9][0-9]+", expr) is None


class Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise Timeout()


def _sympy_equal(gold, given):
    expr = f"({gold})-({given})"
    if not _may_evaluate(expr):
        return False
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(10)  # the original has no timeout; sympy can hang
    try:
        diff = sympy_parser.parse_expr(
            expr.replace("^", "**"),
            transformations=sympy_parser.standard_transformations
            + (sympy_parser.implicit_multiplication_application,),
        )
        return sympy.simplify(diff) == 0
    except Exception:
        return False
    finally:
        signal.alarm(0)


def _elements(s):
    s = _drop_thousands_commas(s)
    if not s:
        return []
    if len(s) > 2 and s[0] in "()[]" and s[-1] in "()[]" and not any(c in s[1:-1] for c in "()[]"):
        return [e.strip() for e in s[1:-1].split(",")]
    return [s]


def prm800k(gold, answer):
    if math_normalize(gold) == math_normalize(answer):
        return True
    g, a = grader_normalize(gold), grader_normalize(answer)
    if g == a:
        return True
    if not a:
        return False
    ge, ae = _elements(g), _elements(a)
    if len(ge) > 1 and (g[0] != a[0] or g[-1] != a[-1]):
        return False
    if len(ge) != len(ae):
        return False
    for x, y in zip(ge, ae):
        if _is_frac(x) and _is_frac(y):
            ok = x == y  # unreduced fractions are not accepted
        elif _str_is_int(x) != _str_is_int(y):
            ok = False
        else:
            ok = _sympy_equal(x, y)
        if not ok:
            return False
    return True


# --- Minerva: normalised exact match ---------------------------------------------

SUBSTITUTIONS = [("an ", ""), ("a ", ""), (".$", "$"), ("\\$", ""), ("\\ ", ""), (" ", ""),
                 ("mbox", "text"), (",\\text{and}", ","), ("\\text{and}", ","),
                 ("\\text{m}", "\\text{}")]
REMOVED = ["square", "ways", "integers", "dollars", "mph", "inches", "ft", "hours", "km", "units",
           "\\ldots", "sue", "points", "feet", "minutes", "digits", "cents", "degrees", "cm", "gm",
           "pounds", "meters", "meals", "edges", "students", "childrentickets", "multiples",
           "\\text{s}", "\\text{.}", "\\text{\ns}", "\\text{}^2", "\\text{}^3", "\\text{\n}",
           "\\text{}", "\\mathrm{th}", "^\\circ", "^{\\circ}", "\\;", ",\\!", "{,}", '"', "\\dots"]


def minerva_normalize(s):
    s = s.split("=")[-1]
    for old, new in SUBSTITUTIONS:
        s = s.replace(old, new)
    for r in REMOVED:
        s = s.replace(r, "")
    s = re.sub(r"(.*?)(\$)(.*?)(\$)(.*)", "$\\3$", s)
    s = re.sub(r"(\\text\{)(.*?)(\})", "\\2", s)
    s = re.sub(r"(\\textbf\{)(.*?)(\})", "\\2", s)
    s = re.sub(r"(\\overline\{)(.*?)(\})", "\\2", s)
    s = re.sub(r"(\\boxed\{)(.*)(\})", "\\2", s)
    s = re.sub(r"(frac)([^{])(.)", "frac{\\2}{\\3}", s)
    s = re.sub(r"(sqrt)([^{])", "sqrt{\\2}", s)
    s = s.replace("$", "")
    if s.replace(",", "").isdigit():
        s = s.replace(",", "")
    return s


def minerva(gold, answer):
    return minerva_normalize(gold) == minerva_normalize(answer)


def main():
    pairs = [json.loads(line) for line in sys.stdin if line.strip()]
    verdicts = [{} for _ in pairs]
    seconds = {}
    for name, grade in (("prm800k", prm800k), ("minerva", minerva)):
        start = time.process_time()
        for v, p in zip(verdicts, pairs):
            v[name] = bool(grade(p["gold"], p["answer"]))
        seconds[name + "_seconds"] = time.process_time() - start
    out = sys.stdout
    for v in verdicts:
        out.write(json.dumps(v) + "\n")
    out.write(json.dumps({"checks": len(pairs), **seconds}) + "\n")


if __name__ == "__main__":
    main()
