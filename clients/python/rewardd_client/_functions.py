"""Reward functions backed by a rewardd server, one round trip per batch.

A trainer calls its reward functions one after the other with the same
batch. The first call scores the batch with every function the trainer
asked for (each function object made here registers its name) and caches
the result with the batch; the others find it by comparing content
(_rows.Batch.same: cheap when TRL passes the same lists again) and read
their column from it. Each function reads a cached batch once: a later batch
with the same content is scored again.
"""

from __future__ import annotations

import os
import re
import threading
import warnings
from typing import Any, Callable, Optional, Sequence

import grpc

from . import _rows
from .client import Client, FunctionResult, ScoreResult, Status
from .errors import RewarddError, RewarddWarning, RPCError, ScoreError, UnknownFunctionError

# Batches kept for the functions that have not read them yet. A trainer
# reads each batch right after scoring it, so a few suffice.
CACHE_BATCHES = 8

_GOLD = re.compile(r"<\|gold\|>(.*?)<\|/gold\|>", re.DOTALL)


class _Entry:
    """One batch's result, being fetched or fetched."""

    def __init__(self, batch: _rows.Batch, wanted: Sequence[str], reader: str, ok_reasons: bool):
        self.batch = batch
        self.wanted = tuple(wanted)
        self.ok_reasons = ok_reasons  # whether the result has the reasons of OK scores
        self.unread = set(wanted) - {reader}
        self.done = threading.Event()
        self.result: Optional[ScoreResult] = None
        self.error: Optional[BaseException] = None


