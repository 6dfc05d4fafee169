"""Reward functions for Axolotl's Hatchery plugin, scored by a rewardd server.

Every attribute of this module is a reward function f(prompts, completions)
as the Hatchery trainer calls it:

    hatchery:
      reward_funcs: [rewardd_client.hatchery.accuracy]

The gold answer is read from the prompt, the first <|gold|>…<|/gold|>
(stripped), and sent as the row field `answer`. Hatchery adds rewards up as
floats, so where the function does not apply (no gold) the reward is 0.0,
and where it could not decide (ERROR) it is 0.0 after a RewarddWarning with
the counts, or ScoreError when REWARDD_ON_ERROR=raise. As with
rewardd_client.remote, all functions of one batch cost one round trip.
"""

from . import _functions as _functions


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _functions.DEFAULT.hatchery(name, __name__)
