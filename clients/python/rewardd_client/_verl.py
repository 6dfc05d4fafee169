"""What rewardd_client.verl's functions run on: options, rows, batches.

verl calls a custom reward function once per sample (data_source,
solution_str, ground_truth, extra_info, **reward_kwargs), or once per batch
with the plural names. Each sample becomes an Item: its rollout (the
solution as completion, extra_info's entries and the ground truth as row
fields), the served functions that score its data source, and the options
saying what the result becomes. score_items scores a list of items with one
Score RPC; Batcher gathers the items of concurrent callers into such lists.

The state is per process (Verl.DEFAULT), made on first use and made again
in a forked child, as for rewardd_client.remote.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import os
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _rows
from .client import Client, ScoreResult, Status
from .errors import ConfigError, RewarddError, RewarddWarning, ScoreError

DEFAULT_WINDOW_MS = 5.0
DEFAULT_MAX_BATCH = 256
# Batches in flight at once; while all are, new calls keep joining the next.
MAX_INFLIGHT = 4
# Distinct keyword-argument sets whose options are kept parsed.
PARSED_OPTIONS = 64
# The data source key of a mapping that stands for every other data source.
ANY_SOURCE = "*"
DEFAULT_GROUND_TRUTH_FIELD = "answer"

# Keyword arguments verl itself adds to the call (the reward loop, when a
# reward model is served): accepted and not sent.
VERL_KWARGS = frozenset({"reward_router_address", "reward_model_tokenizer"})
OPTION_NAMES = ("functions", "ground_truth_field", "on_error", "on_not_applicable", "weights", "return_dict")

# Keys of the returned dict that are not a function's column.
SCORE_KEYS = ("score", "acc")
FLAG_KEYS = ("rewardd_status", "rewardd_reason")
_RESERVED = frozenset(SCORE_KEYS + FLAG_KEYS)

OK, NOT_APPLICABLE, ERROR = "ok", "not_applicable", "error"

Policy = Union[str, float]  # "raise", or the score to give
RAISE = "raise"


# --- options -------------------------------------------------------------------


@dataclass(frozen=True)
class BySource:
    """A value per data source: by_source[data_source], else by_source["*"]."""

    by_source: Mapping[Any, Any]

    def get(self, data_source: Any, default: Any = None) -> Any:
        v = self.by_source.get(data_source)
        if v is None:
            v = self.by_source.get(ANY_SOURCE, default)
        return v


@dataclass(frozen=True)
class Options:
    """What one call asks for (reward_kwargs over the REWARDD_VERL_* variables).

    functions:          served function names per data source; None: every
                        served function, for every data source.
    ground_truth_field: the row field that ground_truth fills, per data source.
    on_error:           a rollout with an ERROR in one of its functions
                        raises ScoreError ("raise"), or scores this number.
    on_not_applicable:  a rollout none of whose functions apply raises
                        ScoreError ("raise"), or scores this number.
    weights:            weight per function name, over the server's config.
    return_dict:        a dict with "score" and the flags, or the bare float.
    """

    functions: Optional[BySource] = None
    ground_truth_field: BySource = BySource({ANY_SOURCE: DEFAULT_GROUND_TRUTH_FIELD})
    on_error: Policy = RAISE
    on_not_applicable: Policy = 0.0
    weights: Mapping[str, float] = field(default_factory=dict)
    return_dict: bool = True

    def functions_for(self, data_source: Any) -> Optional[tuple[str, ...]]:
        """The functions scoring data_source; None for every served one.
        Raises ConfigError when a mapping has no entry for it."""
        if self.functions is None:
            return None
        names = self.functions.get(data_source)
        if names is None:
            known = ", ".join(repr(k) for k in self.functions.by_source)
            raise ConfigError(
                f"rewardd: data source {str(data_source)!r} has no functions: functions maps {known} "
                f"and has no {ANY_SOURCE!r} entry for the others"
            )
        return names

    def columns(self) -> Optional[tuple[str, ...]]:
        """Every function the options can name (the per-function keys of the
        returned dict, the same for every data source); None: the served ones."""
        if self.functions is None:
            return None
        out: dict[str, None] = {}
        for names in self.functions.by_source.values():
            out.update(dict.fromkeys(names))
        return tuple(out)


def _names(value: Any, what: str) -> tuple[str, ...]:
    """Function names: "a", "a,b", or a list of names."""
    if isinstance(value, str):
        names = [n.strip() for n in value.split(",")]
    elif isinstance(value, Mapping) or not hasattr(value, "__iter__"):
        raise ConfigError(f"{what}: want a function name or a list of them, got {type(value).__name__}")
    else:
        names = list(value)
        for n in names:
            if not isinstance(n, str):
                raise ConfigError(f"{what}: want function names, got {n!r}")
        names = [n.strip() for n in names]
    if not names or not all(names):
        raise ConfigError(f"{what}={value!r}: names an empty function")
    return tuple(names)


def _functions(value: Any, what: str) -> BySource:
    """functions: a name, a list of names, or a mapping data_source → name(s)."""
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise ConfigError(f"{what}: not JSON: {err}") from None
    if isinstance(value, Mapping):
        if not value:
            raise ConfigError(f"{what}: an empty mapping names no function")
        return BySource({k: _names(v, f"{what}[{k!r}]") for k, v in value.items()})
    return BySource({ANY_SOURCE: _names(value, what)})


def _fields(value: Any, what: str) -> BySource:
    """ground_truth_field: a field name, or a mapping data_source → field name."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise ConfigError(f"{what}: not JSON: {err}") from None
    if isinstance(value, str):
        value = {ANY_SOURCE: value}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{what}: want a field name or a mapping data_source → field name, got {type(value).__name__}")
    out = dict(value)
    for k, v in out.items():
        if not isinstance(v, str) or not v.strip():
            raise ConfigError(f"{what}[{k!r}]: want a field name, got {v!r}")
        out[k] = v.strip()
    out.setdefault(ANY_SOURCE, DEFAULT_GROUND_TRUTH_FIELD)
    return BySource(out)


