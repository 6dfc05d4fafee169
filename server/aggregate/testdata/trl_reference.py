#!/usr/bin/python3
"""Independent NumPy reference for server/aggregate (the parity test runs it).

Reads {"cases": [case, ...]} as JSON on stdin and writes
{"results": [{"rewards": [...], "advantages": [...], "unscorable": n}, ...]}
on stdout. NaN travels as JSON null in both directions.

A case is {"mode", "scale", "weights" (list or null), "groups" (list of str),
"scores" (list per function of list per rollout)}.

Two independent transcriptions of the trainers' formulas:

* trl_literal: line-by-line NumPy version of TRL's GRPOTrainer
  ._generate_and_score_completions (trl/trainer/grpo_trainer.py), both
  multi_objective_aggregation branches, and trl/trainer/utils.py nanstd, plus
  Axolotl's HatcheryRLTrainer._compute_advantages
  (src/axolotl/integrations/hatchery/rl_trainer.py). Like TRL it only handles
  a batch laid out as consecutive blocks of num_generations rollouts.
* per_group: the same arithmetic written group by group, for any group ids
  and sizes (non-contiguous, mixed sizes, singletons, empty ids).

When a case fits TRL's layout both run and must agree. The rewardd rules that
sit on top of TRL (see the package doc) are applied once, at the end:
unscorable rows (all functions NaN) get advantage 0; the reported reward is
the weighted nansum of the raw scores in every mode.
"""

import json
import sys

import numpy as np

EPS = 1e-4  # TRL's literal in `advantages / (std_rewards + 1e-4)`
HATCHERY_MIN_VAR = 1e-8


def nanstd(x, axis=None, keepdims=False):
    """trl/trainer/utils.py nanstd: Bessel-corrected, NaN below two values."""
    mean = np.nanmean(x, axis=axis, keepdims=True)
    variance = np.nanmean((x - mean) ** 2, axis=axis, keepdims=True)
    count = np.sum(~np.isnan(x), axis=axis, keepdims=True)
    correction = np.where(count > 1, count / np.where(count > 1, count - 1, 1), np.nan)
    std = np.sqrt(variance * correction)
    if keepdims:
        return std
    return np.squeeze(std, axis=axis)


def torch_std(x):
    """torch.Tensor.std(): unbiased (correction=1)."""
    return np.std(x, ddof=1)


def trl_literal(mode, scale, weights, rewards_per_func, num_generations):
    """rewards_per_func: (N, K); rows are consecutive blocks of num_generations."""
    if mode == "sum_then_normalize":
        rewards = np.nansum(rewards_per_func * weights[None, :], axis=1)
        mean_grouped_rewards = rewards.reshape(-1, num_generations).mean(axis=1)
        mean_grouped_rewards = np.repeat(mean_grouped_rewards, num_generations)
        if scale in ("group", "none"):
            if num_generations > 1:
                std_rewards = np.std(rewards.reshape(-1, num_generations), axis=1, ddof=1)
                std_rewards = np.repeat(std_rewards, num_generations)
            else:
                std_rewards = np.zeros_like(rewards)
        elif scale == "batch":
            std_rewards = np.full_like(rewards, torch_std(rewards)) if rewards.size > 1 else np.zeros_like(rewards)
        else:
            raise ValueError(scale)
        advantages = rewards - mean_grouped_rewards
        if scale != "none":
            advantages = advantages / (std_rewards + EPS)
        return advantages
    if mode == "normalize_then_sum":
        k = rewards_per_func.shape[1]
        grouped = rewards_per_func.reshape(-1, num_generations, k)
        mean_k = np.nanmean(grouped, axis=1, keepdims=True)
        std_k = nanstd(grouped, axis=1, keepdims=True) if num_generations > 1 else np.zeros_like(mean_k)
        reward_k = (grouped - mean_k) / (std_k + EPS)
        reward_k = reward_k.reshape(-1, k)
        rewards = np.nansum(reward_k * weights[None, :], axis=1)
        std_rewards = np.full_like(rewards, torch_std(rewards)) if rewards.size > 1 else np.zeros_like(rewards)
        return (rewards - rewards.mean()) / (std_rewards + EPS)
    if mode == "hatchery":
        # _compute_rewards sums the functions (here NaN-skipping), then
        # _compute_advantages, transcribed as written (pure Python lists).
        rewards = [float(v) for v in np.nansum(rewards_per_func, axis=1)]
        advantages = []
        for i in range(0, len(rewards), num_generations):
            group = rewards[i : i + num_generations]
            mean = sum(group) / len(group)
            var = sum((r - mean) ** 2 for r in group) / max(len(group), 1)
            std = var**0.5 if var > HATCHERY_MIN_VAR else 1.0
            advantages.extend([(r - mean) / std for r in group])
        return np.array(advantages)
    raise ValueError(mode)


