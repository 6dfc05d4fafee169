"""Turning a trainer's batch (TRL's keyword arguments) into rollouts.

A batch is normalised once into plain text and JSON-able fields; the
request sent to the server and the cache key are both built from that
normalised form, so two calls that would send the same request share one
key.
"""

from __future__ import annotations

import array
import hashlib
import json
import math
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .errors import RewarddWarning

# Keyword arguments TRL passes that are not dataset columns. Everything else
# that is a list with one entry per completion is a column.
NOT_COLUMNS = frozenset(
    {
        "prompts",
        "completions",
        "completion_ids",
        "trainer_state",
        "log_extra",
        "log_metric",
        "environments",
    }
)

# Integers beyond this lose precision as a protobuf Struct number (a double);
# they are sent as decimal strings, which exact_match compares exactly.
_MAX_EXACT_INT = 2**53


@dataclass(frozen=True)
class Batch:
    """One batch of rollouts, normalised.

    prompts and completions are texts; fields holds one dict of JSON-able
    values per rollout (the dataset row's other columns). key identifies the
    content: equal keys mean equal requests.
    """

    prompts: list[str]
    completions: list[str]
    fields: list[dict[str, Any]]
    key: str

    def __len__(self) -> int:
        return len(self.completions)


def make_batch(
    prompts: Sequence[Any] | None,
    completions: Sequence[Any],
    columns: Mapping[str, Any] | None = None,
) -> Batch:
    """Normalises TRL-style inputs.

    prompts and completions are strings or chat conversations (lists of
    {role, content}); prompts may be None (every prompt is then empty).
    columns maps a column name to one value per completion; entries that are
    not such lists (TRL's trainer_state, log_metric, …) are ignored, as are
    the names in NOT_COLUMNS. A column whose values cannot be sent as JSON is
    dropped with a RewarddWarning.
    """
    if completions is None:
        raise TypeError("completions is required")
    n = len(completions)
    if prompts is None:
        prompt_texts = [""] * n
    else:
        if len(prompts) != n:
            raise ValueError(f"got {len(prompts)} prompts for {n} completions; TRL passes one prompt per completion")
        prompt_texts = [text(p, completion=False, what=f"prompts[{i}]") for i, p in enumerate(prompts)]
    completion_texts = [text(c, completion=True, what=f"completions[{i}]") for i, c in enumerate(completions)]

    cols = _columns(columns or {}, n)
    fields: list[dict[str, Any]] = [{} for _ in range(n)]
    for name, values in cols.items():
        for i, v in enumerate(values):
            if v is not None:  # null and absent mean the same to the server
                fields[i][name] = v

    h = hashlib.blake2b(digest_size=16)
    for texts in (prompt_texts, completion_texts):
        h.update(array.array("Q", map(len, texts)).tobytes())  # the boundaries of the joined texts
        h.update("".join(texts).encode("utf-8", "surrogatepass"))
    h.update(json.dumps(cols, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return Batch(prompt_texts, completion_texts, fields, h.hexdigest())


def text(value: Any, *, completion: bool, what: str) -> str:
    """Reads a prompt or a completion: a string, or a chat conversation.

    A chat completion is its last assistant message (or its only message); a
    chat prompt is its messages' contents joined by newlines, as
    `rewardd score` reads them. Message content may be a string or a list of
    parts ({"type": "text", "text": …}), whose texts are concatenated.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):  # one message on its own
        return _content(value, what)
    if isinstance(value, (list, tuple)):
        if completion:
            for m in reversed(value):
                if isinstance(m, Mapping) and m.get("role") == "assistant":
                    return _content(m, what)
            if len(value) == 1:
                return _content(value[0], what)
            raise ValueError(f"{what}: chat completion has no assistant message")
        return "\n".join(_content(m, f"{what}[{i}]") for i, m in enumerate(value))
    raise TypeError(f"{what}: want a string or a list of {{role, content}} messages, got {type(value).__name__}")


def _content(message: Any, what: str) -> str:
    if not isinstance(message, Mapping):
        raise TypeError(f"{what}: want a {{role, content}} message, got {type(message).__name__}")
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    raise TypeError(f"{what}: message content is {type(content).__name__}, want a string or a list of parts")


def _columns(kwargs: Mapping[str, Any], n: int) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {}
    for name, values in kwargs.items():
        if name in NOT_COLUMNS or callable(values):
            continue
        if hasattr(values, "tolist") and not isinstance(values, (list, tuple)):
            values = values.tolist()  # numpy array, torch tensor
        if not isinstance(values, (list, tuple)) or len(values) != n:
            continue
        try:
            cols[name] = [jsonable(v) for v in values]
        except TypeError as err:
            warnings.warn(f"rewardd: column {name!r} is not sent to the server: {err}", RewarddWarning, stacklevel=4)
    return cols


def jsonable(v: Any) -> Any:
    """Returns v as JSON-able data (what a protobuf Struct holds).

    numpy and torch scalars and arrays become Python numbers and lists; tuples
    become lists; integers too large for a double become decimal strings.
    Raises TypeError for anything else that is not JSON.
    """
    if v is None or isinstance(v, (str, bool)):
        return v
    if isinstance(v, int):
        return v if -_MAX_EXACT_INT <= v <= _MAX_EXACT_INT else str(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Mapping):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise TypeError(f"mapping key {k!r} is not a string")
            out[k] = jsonable(x)
        return out
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if hasattr(v, "tolist"):  # numpy / torch scalars and arrays
        return jsonable(v.tolist())
    if hasattr(v, "isoformat"):  # datetime, date
        return v.isoformat()
    raise TypeError(f"a value of type {type(v).__name__} cannot be sent as JSON")