class RewardFunctions:
    """Makes TRL and Hatchery reward functions that share a client and a cache.

    client_factory makes the client on first use (and again in a forked
    child, since gRPC channels do not survive fork).
    """

    def __init__(self, client_factory: Callable[[], Client] = Client.from_env, cache_batches: int = CACHE_BATCHES):
        self._factory = client_factory
        self._capacity = cache_batches
        self._lock = threading.Lock()
        self._names: dict[str, None] = {}  # registration order
        self._made: dict[tuple[str, str], Callable[..., list]] = {}
        self._reset_locked()

    def _reset_locked(self) -> None:
        self._client: Optional[Client] = None
        self._pid = os.getpid()
        self._served: Optional[tuple[str, ...]] = None
        self._cache: list[_Entry] = []  # oldest first
        self._warned_all_none: set[str] = set()

    def reset(self) -> None:
        """Closes the client and forgets cached batches; the next call reads the environment again."""
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                self._client.close()
            self._reset_locked()

    def client(self) -> Client:
        with self._lock:
            if self._pid != os.getpid():
                self._reset_locked()  # forked: the parent's channel is unusable here
            if self._client is None:
                self._client = self._factory()
            return self._client

    # --- the functions -------------------------------------------------------

    def trl(self, name: str, module: str = "rewardd_client.remote") -> Callable[..., list]:
        """The TRL reward function scoring with the served function `name`.

        Called as TRL does, f(prompts=…, completions=…, completion_ids=…,
        trainer_state=…, **dataset_columns); returns one float per completion,
        or None where the function does not apply (NOT_APPLICABLE) or could
        not decide (ERROR, with a RewarddWarning; ScoreError when
        REWARDD_ON_ERROR=raise). With TRL's log_extra, the reasons
        (FunctionResult.reasons) go into the completions table as the column
        "<name>_reason".
        """

        def reward(prompts: Optional[Sequence[Any]], completions: Sequence[Any], **kwargs: Any) -> list[Optional[float]]:
            batch = _rows.make_batch(prompts, completions, kwargs)
            if not len(batch):
                return []
            log_extra = kwargs.get("log_extra")
            # Without log_extra nothing reads the reasons of OK scores: the
            # server leaves them out (a smaller answer, quicker to read).
            result = self._score(name, batch, counted_as="None", ok_reasons=callable(log_extra))
            if callable(log_extra):
                log_extra(f"{name}_reason", result.reasons())
            return result.rewards()

        return self._named(reward, name, module, "trl")

    def hatchery(self, name: str, module: str = "rewardd_client.hatchery") -> Callable[..., list]:
        """The Hatchery reward function scoring with the served function `name`.

        Called as Axolotl's Hatchery trainer does, f(prompts, completions),
        with text prompts carrying the gold answer as <|gold|>…<|/gold|>
        (sent as the field `answer`). Hatchery sums rewards as floats, so
        NOT_APPLICABLE (e.g. no gold in the prompt) gives 0.0, and so does
        ERROR after a RewarddWarning (ScoreError when REWARDD_ON_ERROR=raise).
        """

        def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
            texts = _rows.texts(prompts, completion=False, what="prompts")
            golds = [gold(t) for t in texts]
            answers = {"answer": golds} if any(g is not None for g in golds) else {}
            batch = _rows.make_batch(texts, completions, answers)
            if not len(batch):
                return []
            result = self._score(name, batch, counted_as="0.0", ok_reasons=False)
            return [v if v is not None else 0.0 for v in result.rewards()]

        return self._named(reward, name, module, "hatchery")

    def _named(self, fn: Callable[..., list], name: str, module: str, flavour: str) -> Callable[..., list]:
        with self._lock:
            made = self._made.get((flavour, name))
            if made is not None:
                return made
        self._check_served(name)
        with self._lock:
            made = self._made.get((flavour, name))
            if made is not None:
                return made
            self._names.setdefault(name, None)
            fn.__name__ = fn.__qualname__ = name
            fn.__module__ = module
            fn.__doc__ = (
                f"rewardd function {name!r}, scored by the server at REWARDD_ADDR "
                f"({'TRL' if flavour == 'trl' else 'Hatchery'} reward-function signature)."
            )
            self._made[(flavour, name)] = fn
            return fn

    def _check_served(self, name: str) -> None:
        """Raises UnknownFunctionError when the server does not serve name.

        Called when a function is first taken from the module, i.e. when the
        trainer builds its list of reward functions: TRL calls them only after
        its first generation, minutes later. One quick attempt: a server that
        cannot be reached now gets a RewarddWarning, and the first call checks
        the name again.
        """
        client = self.client()
        with self._lock:
            served = self._served
        if served is None:
            try:
                resp = client.list_functions(max_attempts=1, timeout=min(client.settings.timeout, 10.0))
            except RPCError as err:
                if err.code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED) or err.hint:
                    raise  # a wrong token, transport or fingerprint: no later call would do better
                warnings.warn(
                    f"rewardd: cannot check now that {client.target} serves {name!r} "
                    f"({err.code.name}: {err.details}); the first call checks it",
                    RewarddWarning,
                    stacklevel=5,  # the trainer's remote.<name>
                )
                return
            served = tuple(f.name for f in resp.functions)
            with self._lock:
                if self._client is client:
                    self._served = served
        if name not in served:
            raise UnknownFunctionError(name, client.target, served)

    # --- one round trip per batch -------------------------------------------

    def _score(self, name: str, batch: _rows.Batch, counted_as: str, ok_reasons: bool) -> FunctionResult:
        """The result of the function `name` on batch (see _read), its errors
        and a batch it applies to none of reported, each counted as counted_as."""
        result = self._read(name, batch, ok_reasons)
        self._report_errors(result, counted_as=counted_as)
        self._report_all_not_applicable(result, batch, counted_as=counted_as)
        return result

    def _read(self, name: str, batch: _rows.Batch, ok_reasons: bool) -> FunctionResult:
        """The result of the function `name` on batch: from the cached entry
        of the same content when the function has not read it yet (and it
        has the reasons of OK scores if ok_reasons), else scored now for
        every function made here, with those reasons if ok_reasons."""
        client = self.client()
        with self._lock:
            # At most one entry per content: a new one replaces the old.
            cached = next((e for e in self._cache if e.batch.same(batch)), None)
            if cached is not None and name in cached.unread and (cached.ok_reasons or not ok_reasons):
                entry = cached
                entry.unread.discard(name)
                if not entry.unread:
                    self._cache.remove(entry)
                owner = False
            else:
                entry = _Entry(batch, self._wanted(client, name), reader=name, ok_reasons=ok_reasons)
                if entry.unread:
                    if cached is not None:
                        self._cache.remove(cached)
                    self._cache.append(entry)
                    if len(self._cache) > self._capacity:
                        del self._cache[: len(self._cache) - self._capacity]
                owner = True
        if owner:
            try:
                entry.result = client.score_batch(batch, entry.wanted, ok_reasons=ok_reasons)
            except BaseException as err:
                entry.error = err
                with self._lock:
                    if entry in self._cache:
                        self._cache.remove(entry)
                raise
            finally:
                entry.done.set()
        else:
            entry.done.wait()
            if entry.error is not None:
                raise RewarddError(f"rewardd: scoring this batch failed for {entry.wanted[0]!r}: {entry.error}") from entry.error
        assert entry.result is not None
        result = entry.result.functions.get(name)
        if result is None:
            raise RewarddError(f"rewardd: the server's answer has no scores for {name!r}")
        return result

    def _wanted(self, client: Client, name: str) -> tuple[str, ...]:
        """The functions to score a batch with: the ones made here that the server serves.

        Called with the lock held; asks the server for its functions once per client.
        """
        if self._served is None:
            served = tuple(f.name for f in client.list_functions().functions)
            self._served = served
        if name not in self._served:
            raise UnknownFunctionError(name, client.target, self._served)
        return tuple(n for n in self._names if n in self._served)

    def _report_errors(self, result: FunctionResult, counted_as: str) -> None:
        rows = result.error_rows()
        if not rows:
            return
        first = rows[0]
        reason = result.errors.get(first) or (
            "no reason given" if result.status[first] == Status.ERROR else "the server sent no status"
        )
        client = self.client()
        if client.settings.on_error == "raise":
            raise ScoreError(result.name, first, reason, len(rows), len(result.status))
        warnings.warn(
            f"rewardd: function {result.name!r}: {len(rows)} of {len(result.status)} rollouts got ERROR "
            f"and count as {counted_as} (first: row {first}: {reason}); REWARDD_ON_ERROR=raise makes this an exception",
            RewarddWarning,
            stacklevel=3,  # the trainer's call of the reward function
        )


    def _report_all_not_applicable(self, result: FunctionResult, batch: _rows.Batch, counted_as: str) -> None:
        """Warns, once per function, when it applied to no rollout of a batch:
        most often a dataset column that is missing or named otherwise than
        the function's *_field."""
        na = Status.NOT_APPLICABLE
        if not result.status or any(st != na for st in result.status):
            return
        with self._lock:
            if result.name in self._warned_all_none:
                return
            self._warned_all_none.add(result.name)
        reason = result.errors.get(0) or "no reason given"
        columns = ", ".join(sorted(batch.columns)) or "none"
        warnings.warn(
            f"rewardd: function {result.name!r} applied to none of the {len(result.status)} rollouts of this batch "
            f"and gave {counted_as} for each (NOT_APPLICABLE; row 0: {reason}); the dataset columns sent: {columns}. "
            f"A missing or misnamed column? (said once per function)",
            RewarddWarning,
            stacklevel=3,  # the trainer's call of the reward function
        )


def gold(prompt: str) -> Optional[str]:
    """The gold answer in a Hatchery prompt: the first <|gold|>…<|/gold|>, stripped."""
    m = _GOLD.search(prompt)
    return m.group(1).strip() if m else None


DEFAULT = RewardFunctions()
