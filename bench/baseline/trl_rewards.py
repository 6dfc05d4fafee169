"""rewardd's default string reward functions, written the way TRL users write them.

This is the baseline `rewardd-bench` compares against: the six functions of
server/config/default.yaml (accuracy, format, tag_count, reasoning_steps,
repetition, overlong) as in-process Python with the `re` module, in the style
of open-r1's rewards.py, with TRL's reward-function signature:

    f(prompts, completions, **kwargs) -> list[float | None]

where kwargs carries the dataset columns (here `answer`, a GSM8K solution
ending in "#### n"). TRL calls each function once per batch, one after the
other, in the trainer process; so does this baseline.

Where the functions follow the config rather than open-r1 verbatim, it is so
that both sides do the same work and give the same scores on the bench rows
(the bench checks that they agree):

  - accuracy: the extractor chain of the config (last <answer>…</answer>,
    last \\boxed{…}, the text after the last "####", the last number), then a
    numeric comparison; open-r1 uses math_verify, which is not installed here.
  - format: the whole (stripped) completion is <think>…</think><answer>…</answer>;
    open-r1 also demands newlines around the tags.
  - tag_count: each bare tag present exactly once earns 0.25; open-r1 counts
    "<think>\\n", "\\n</think>\\n", "\\n<answer>\\n", "\\n</answer>".
  - reasoning_steps: open-r1's pattern, with re.MULTILINE as the config's m flag.
  - repetition: open-r1's get_repetition_penalty_reward (ngram_size 3,
    max_penalty -1) verbatim.
  - overlong: DAPO's soft overlong punishment (open-r1's
    get_soft_overlong_punishment) counting words (str.split) instead of
    completion token ids, as the config's unit: words does; max 768, buffer 192.

Run as a program, it scores the rows of a JSONL file in batches and prints
timings as JSON (see main). Standard library only.
"""

import argparse
import json
import re
import sys
import time

import measure  # beside this script (bench/baseline/measure.py)


def accuracy_reward(completions, answer, **kwargs):
    """1.0 when the completion's final answer equals the reference's, else 0.0;
    None when the row has no usable reference."""
    rewards = []
    for content, sol in zip(completions, answer):
        gold = sol.split("####")[-1].strip() if sol else ""
        if not gold:
            rewards.append(None)
            continue
        pred = extract_answer(content)
        if pred is None:
            rewards.append(0.0)
            continue
        g, p = to_number(gold), to_number(pred)
        if g is not None and p is not None:
            rewards.append(1.0 if g == p else 0.0)
        else:
            rewards.append(1.0 if pred.strip() == gold else 0.0)
    return rewards


def extract_answer(text):
    """The first answer found by: last <answer> tag, last \\boxed{}, GSM8K's
    "#### n", the last number."""
    tags = re.findall(r"<answer>(.*?)</answer>", text, re.DOTALL)
    if tags and tags[-1].strip():
        return tags[-1]
    boxed = last_boxed_only_string(text)
    if boxed is not None and boxed.strip():
        return boxed
    if "####" in text:
        after = text.split("####")[-1].split("\n")[0].strip()
        if after:
            return after
    numbers = re.findall(r"-?[\d,]*\.?\d+", text)
    if numbers:
        return numbers[-1]
    return None


def last_boxed_only_string(string):
    """The content of the last \\boxed{...}, braces balanced (the helper
    from the MATH dataset's utilities that reward functions copy)."""
    idx = string.rfind("\\boxed")
    if idx < 0:
        idx = string.rfind("\\fbox")
        if idx < 0:
            return None
    i = string.find("{", idx)
    if i < 0:
        return None
    depth = 0
    for j in range(i, len(string)):
        if string[j] == "{":
            depth += 1
        elif string[j] == "}":
            depth -= 1
            if depth == 0:
                return string[i + 1 : j]
    return None


def to_number(s):
    s = s.strip().replace(",", "").replace("$", "").rstrip("%").rstrip(".")
    try:
        return float(s)
    except ValueError:
        return None


def format_reward(completions, **kwargs):
    """1.0 when the completion is <think>…</think><answer>…</answer>."""
    pattern = r"^<think>.*?</think>\s*<answer>.*?</answer>$"
    return [1.0 if re.match(pattern, c.strip(), re.DOTALL) else 0.0 for c in completions]


def tag_count_reward(completions, **kwargs):
    """open-r1's tag_count: 0.25 for each tag present exactly once."""

    def count_tags(text):
        count = 0.0
        if text.count("<think>") == 1:
            count += 0.25
        if text.count("</think>") == 1:
            count += 0.25
        if text.count("<answer>") == 1:
            count += 0.25
        if text.count("</answer>") == 1:
            count += 0.25
        return count

    return [count_tags(c) for c in completions]