def _policy(value: Any, what: str) -> Policy:
    """on_error, on_not_applicable: "raise" or the (finite) score to give."""
    if isinstance(value, str):
        s = value.strip().lower()
        if s == RAISE:
            return RAISE
        try:
            number = float(s)
        except ValueError:
            raise ConfigError(f"{what}={value!r}: want 'raise' or a number (the score to give)") from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        raise ConfigError(f"{what}={value!r}: want 'raise' or a number (the score to give)")
    if not math.isfinite(number):
        raise ConfigError(f"{what}={value!r}: want a finite number: a NaN or infinite reward makes the advantages of its whole GRPO group NaN")
    return number


def _weights(value: Any, what: str) -> dict[str, float]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise ConfigError(f"{what}: not JSON: {err}") from None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{what}: want a mapping function → weight, got {type(value).__name__}")
    out = {}
    for k, v in value.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise ConfigError(f"{what}[{k!r}]: want a finite number, got {v!r}")
        out[str(k)] = float(v)
    return out


def _bool(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    raise ConfigError(f"{what}={value!r}: want true or false")


_PARSERS: dict[str, Callable[[Any, str], Any]] = {
    "functions": _functions,
    "ground_truth_field": _fields,
    "on_error": _policy,
    "on_not_applicable": _policy,
    "weights": _weights,
    "return_dict": _bool,
}


@dataclass(frozen=True)
class Defaults:
    """The REWARDD_VERL_* variables: the options' defaults and the batching."""

    options: Options = Options()
    window_s: float = DEFAULT_WINDOW_MS / 1000
    max_batch: int = DEFAULT_MAX_BATCH

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None) -> "Defaults":
        env = os.environ if environ is None else environ
        kw = {}
        for name in OPTION_NAMES:
            var = f"REWARDD_VERL_{name.upper()}"
            raw = env.get(var, "").strip()
            if raw:
                kw[name] = _PARSERS[name](raw, var)
        window_ms, max_batch = DEFAULT_WINDOW_MS, DEFAULT_MAX_BATCH
        raw = env.get("REWARDD_VERL_WINDOW_MS", "").strip()
        if raw:
            try:
                window_ms = float(raw)
            except ValueError:
                window_ms = -1.0
            if not (0 <= window_ms <= 10_000):
                raise ConfigError(f"REWARDD_VERL_WINDOW_MS={raw!r}: want milliseconds, from 0 to 10000")
        raw = env.get("REWARDD_VERL_MAX_BATCH", "").strip()
        if raw:
            try:
                max_batch = int(raw)
            except ValueError:
                max_batch = 0
            if max_batch < 1:
                raise ConfigError(f"REWARDD_VERL_MAX_BATCH={raw!r}: want a whole number of rollouts, at least 1")
        return cls(Options(**kw), window_ms / 1000, max_batch)

    def with_kwargs(self, kwargs: Mapping[str, Any]) -> Options:
        """The options of one call: its keyword arguments over these defaults."""
        kw = {}
        for name, value in kwargs.items():
            parse = _PARSERS.get(name)
            if parse is not None:
                kw[name] = parse(value, f"reward_kwargs.{name}")
            elif name not in VERL_KWARGS:
                raise ConfigError(
                    f"rewardd: unknown keyword argument {name!r} (reward_kwargs): "
                    f"the options are {', '.join(OPTION_NAMES)}"
                )
        if not kw:
            return self.options
        return Options(**{**self.options.__dict__, **kw})


