"""rewardd_client: the trainer side of rewardd.

- rewardd_client.remote.<name>: TRL reward functions (one round trip per batch
  for all of them), e.g. `trl.reward_funcs: [rewardd_client.remote.accuracy]`.
- rewardd_client.hatchery.<name>: reward functions for Axolotl's Hatchery plugin.
- rewardd_client.verl.compute_score: verl's custom reward function (async, the
  concurrent calls of a few milliseconds in one round trip), with
  compute_score_sync and compute_score_batch for verl's other reward managers.
- python -m rewardd_client.validate rewards.py:fn --samples rows.jsonl: checks a
  TRL reward function.
- Client: the gRPC client underneath, configured by REWARDD_* variables.

Needs only grpcio and protobuf.
"""

from .client import VERSION as __version__
from .client import Client, FunctionResult, ScoreResult, Settings, Status
from .errors import ConfigError, FingerprintMismatchError, RewarddError, RewarddWarning, RPCError, ScoreError, UnknownFunctionError
from ._functions import RewardFunctions, gold
from . import hatchery, remote

__all__ = [
    "Client",
    "ConfigError",
    "FingerprintMismatchError",
    "FunctionResult",
    "RPCError",
    "RewardFunctions",
    "RewarddError",
    "RewarddWarning",
    "ScoreError",
    "ScoreResult",
    "Settings",
    "Status",
    "UnknownFunctionError",
    "gold",
    "hatchery",
    "remote",
    "reset",
]


def reset() -> None:
    """Closes the clients behind rewardd_client.remote, .hatchery and .verl
    (scoring what .verl has pending first) and forgets cached batches; the
    next call reads the REWARDD_* variables again."""
    from . import _functions, _verl

    _functions.DEFAULT.reset()
    _verl.DEFAULT.reset()
