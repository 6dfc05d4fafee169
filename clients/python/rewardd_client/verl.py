"""verl custom reward functions scored by a rewardd server.

    reward:
      custom_reward_function:
        path: pkg://rewardd_client.verl
        name: compute_score            # compute_score_sync, compute_score_batch: see below
        reward_kwargs:
          functions: {openai/gsm8k: [accuracy, format], codecontests: tests, "*": accuracy}
          ground_truth_field: {codecontests: tests}    # default: answer

- compute_score (async): verl's reward loop awaits it once per sample, many
  samples at once. The calls of a short window (REWARDD_VERL_WINDOW_MS,
  default 5 ms; at most REWARDD_VERL_MAX_BATCH rollouts, default 256) are
  scored with ONE Score RPC, and each call gets its own sample's result.
- compute_score_sync: the same result, for the reward managers that call the
  function synchronously (verl/workers/reward_manager naive, dapo, prime);
  one Score RPC per call.
- compute_score_batch: verl's batch signature (data_sources, solution_strs,
  ground_truths, extra_infos) for reward_manager batch; one Score RPC per call,
  a list back.

A sample is one rollout: the solution is the completion, each extra_info
entry a row field, and the ground truth goes into the field
ground_truth_field names for its data source (default "answer"; code rows'
JSON tests into "tests", which code_exec reads). Its score is the weighted
sum (the server config's weights, or reward_kwargs weights) of the OK values
of the functions `functions` names for its data source; by default every
served function.

The result is a dict verl logs: "score" (and "acc", the same number), one
key per function (its value, NaN where it gave none), "rewardd_status" (ok,
not_applicable, error) and "rewardd_reason"; or the bare float with
return_dict: false. verl cannot take a missing score: a NaN reward makes the
advantages of the whole GRPO group NaN. So a rollout with an ERROR in one of
its functions raises ScoreError (on_error: raise, the default), or scores
the number on_error gives, flagged rewardd_status "error" with a
RewarddWarning; one none of whose functions apply scores on_not_applicable
(default 0.0, the same for the whole group: no advantage), flagged
"not_applicable", or raises. Each option is also a REWARDD_VERL_<NAME>
variable (reward_kwargs win); the server comes from REWARDD_ADDR and the
other REWARDD_* variables of rewardd_client.Settings.

This module imports rewardd_client by its absolute name, so it works as well
when verl loads it from its file path (custom_reward_function.path:
/…/rewardd_client/verl.py): the state it runs on is rewardd_client's.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional, Sequence

from rewardd_client import _verl

__all__ = ["compute_score", "compute_score_sync", "compute_score_batch"]


async def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Optional[dict] = None, **kwargs: Any) -> Any:
    """Scores one sample, batched with the calls of the same short window.

    verl's reward loop signature (keywords data_source, solution_str,
    ground_truth, extra_info, plus reward_kwargs). Returns the result dict
    (or float, return_dict: false). Raises ConfigError for bad options or a
    data source with no functions, RewarddError for a function the server
    does not serve, RPCError when the server cannot be reached, ScoreError
    where on_error / on_not_applicable say raise.
    """
    state = _verl.DEFAULT
    future = state.submit(_verl.make_item(state.options(kwargs), data_source, solution_str, ground_truth, extra_info))
    return await asyncio.wrap_future(future)


def compute_score_sync(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Optional[dict] = None, **kwargs: Any) -> Any:
    """compute_score for callers that need the result now: one Score RPC per call.

    verl's synchronous reward managers call it with keywords (naive, dapo) or
    positionally, in worker processes (prime).
    """
    state = _verl.DEFAULT
    (outcome,) = state.score([_verl.make_item(state.options(kwargs), data_source, solution_str, ground_truth, extra_info)])
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Optional[Sequence[Any]] = None,
    **kwargs: Any,
) -> list:
    """verl's batch signature (reward_manager batch): one result per sample,
    in order, from one Score RPC. Any sample's exception fails the call."""
    n = len(solution_strs)
    if extra_infos is None:
        extra_infos = [None] * n
    if not len(data_sources) == len(ground_truths) == len(extra_infos) == n:
        raise ValueError(
            f"rewardd: got {len(data_sources)} data_sources, {n} solution_strs, "
            f"{len(ground_truths)} ground_truths and {len(extra_infos)} extra_infos: want one each per sample"
        )
    state = _verl.DEFAULT
    options = state.options(kwargs)
    items = [_verl.make_item(options, ds, s, gt, ei) for ds, s, gt, ei in zip(data_sources, solution_strs, ground_truths, extra_infos)]
    if not items:
        return []
    outcomes = state.score(items)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return outcomes
