"""Exceptions and warnings of rewardd_client."""

from __future__ import annotations

import grpc


class RewarddError(Exception):
    """Base class of the errors rewardd_client raises."""


class ConfigError(RewarddError, ValueError):
    """A REWARDD_* environment variable or a constructor argument is invalid."""


class RPCError(RewarddError):
    """A call to the server failed (after the retries it was allowed).

    code is the gRPC status code of the last attempt; attempts counts them.
    hint names the likely mistake when one is known (a plaintext client at a
    TLS port), and the call was then not retried.
    """

    def __init__(self, method: str, target: str, code: grpc.StatusCode, details: str, attempts: int, hint: str = ""):
        self.method, self.target, self.code, self.details, self.attempts = method, target, code, details, attempts
        self.hint = hint
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        why = f" ({hint})" if hint else ""
        super().__init__(f"rewardd: {method} on {target} failed{tries}: {code.name}: {details}{why}")


class UnknownFunctionError(RewarddError, AttributeError):
    """A reward function names a function the server does not serve."""

    def __init__(self, name: str, target: str, served: "tuple[str, ...]"):
        self.name, self.target, self.served = name, target, served
        super().__init__(f"rewardd: function {name!r} is not served by {target} (served: {', '.join(served) or 'none'})")


class FingerprintMismatchError(RewarddError):
    """The server's config fingerprint is not the one REWARDD_FINGERPRINT expects."""

    def __init__(self, expected: str, served: str, target: str):
        self.expected, self.served, self.target = expected, served, target
        super().__init__(
            f"rewardd: config fingerprint mismatch: REWARDD_FINGERPRINT expects {expected} "
            f"but the server at {target} serves {served}; score with the config you expect, "
            f"or update REWARDD_FINGERPRINT"
        )


class ScoreError(RewarddError):
    """A function could not score a rollout (status ERROR) and the caller asked
    to raise (REWARDD_ON_ERROR=raise; for rewardd_client.verl, on_error or
    on_not_applicable "raise").

    row is the index of the first such rollout in the batch, reason the
    server's reason for it, count how many rollouts of the batch erred. what
    names the rollout in the message when a row index means nothing to the
    caller (default: "row <row>").
    """

    def __init__(self, function: str, row: int, reason: str, count: int, total: int, what: str = ""):
        self.function, self.row, self.reason, self.count, self.total = function, row, reason, count, total
        more = f" ({count} of {total} rollouts erred)" if count > 1 else ""
        super().__init__(f"rewardd: function {function!r} could not score {what or f'row {row}'}: {reason}{more}")


class RewarddWarning(UserWarning):
    """Rollouts got ERROR (and count as None), or a column could not be sent."""
