"""Turning a trainer's batch (TRL's keyword arguments) into rollouts.

A batch is normalised once into plain text and JSON-able column values.
Batches are compared by that content (Batch.same), so the reward functions
after the first find the scored batch without hashing or encoding it again.
The request is encoded from it only when it is sent (request, Batch.encode:
the ScoreRequest wire bytes are written here directly, as building protobuf
messages cost more than the server's work); its batch_id is a hash of them.

The request is in reward.v1's prompt-once form: each distinct prompt once
(ScoreRequest.prompts, Rollout.prompt_index), each column once with a value
per prompt when the rollouts of every prompt agree on it (prompt_fields: a
dataset column such as the reference answer), else a value per rollout
(rollout_fields). Batch.encode(rows=True) writes the form of servers before
it: every rollout with its prompt and a fields Struct.
"""

from __future__ import annotations

import hashlib
import io
import math
import operator
import struct
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from .errors import RewarddWarning
from .proto import reward_pb2

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

# Column values that normalise to themselves (see jsonable).
_PLAIN = frozenset({str, bool, type(None)})


@dataclass(frozen=True, eq=False)
class Batch:
    """One batch of rollouts, normalised.

    prompts and completions are texts; columns maps a column name to one
    JSON-able value per rollout (None: the row has no value). same() compares
    two batches' content; encode() writes the rollouts for the request.
    """

    prompts: list[str]
    completions: list[str]
    columns: dict[str, list[Any]]

    def __len__(self) -> int:
        return len(self.completions)

    def encode(self, rows: bool = False) -> list[bytes]:
        """The rollouts, prompts and row fields as ScoreRequest wire bytes, in
        pieces to join: in the prompt-once form, or with rows, every rollout
        with its own prompt and fields (ScoreRequest.rollouts only).

        Appending an encoded ScoreRequest holding the other fields makes the
        whole request (a message's encodings concatenate into one message).
        """
        if rows:
            return encode_rollouts(self.prompts, self.completions, self.columns)
        return encode_prompt_once(self.prompts, self.completions, self.columns)

    def same(self, other: "Batch") -> bool:
        """Whether other sends the same rollouts: equal texts, and column values
        equal with equal types (True is not 1, -0.0 is not 0.0)."""
        if other is self:
            return True
        if len(other.completions) != len(self.completions) or other.columns.keys() != self.columns.keys():
            return False
        if other.completions != self.completions or other.prompts != self.prompts:
            return False
        for name, values in self.columns.items():
            theirs = other.columns[name]
            # Identical objects (the same dataset values passed again, as TRL
            # does to each reward function) are immutable scalars here: equal.
            if not all(map(operator.is_, values, theirs)) and not all(map(_same_value, values, theirs)):
                return False
        return True


def _same_value(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False  # True vs 1, 1 vs 1.0 (sent alike, but a re-score is harmless)
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same_value, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(v, b[k]) for k, v in a.items())
    return bool(a == b)


def request(
    batch: Batch,
    functions: Sequence[str],
    rows: bool = False,
    inline: Sequence[reward_pb2.FunctionSpec] = (),
    omit_ok_reasons: bool = False,
) -> bytes:
    """The encoded ScoreRequest scoring batch with functions and the inline
    ones: its rollouts (see Batch.encode for rows), then a batch_id hashing
    them, the functions, the inline functions and omit_ok_reasons; the
    reasons come back as lists (reasons_as_lists, which servers before it
    ignore).

    The pieces go into a BytesIO, which grows one buffer in place and hands
    it over as its value (CPython): b"".join would take an extra 80 bytes
    per piece, and fresh memory costs page faults.
    """
    buf = io.BytesIO()
    buf.writelines(batch.encode(rows))
    with buf.getbuffer() as rollouts:
        batch_id = hashlib.sha256(rollouts).hexdigest()[:16]
    rest = reward_pb2.ScoreRequest(
        batch_id=batch_id, functions=list(functions), inline=list(inline), omit_ok_reasons=omit_ok_reasons, reasons_as_lists=True
    )
    buf.write(rest.SerializeToString())
    return buf.getvalue()


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
        prompt_texts = texts(prompts, completion=False, what="prompts")
    completion_texts = texts(completions, completion=True, what="completions")
    return Batch(prompt_texts, completion_texts, _columns(columns or {}, n))