# --- items and scoring -----------------------------------------------------------


@dataclass(eq=False)
class Item:
    """One sample to score, with what its caller asked for."""

    data_source: Any
    completion: str
    fields: dict[str, Any]
    functions: Optional[tuple[str, ...]]  # None: every served function
    options: Options
    arrived: float = 0.0
    future: Optional[concurrent.futures.Future] = None


def make_item(options: Options, data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any) -> Item:
    """The sample verl passes, as a rollout: the solution is the completion,
    every entry of extra_info a row field, and ground_truth the field its
    data source's ground_truth_field names (over an extra_info entry of that
    name; absent when None). Raises ConfigError, TypeError."""
    functions = options.functions_for(data_source)
    fields: dict[str, Any] = {}
    if extra_info is not None:
        if not isinstance(extra_info, Mapping):
            raise TypeError(f"rewardd: extra_info: want a dict, got {type(extra_info).__name__}")
        fields.update((k, v) for k, v in extra_info.items() if isinstance(k, str))
    fields[options.ground_truth_field.get(data_source)] = ground_truth
    completion = _rows.text(solution_str, completion=True, what="solution_str")
    return Item(data_source, completion, fields, functions, options)


Outcome = Union[dict, float, BaseException]


def score_items(client: Client, served: Mapping[str, float], items: Sequence[Item]) -> list[Outcome]:
    """Scores items with one Score RPC and returns each one's result, or the
    exception its caller should raise (an unknown function, a failed call,
    ScoreError where its options say raise). served maps the served
    functions to their weights."""
    out: list[Outcome] = [RewarddError("rewardd: not scored")] * len(items)
    live: list[tuple[int, tuple[str, ...]]] = []
    wanted: dict[str, None] = {}
    for i, it in enumerate(items):
        names = it.functions if it.functions is not None else tuple(served)
        unknown = [n for n in names if n not in served]
        if unknown:
            out[i] = RewarddError(
                f"rewardd: function {unknown[0]!r} (for data source {str(it.data_source)!r}) is not served by "
                f"{client.target} (served: {', '.join(served) or 'none'})"
            )
            continue
        live.append((i, names))
        wanted.update(dict.fromkeys(names))
    if not live:
        return out
    rows = [items[i] for i, _ in live]
    columns: dict[str, list[Any]] = {}
    for r, it in enumerate(rows):
        for name, value in it.fields.items():
            columns.setdefault(name, [None] * len(rows))[r] = value
    try:
        result = client.score_batch(_rows.make_batch(None, [it.completion for it in rows], columns), tuple(wanted))
    except Exception as err:
        for i, _ in live:
            out[i] = err
        return out
    filled: list[tuple[Item, str]] = []
    for r, (i, names) in enumerate(live):
        try:
            out[i] = _verdict(items[i], names, r, result, served, filled)
        except RewarddError as err:
            out[i] = err
    if filled:
        it, reason = filled[0]
        warnings.warn(
            f"rewardd: {len(filled)} of {len(items)} rollouts got ERROR and score "
            f"{it.options.on_error} as on_error says (first: data source {str(it.data_source)!r}: {reason}); "
            f"on_error: raise makes this an exception",
            RewarddWarning,
            stacklevel=2,
        )
    return out