def reasoning_steps_reward(completions, **kwargs):
    """open-r1's reasoning_steps: credit for step markers, full at 3."""
    pattern = r"(Step \d+:|^\d+\.|\n-|\n\*|First,|Second,|Next,|Finally,)"
    matches = [len(re.findall(pattern, c, re.MULTILINE)) for c in completions]
    return [min(1.0, count / 3) for count in matches]


def zipngram(text, ngram_size):
    words = text.lower().split()
    return zip(*[words[i:] for i in range(ngram_size)]), words


def repetition_penalty_reward(completions, ngram_size=3, max_penalty=-1.0, **kwargs):
    """open-r1's repetition penalty: (1 - unique/total word n-grams) * max_penalty."""
    rewards = []
    for completion in completions:
        if completion == "":
            rewards.append(0.0)
            continue
        if len(completion.split()) < ngram_size:
            rewards.append(0.0)
            continue
        ngrams = set()
        total = 0
        ngram_array, words = zipngram(completion, ngram_size)
        for ng in ngram_array:
            ngrams.add(ng)
            total += 1
        scaling = 1 - len(ngrams) / total
        rewards.append(scaling * max_penalty)
    return rewards


def overlong_reward(completions, max_completion_len=768, soft_punish_cache=192, **kwargs):
    """DAPO's soft overlong punishment, the length in words."""
    rewards = []
    for completion in completions:
        completion_length = len(completion.split())
        if completion_length <= max_completion_len - soft_punish_cache:
            rewards.append(0.0)
        elif max_completion_len - soft_punish_cache < completion_length <= max_completion_len:
            rewards.append(-1.0 * (completion_length - (max_completion_len - soft_punish_cache)) / soft_punish_cache)
        else:
            rewards.append(-1.0)
    return rewards


# The reward functions in config order, under their config names.
FUNCTIONS = {
    "accuracy": accuracy_reward,
    "format": format_reward,
    "tag_count": tag_count_reward,
    "reasoning_steps": reasoning_steps_reward,
    "repetition": repetition_penalty_reward,
    "overlong": overlong_reward,
}


def read_rows(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def columns(rows):
    """The keyword arguments TRL passes: prompts, completions, and every
    other dataset column as a list."""
    kwargs = {"prompts": [r.get("prompt", "") for r in rows], "completions": [r["completion"] for r in rows]}
    for key in rows[0]:
        if key not in ("id", "group", "prompt", "completion"):
            kwargs[key] = [r.get(key) for r in rows]
    return kwargs


def select(names):
    """The functions called names (comma-separated; all when empty)."""
    if not names:
        return dict(FUNCTIONS)
    unknown = [n for n in names.split(",") if n not in FUNCTIONS]
    if unknown:
        raise SystemExit(f"unknown function(s) {unknown}; this baseline has {list(FUNCTIONS)}")
    return {n: FUNCTIONS[n] for n in names.split(",")}


def score_batch(kwargs, functions=FUNCTIONS, per_function=None):
    """Calls every function on one batch, as TRL does, and returns
    {name: scores}. per_function, when given, accumulates seconds per
    function."""
    out = {}
    for name, fn in functions.items():
        start = time.perf_counter()
        out[name] = fn(**kwargs)
        if per_function is not None:
            per_function[name] += time.perf_counter() - start
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", required=True, help="JSONL rows, batches in file order")
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--duration", type=float, default=0, help="seconds to run (at least one batch)")
    ap.add_argument("--batches", type=int, default=0, help="batches to run (instead of --duration)")
    ap.add_argument("--functions", default="", help="comma-separated function names (default: all)")
    args = ap.parse_args()
    functions = select(args.functions)

    rows = read_rows(args.rows)
    b = args.batch_size
    batches = [columns(rows[i : i + b]) for i in range(0, len(rows), b)]
    # The scores of the first batch, for the bench's agreement check; also
    # a warm-up (re's pattern cache).
    first = score_batch(batches[0], functions)

    per_function = {name: 0.0 for name in functions}
    latencies = []
    rollouts = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    n = 0
    while True:
        if args.batches and n >= args.batches:
            break
        if not args.batches and n > 0 and time.perf_counter() - t0 >= args.duration:
            break
        kw = batches[n % len(batches)]
        start = time.perf_counter()
        score_batch(kw, functions, per_function)
        latencies.append(time.perf_counter() - start)
        rollouts += len(kw["completions"])
        n += 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0

    json.dump(
        {
            "python": sys.version.split()[0],
            "batches": n,
            "rollouts": rollouts,
            "functions": list(functions),
            "wall_seconds": wall,
            "cpu_seconds": cpu,
            "latencies_seconds": latencies,
            "per_function_seconds": per_function,
            "peak_rss_bytes": measure.peak_rss_bytes(),
            "first_batch_scores": first,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