def texts(values: Sequence[Any], *, completion: bool, what: str) -> list[str]:
    """[text(v) for v in values], fast when they are strings already."""
    if all(map(str.__instancecheck__, values)):
        return list(values)
    return [v if isinstance(v, str) else text(v, completion=completion, what=f"{what}[{i}]") for i, v in enumerate(values)]


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
            if _PLAIN.issuperset(map(type, values)):
                cols[name] = list(values)  # jsonable(v) is v
            else:
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


# --- the wire encoding of ScoreRequest.rollouts ---------------------------------
#
# reward.v1.Rollout: prompt = 3, completion = 4, fields = 5 (google.protobuf.Struct:
# map<string, Value> fields = 1, an entry being key = 1, value = 2). Value's
# oneof: null_value = 1 (varint), number_value = 2 (double), string_value = 3,
# bool_value = 4 (varint), struct_value = 5, list_value = 6 (ListValue:
# repeated Value values = 1). Strings are UTF-8, strictly (a lone surrogate
# raises UnicodeEncodeError, as protobuf does); empty texts are left out, as
# protobuf leaves out proto3 defaults; struct keys are written sorted.

_DOUBLE = struct.Struct("<d")

# Lengths below _SMALL are encoded from tables, without allocating: fresh
# memory is much of what encoding a batch costs (a page fault took ~12 µs on
# the 2-core VM this was measured on), so the framing bytes come from here.
_SMALL = 4096
_VARINTS = tuple(bytes([n]) if n < 0x80 else bytes([(n & 0x7F) | 0x80, n >> 7]) for n in range(_SMALL))
_ROLLOUT = tuple(b"\x12" + v for v in _VARINTS)  # ScoreRequest.rollouts, length n
_COMPLETION = (b"",) + tuple(b"\x22" + v for v in _VARINTS[1:])  # Rollout.completion (left out when empty)