def _verdict(
    item: Item, names: tuple[str, ...], row: int, result: ScoreResult, served: Mapping[str, float], filled: list
) -> dict | float:
    """One rollout's result: the weighted sum of its functions' OK values;
    with an ERROR in any of them, or none of them applying, what its options
    say. Raises ScoreError where they say raise."""
    opts = item.options
    total, status = 0.0, NOT_APPLICABLE
    values: dict[str, float] = {}
    reasons: list[str] = []
    failed: Optional[tuple[str, str]] = None
    for name in names:
        fr = result.functions.get(name)
        if fr is None:
            raise RewarddError(f"rewardd: the server's answer has no scores for {name!r}")
        s, reason = fr.status[row], fr.errors.get(row, "")
        if reason:
            reasons.append(f"{name}: {reason}")
        if s == Status.OK:
            values[name] = fr.values[row]
            total += opts.weights.get(name, served[name]) * fr.values[row]
            if status == NOT_APPLICABLE:
                status = OK
        elif s != Status.NOT_APPLICABLE and failed is None:
            failed = (name, reason or ("no reason given" if s == Status.ERROR else "the server sent no status"))
    what = f"a rollout of data source {str(item.data_source)!r}"
    if failed is not None:
        status = ERROR
        if opts.on_error == RAISE:
            raise ScoreError(failed[0], row, failed[1], 1, 1, what=what)
        score = float(opts.on_error)
        filled.append((item, f"{failed[0]}: {failed[1]}"))
    elif status == NOT_APPLICABLE:
        if opts.on_not_applicable == RAISE:
            raise ScoreError(names[0], row, "does not apply: " + ("; ".join(reasons) or "no reason given"), 1, 1, what=what)
        score = float(opts.on_not_applicable)
    else:
        score = total
    if not opts.return_dict:
        return score
    out: dict[str, Any] = {"score": score, "acc": score}
    for name in opts.columns() or tuple(served):
        out[f"rewardd_fn_{name}" if name in _RESERVED else name] = values.get(name, math.nan)
    out["rewardd_status"] = status
    out["rewardd_reason"] = "; ".join(reasons)
    return out


# --- batching ---------------------------------------------------------------------


