"""TRL reward functions scored by a rewardd server.

Every attribute of this module is a reward function with TRL's signature,
named after the served function it scores with:

    from rewardd_client import remote
    trainer = GRPOTrainer(..., reward_funcs=[remote.accuracy, remote.format])

or, in an Axolotl config,

    trl:
      reward_funcs: [rewardd_client.remote.accuracy, rewardd_client.remote.format]

A function returns one float per completion, None where the function does
not apply (NOT_APPLICABLE) or could not decide (ERROR: a RewarddWarning gives
the counts, or ScoreError is raised when REWARDD_ON_ERROR=raise). The first
function called on a batch scores it with all the functions taken from this
module (and hatchery), in one round trip; the others read that result.
Names that are not Python identifiers: getattr(remote, "my-fn").

The server comes from REWARDD_ADDR (see rewardd_client.Settings).
"""

# This module's namespace holds only dunder and underscore names, so that
# every served function name reaches __getattr__.
from . import _functions as _functions


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _functions.DEFAULT.trl(name, __name__)