def _varint(n: int) -> bytes:
    if n < _SMALL:
        return _VARINTS[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_utf8 = str.encode  # UTF-8, strict


def _value(v: Any) -> bytes:
    """A google.protobuf.Value, as Struct.update would set it."""
    if v is None:
        return b"\x08\x00"
    if isinstance(v, bool):
        return b"\x20\x01" if v else b"\x20\x00"
    if isinstance(v, str):
        b = _utf8(v)
        return b"\x1a" + _varint(len(b)) + b
    if isinstance(v, (int, float)):
        return b"\x11" + _DOUBLE.pack(v)
    if isinstance(v, dict):
        b = _struct(v)
        return b"\x2a" + _varint(len(b)) + b
    if isinstance(v, list):
        b = b"".join([b"\x0a" + _varint(len(x)) + x for x in map(_value, v)])
        return b"\x32" + _varint(len(b)) + b
    raise TypeError(f"a value of type {type(v).__name__} cannot be sent as JSON")


def _entry(key: bytes, value: bytes) -> bytes:
    """One Struct map entry (field 1 of Struct), key already with its tag and length."""
    body = key + b"\x12" + _varint(len(value)) + value
    return b"\x0a" + _varint(len(body)) + body


def _key(name: str) -> bytes:
    b = _utf8(name)
    return b"\x0a" + _varint(len(b)) + b


def _struct(d: Mapping[str, Any]) -> bytes:
    return b"".join([_entry(_key(k), _value(d[k])) for k in sorted(d)])


def _field(tag: bytes, data: bytes) -> bytes:
    """A length-delimited field; b"" when data is empty (a proto3 default, left out)."""
    return tag + _varint(len(data)) + data if data else b""


def _column(name: str, values: Sequence[Any], whole: bool) -> list[bytes]:
    """Each row's Struct entry for one column (b"" where the value is None);
    with whole, each as a whole Rollout.fields field (the row's only column)."""
    key = _key(name)
    memo: dict[str, bytes] = {}  # the G rollouts of a prompt share their row's values
    out = []
    for v in values:
        if v is None:
            out.append(b"")
            continue
        e = memo.get(v) if type(v) is str else None
        if e is None:
            e = _entry(key, _value(v))
            if whole:
                e = _field(b"\x2a", e)
            if type(v) is str:
                memo[v] = e
        out.append(e)
    return out


def encode_rollouts(prompts: Sequence[str], completions: Sequence[str], columns: Mapping[str, Sequence[Any]]) -> list[bytes]:
    """ScoreRequest's repeated field rollouts (2), encoded in pieces to join:
    one Rollout per completion with its prompt and, when the row has any
    non-None column value, the fields Struct of them.

    Five pieces per rollout: the prompt and the fields come whole, tag and
    length included, and each distinct one is encoded once.
    """
    memo: dict[str, bytes] = {}  # a GRPO group's rollouts share their prompt
    P = [memo[s] if s in memo else memo.setdefault(s, _field(b"\x1a", _utf8(s))) for s in prompts]
    C = list(map(_utf8, completions))
    names = sorted(columns)
    if not names:
        F: Sequence[bytes] = [b""] * len(C)
    elif len(names) == 1:
        F = _column(names[0], columns[names[0]], whole=True)
    else:
        rows = zip(*[_column(name, columns[name], whole=False) for name in names])
        F = [_field(b"\x2a", b"".join(row)) for row in rows]
    small = _SMALL
    parts: list[bytes] = []
    add = parts.extend
    for p, c, f in zip(P, C, F):
        lc = len(c)
        hc = _COMPLETION[lc] if lc < small else b"\x22" + _varint(lc)
        size = len(p) + len(hc) + lc + len(f)
        add((_ROLLOUT[size] if size < small else b"\x12" + _varint(size), p, hc, c, f))
    return parts


# reward.v1 prompt-once form: ScoreRequest.prompts = 6 (string),
# prompt_fields = 7 and rollout_fields = 8 (FieldColumn: name = 1, values = 2,
# one google.protobuf.Value each, null where the row has no value);
# Rollout.prompt_index = 6 (varint, left out when 0).
_PROMPT_INDEX = tuple(b"\x30" + v for v in _VARINTS)
_NULL = b"\x08\x00"


def _column_values(values: Sequence[Any]) -> bytes:
    memo: dict[str, bytes] = {}  # a GRPO group's rollouts share their row's values
    out = []
    for v in values:
        if v is None:
            out.append(b"\x12\x02" + _NULL)
            continue
        e = memo.get(v) if type(v) is str else None
        if e is None:
            e = _field_always(b"\x12", _value(v))
            if type(v) is str:
                memo[v] = e
        out.append(e)
    return b"".join(out)


def _field_always(tag: bytes, data: bytes) -> bytes:
    """A length-delimited field, written even when empty (a repeated element)."""
    return tag + _varint(len(data)) + data


def _per_prompt(values: Sequence[Any], index: Sequence[int], prompts: int) -> Optional[list[Any]]:
    """The column's value for each prompt when every rollout of a prompt has
    the same one (as the server would see it), else None."""
    first: list[Any] = [_UNSET] * prompts
    for v, p in zip(values, index):
        f = first[p]
        if f is _UNSET:
            first[p] = v
        elif f is not v and not (type(f) is type(v) and _same_value(f, v)):
            return None
    return first


_UNSET = object()


def encode_prompt_once(prompts: Sequence[str], completions: Sequence[str], columns: Mapping[str, Sequence[Any]]) -> list[bytes]:
    """ScoreRequest's prompts (6), rollouts (2), prompt_fields (7) and
    rollout_fields (8), in pieces to join. A column that is None for every
    row is left out, as rows leave out None values."""
    index: dict[str, int] = dict.fromkeys(prompts, 0)  # the distinct prompts, in order of first use
    for k, s in enumerate(index):
        index[s] = k
    idx = list(map(index.__getitem__, prompts))
    parts: list[bytes] = [_field_always(b"\x32", _utf8(s)) for s in index]
    small = _SMALL
    add = parts.append
    for c, p in zip(map(_utf8, completions), idx):
        lc = len(c)
        hc = _COMPLETION[lc] if lc < small else b"\x22" + _varint(lc)
        hp = b"" if p == 0 else _PROMPT_INDEX[p] if p < small else b"\x30" + _varint(p)
        size = len(hc) + lc + len(hp)
        add((_ROLLOUT[size] if size < small else b"\x12" + _varint(size)) + hc)
        add(c)
        if hp:
            add(hp)
    for name in sorted(columns):
        values = columns[name]
        if values.count(None) == len(values):
            continue
        per = _per_prompt(values, idx, len(index))
        tag, vals = (b"\x42", values) if per is None else (b"\x3a", per)
        add(_field_always(tag, _key(name) + _column_values(vals)))
    return parts