class Batcher:
    """Gathers items submitted from any thread or event loop into batches.

    A batch is cut window_s after its first item arrived, or as soon as it
    holds max_batch items, and scored by score(batch) -> one outcome per item
    on one of max_inflight sender threads; while all of them are busy, items
    keep joining the next batch. Each item's future gets its own outcome.
    The batcher owns its dispatcher thread and its senders: close() scores
    what is pending and waits for both.
    """

    def __init__(
        self,
        score: Callable[[list[Item]], list[Outcome]],
        window_s: float,
        max_batch: int,
        max_inflight: int = MAX_INFLIGHT,
    ):
        self._score = score
        self._window = window_s
        self._max_batch = max_batch
        self._cond = threading.Condition()
        self._pending: list[Item] = []
        self._closed = False
        self._slots = threading.Semaphore(max_inflight)
        self._senders = concurrent.futures.ThreadPoolExecutor(max_inflight, thread_name_prefix="rewardd-verl-send")
        # A daemon: a trainer that exits without reset() is not held up by it.
        self._dispatcher = threading.Thread(target=self._dispatch, name="rewardd-verl-batcher", daemon=True)
        self._dispatcher.start()

    def submit(self, item: Item) -> concurrent.futures.Future:
        """Queues item for the next batch; its future gets the outcome."""
        item.future = concurrent.futures.Future()
        with self._cond:
            if self._closed:
                raise RewarddError("rewardd: the verl batcher is closed")
            item.arrived = time.monotonic()
            self._pending.append(item)
            if len(self._pending) == 1 or len(self._pending) >= self._max_batch:
                self._cond.notify()
        return item.future

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._dispatcher.join()
        self._senders.shutdown(wait=True)

    def _dispatch(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return
            self._slots.acquire()
            with self._cond:
                deadline = self._pending[0].arrived + self._window
                while len(self._pending) < self._max_batch and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch = self._pending[: self._max_batch]
                del self._pending[: self._max_batch]
            self._senders.submit(self._send, batch)

    def _send(self, batch: list[Item]) -> None:
        live: list[Item] = []
        try:
            # A caller that gave up (a cancelled await) is left out.
            live = [it for it in batch if it.future is not None and it.future.set_running_or_notify_cancel()]
            if live:
                for it, outcome in zip(live, self._score(live)):
                    assert it.future is not None
                    if isinstance(outcome, BaseException):
                        it.future.set_exception(outcome)
                    else:
                        it.future.set_result(outcome)
        except BaseException as err:  # no caller is left waiting
            for it in live:
                if it.future is not None and not it.future.done():
                    it.future.set_exception(err)
        finally:
            self._slots.release()


# --- the process's state ------------------------------------------------------------


class Verl:
    """The rewardd state of a process: its client, the served functions, the
    defaults and the batcher, made on first use from the REWARDD_* variables.

    reset() scores what is pending and closes them; the next call reads the
    variables again. A forked child makes its own (the parent's locks,
    channel and threads are not its).
    """

    def __init__(self, client_factory: Callable[[], Client] = Client.from_env):
        self._factory = client_factory
        self._state = _ProcessState(client_factory)

    def current(self) -> "_ProcessState":
        st = self._state
        if st.pid != os.getpid():
            # A child starts with one thread: nothing races this.
            st = self._state = _ProcessState(self._factory)
        return st

    def reset(self) -> None:
        old, self._state = self._state, _ProcessState(self._factory)
        if old.pid == os.getpid():
            old.close()

    def options(self, kwargs: Mapping[str, Any]) -> Options:
        return self.current().options(kwargs)

    def score(self, items: Sequence[Item]) -> list[Outcome]:
        return self.current().score(items)

    def submit(self, item: Item) -> concurrent.futures.Future:
        return self.current().submit(item)


class _ProcessState:
    """What Verl holds for one process."""

    def __init__(self, client_factory: Callable[[], Client]):
        self.pid = os.getpid()
        self._factory = client_factory
        self._lock = threading.Lock()
        self._served_lock = threading.Lock()
        self._client: Optional[Client] = None
        self._served: Optional[dict[str, float]] = None
        self._defaults: Optional[Defaults] = None
        self._batcher: Optional[Batcher] = None
        self._parsed: dict[tuple, tuple[tuple, Options]] = {}
        self._closed = False

    def _made(self, attr: str, make: Callable[[], Any]) -> Any:
        """The attribute attr, made by make() on first use."""
        with self._lock:
            value = getattr(self, attr)
            if value is None:
                value = make()
                setattr(self, attr, value)
            return value

    def defaults(self) -> Defaults:
        return self._made("_defaults", Defaults.from_env)

    def client(self) -> Client:
        return self._made("_client", self._factory)

    def served(self) -> dict[str, float]:
        """The served functions and their weights, asked once."""
        client = self.client()
        with self._served_lock:
            if self._served is None:
                self._served = {f.name: f.weight for f in client.list_functions().functions}
            return self._served

    def options(self, kwargs: Mapping[str, Any]) -> Options:
        """The options of a call with these keyword arguments (ConfigError if bad).

        Parsed once per set of argument objects: verl passes the same
        reward_kwargs values to every call, and reading OmegaConf values
        costs ~40 µs a call. An argument changed in place between calls is
        not seen.
        """
        defaults = self.defaults()
        if not kwargs:
            return defaults.options
        key = tuple((name, id(value)) for name, value in kwargs.items())
        with self._lock:
            hit = self._parsed.get(key)
        if hit is not None:
            return hit[1]
        options = defaults.with_kwargs(kwargs)
        with self._lock:
            if len(self._parsed) >= PARSED_OPTIONS:
                self._parsed.clear()
            self._parsed[key] = (tuple(kwargs.values()), options)  # the values keep their ids
        return options

    def score(self, items: Sequence[Item]) -> list[Outcome]:
        """Scores items now, in one Score RPC."""
        try:
            served = self.served()
            client = self.client()
        except Exception as err:
            return [err] * len(items)
        return score_items(client, served, items)

    def submit(self, item: Item) -> concurrent.futures.Future:
        """Queues item to be scored with the other calls of its window."""
        defaults = self.defaults()

        def make() -> Batcher:
            if self._closed:
                raise RewarddError("rewardd: rewardd_client.verl was reset as this call started; call again")
            return Batcher(self.score, defaults.window_s, defaults.max_batch)

        return self._made("_batcher", make).submit(item)

    def close(self) -> None:
        """Scores what is pending, then closes the client."""
        with self._lock:
            self._closed = True
            batcher = self._batcher
        if batcher is not None:
            batcher.close()  # its senders use the client
        with self._lock:
            client = self._client
        if client is not None:
            client.close()


DEFAULT = Verl()