def per_group(mode, scale, weights, rewards_per_func, groups):
    """The same formulas over arbitrary group ids; "" is a group of its own."""
    n, k = rewards_per_func.shape
    members = {}
    for i, gid in enumerate(groups):
        key = ("solo", i) if gid == "" else ("id", gid)
        members.setdefault(key, []).append(i)
    advantages = np.zeros(n)
    if mode in ("sum_then_normalize", "hatchery"):
        w = weights if mode == "sum_then_normalize" else np.ones(k)
        rewards = np.nansum(rewards_per_func * w[None, :], axis=1)
        batch_std = torch_std(rewards) if n > 1 else 0.0
        for idx in members.values():
            r = rewards[idx]
            if mode == "hatchery":
                var = np.mean((r - r.mean()) ** 2)
                std = np.sqrt(var) if var > HATCHERY_MIN_VAR else 1.0
                advantages[idx] = (r - r.mean()) / std
                continue
            a = r - r.mean()
            if scale == "group":
                a = a / ((torch_std(r) if len(idx) > 1 else 0.0) + EPS)
            elif scale == "batch":
                a = a / (batch_std + EPS)
            advantages[idx] = a
        return advantages
    if mode == "normalize_then_sum":
        summed = np.zeros(n)
        for idx in members.values():
            block = rewards_per_func[idx, :]
            mean_k = np.nanmean(block, axis=0)
            std_k = nanstd(block, axis=0)
            summed[idx] = np.nansum((block - mean_k) / (std_k + EPS) * weights[None, :], axis=1)
        std = torch_std(summed) if n > 1 else 0.0
        return (summed - summed.mean()) / (std + EPS)
    raise ValueError(mode)


def trl_layout(groups):
    """Returns num_generations if groups are consecutive equal-size blocks of
    distinct non-empty ids (TRL's layout), else None."""
    if not groups or "" in groups:
        return None
    size = 1
    while size < len(groups) and groups[size] == groups[0]:
        size += 1
    if len(groups) % size:
        return None
    seen = set()
    for start in range(0, len(groups), size):
        block = groups[start : start + size]
        if len(set(block)) != 1 or block[0] in seen:
            return None
        seen.add(block[0])
    return size


def run_case(case):
    mode, scale = case["mode"], case["scale"]
    scores = np.array(
        [[np.nan if v is None else v for v in col] for col in case["scores"]], dtype=np.float64
    )
    rewards_per_func = scores.T  # (N, K), TRL's layout
    k = rewards_per_func.shape[1]
    weights = np.ones(k) if case["weights"] is None else np.array(case["weights"], dtype=np.float64)
    groups = case["groups"]

    advantages = per_group(mode, scale, weights, rewards_per_func, groups)
    g = trl_layout(groups)
    if g is not None:
        literal = trl_literal(mode, scale, weights, rewards_per_func, g)
        if not np.allclose(literal, advantages, rtol=1e-9, atol=1e-9, equal_nan=True):
            raise AssertionError(f"reference paths disagree on {case}: {literal} vs {advantages}")
        advantages = literal

    unscorable = np.isnan(rewards_per_func).all(axis=1)
    advantages = np.where(unscorable, 0.0, advantages)
    w = np.ones(k) if mode == "hatchery" else weights
    rewards = np.nansum(rewards_per_func * w[None, :], axis=1)
    return {
        "rewards": [None if np.isnan(v) else float(v) for v in rewards],
        "advantages": [None if np.isnan(v) else float(v) for v in advantages],
        "unscorable": int(unscorable.sum()),
    }


def main():
    request = json.load(sys.stdin)
    with np.errstate(invalid="ignore", divide="ignore"):
        import warnings

        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-NaN slice
        results = [run_case(c) for c in request["cases"]]
    json.dump({"results": results}, sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main()
