"""rewardd_client: the trainer side of rewardd.

- rewardd_client.remote.<name>: TRL reward functions (one round trip per batch
  for all of them), e.g. `trl.reward_funcs: [rewardd_client.remote.accuracy]`.
- rewardd_client.hatchery.<name>: reward functions for Axolotl's Hatchery plugin.
- python -m rewardd_client.validate rewards.py:fn --samples rows.jsonl: checks a
  TRL reward function.
- Client: the gRPC client underneath, configured by REWARDD_* variables.

Needs only grpcio and protobuf.
"""

from .client import VERSION as __version__
from .client import Client, FunctionResult, ScoreResult, Settings, Status
from .errors import ConfigError, FingerprintMismatchError, RewarddError, RewarddWarning, RPCError, ScoreError
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
    "gold",
    "hatchery",
    "remote",
    "reset",
]


def reset() -> None:
    """Closes the client behind rewardd_client.remote and .hatchery and forgets
    cached batches; the next call reads the REWARDD_* variables again."""
    from ._functions import DEFAULT

    DEFAULT.reset()
