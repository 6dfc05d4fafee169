"""The gRPC client: addresses, auth, retries, fingerprint check.

Client is what the reward functions of rewardd_client.remote and
rewardd_client.hatchery call through; use it directly to score batches from
your own code:

    with Client.from_env() as c:
        result = c.score(["What is 6*7?"], ["<answer>42</answer>"], {"answer": ["42"]})
        result.functions["accuracy"].rewards()   # [1.0]
"""

from __future__ import annotations

import dataclasses
import enum
import ipaddress
import logging
import os
import random
import socket
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar

import grpc

from . import _rows
from .errors import ConfigError, FingerprintMismatchError, RewarddError, RPCError
from .proto import reward_pb2, reward_pb2_grpc

__all__ = ["Client", "Settings", "Status", "FunctionResult", "ScoreResult", "grpc_target"]

log = logging.getLogger("rewardd_client")

DEFAULT_ADDR = "127.0.0.1:50051"
VERSION = "0.1.0"

# Scoring is idempotent: these are retried, possibly on another server.
RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED})

_T = TypeVar("_T")


class Status(enum.IntEnum):
    """Outcome of one function on one rollout (reward.v1.ScoreStatus)."""

    UNSPECIFIED = 0
    OK = 1
    NOT_APPLICABLE = 2
    ERROR = 3


@dataclass(frozen=True)
class Settings:
    """How to reach the server. Settings.from_env reads the REWARDD_* variables.

    addr:          REWARDD_ADDR. One host:port, a comma-separated list of them,
                   or a gRPC target URI such as dns:///rewardd.svc:50051.
                   Several servers are load-balanced round-robin.
    token:         REWARDD_TOKEN. Sent as `authorization: Bearer <token>`.
    timeout:       REWARDD_TIMEOUT. Deadline of one attempt, in seconds:
                   longer than the server's limits.request_timeout (2 min by
                   default), so that a batch the server cuts at its limit
                   comes back with the scores it has (the rest ERROR)
                   rather than as DEADLINE_EXCEEDED with none.
    fingerprint:   REWARDD_FINGERPRINT. The config fingerprint the server must
                   serve; a mismatch fails the call.
    on_error:      REWARDD_ON_ERROR. "warn": rollouts with status ERROR count as
                   None and a warning gives the counts; "raise": they raise
                   ScoreError naming the row, the function and the reason.
    max_attempts:  REWARDD_MAX_ATTEMPTS. Attempts per call on UNAVAILABLE or
                   RESOURCE_EXHAUSTED, with exponential backoff from `backoff`
                   seconds up to `max_backoff` (jittered: by default the
                   attempts span about 11 to 23 s, time for a restart).
    tls_ca:        REWARDD_TLS_CA. A PEM file of the CA that signed the
                   server's certificate: the connection is TLS, verified with
                   it (a server started with --tls-cert). Without it, the
                   connection is plaintext.
    wire:          REWARDD_WIRE. "columns" (the default): each prompt sent once
                   and the dataset columns as columns (reward.v1's prompt-once
                   form: ScoreRequest.prompts, prompt_fields, rollout_fields);
                   "rows": every rollout with its prompt and fields, for a
                   server older than that form, which would ignore the
                   columns and score every row as having no fields.
    """

    addr: str = DEFAULT_ADDR
    token: Optional[str] = None
    timeout: float = 150.0
    fingerprint: Optional[str] = None
    on_error: str = "warn"
    max_attempts: int = 8
    backoff: float = 0.2
    max_backoff: float = 10.0
    wire: str = "columns"
    tls_ca: Optional[str] = None

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None) -> "Settings":
        env = os.environ if environ is None else environ
        kw: dict[str, Any] = {}
        if env.get("REWARDD_ADDR", "").strip():
            kw["addr"] = env["REWARDD_ADDR"].strip()
        if env.get("REWARDD_TOKEN", ""):
            kw["token"] = env["REWARDD_TOKEN"].strip()
        if env.get("REWARDD_FINGERPRINT", "").strip():
            kw["fingerprint"] = env["REWARDD_FINGERPRINT"].strip()
        if env.get("REWARDD_ON_ERROR", "").strip():
            kw["on_error"] = env["REWARDD_ON_ERROR"].strip().lower()
        if env.get("REWARDD_WIRE", "").strip():
            kw["wire"] = env["REWARDD_WIRE"].strip().lower()
        if env.get("REWARDD_TLS_CA", "").strip():
            kw["tls_ca"] = env["REWARDD_TLS_CA"].strip()
        for var, key, conv in (("REWARDD_TIMEOUT", "timeout", float), ("REWARDD_MAX_ATTEMPTS", "max_attempts", int)):
            raw = env.get(var, "").strip()
            if raw:
                try:
                    kw[key] = conv(raw)
                except ValueError:
                    raise ConfigError(f"{var}={raw!r}: want a {'number of seconds' if conv is float else 'whole number'}") from None
        s = cls(**kw)
        s.validate(source="env")
        return s

    def validate(self, source: str = "") -> None:
        """Raises ConfigError naming the setting (or variable) at fault."""

        def name(key: str) -> str:
            return f"REWARDD_{key.upper()}" if source == "env" else key

        if not (self.timeout > 0):
            raise ConfigError(f"{name('timeout')}={self.timeout}: want a positive number of seconds")
        if self.max_attempts < 1:
            raise ConfigError(f"{name('max_attempts')}={self.max_attempts}: want at least 1")
        if self.on_error not in ("warn", "raise"):
            raise ConfigError(f"{name('on_error')}={self.on_error!r}: want 'warn' or 'raise'")
        if self.wire not in ("columns", "rows"):
            raise ConfigError(f"{name('wire')}={self.wire!r}: want 'columns' or 'rows'")
        if self.backoff < 0 or self.max_backoff < self.backoff:
            raise ConfigError(f"backoff={self.backoff}, max_backoff={self.max_backoff}: want 0 <= backoff <= max_backoff")
        grpc_target(self.addr, tls=bool(self.tls_ca))  # raises ConfigError


@dataclass(frozen=True)
class FunctionResult:
    """One function's verdict on every rollout of a batch, in rollout order.

    values are NaN unless the status is OK; errors holds a reason per rollout
    index for ERROR and NOT_APPLICABLE entries, and for OK ones whose function
    says why they scored what they did ("no answer found"): the server's
    FunctionScores.errors (ERROR entries) and FunctionScores.reasons (the
    others) in one map, the status telling them apart.
    """

    name: str
    values: list[float]
    status: list[Status]
    errors: dict[int, str] = field(default_factory=dict)

    def rewards(self) -> list[Optional[float]]:
        """TRL's view: the value when OK, else None."""
        ok = Status.OK
        if self.status.count(ok) == len(self.status):
            return list(self.values)  # every one OK, the common case: no loop in Python
        return [v if s == ok else None for v, s in zip(self.values, self.status)]

    def reasons(self) -> list[str]:
        """Why each rollout scored what it did, in rollout order: the server's
        reason ("" for an OK score without one), after "not applicable: " or
        "ERROR: " when the function gave no score."""
        ok, na = Status.OK, Status.NOT_APPLICABLE
        st, errors = self.status, self.errors
        out = [""] * len(st)
        # Only the rollouts with a reason or without an OK score have one:
        # no loop over the others.
        for i, reason in errors.items():
            if 0 <= i < len(out) and st[i] == ok:
                out[i] = reason
        if st.count(ok) != len(st):
            for i, s in enumerate(st):
                if s != ok:
                    out[i] = ("not applicable: " if s == na else "ERROR: ") + errors.get(i, "")
        return out

    def error_rows(self) -> list[int]:
        """Indexes of the rollouts the function could not score (ERROR)."""
        st = self.status
        if st.count(Status.OK) + st.count(Status.NOT_APPLICABLE) == len(st):
            return []
        scored = (Status.OK, Status.NOT_APPLICABLE)
        return [i for i, s in enumerate(st) if s not in scored]


@dataclass(frozen=True)
class ScoreResult:
    """A scored batch: one FunctionResult per function, by name, in request order."""

    functions: dict[str, FunctionResult]
    config_fingerprint: str
    batch_id: str = ""


class Client:
    """A connection to one rewardd server or a round-robin pool of them.

    Thread-safe. Calls retry on UNAVAILABLE and RESOURCE_EXHAUSTED with
    exponential backoff (scoring is idempotent); with several servers a retry
    goes to another one, since a server that went away leaves the round-robin
    pool. Not fork-safe: create clients after forking.
    """

    def __init__(self, settings: Optional[Settings] = None, **overrides: Any):
        s = settings or Settings()
        if overrides:
            s = dataclasses.replace(s, **overrides)
        s.validate()
        self.settings = s
        self.target = grpc_target(s.addr, tls=bool(s.tls_ca))
        options = [
            ("grpc.lb_policy_name", "round_robin"),
            ("grpc.max_receive_message_length", -1),
            ("grpc.primary_user_agent", f"rewardd-client/{VERSION}"),
            # Retry connecting to a server that went away every second at
            # most (the defaults back off to 2 minutes).
            ("grpc.initial_reconnect_backoff_ms", 200),
            ("grpc.max_reconnect_backoff_ms", 1000),
        ]
        if s.tls_ca:
            self._channel = grpc.secure_channel(self.target, grpc.ssl_channel_credentials(_read_ca(s.tls_ca)), options=options)
        else:
            self._channel = grpc.insecure_channel(self.target, options=options)
        self._stub = reward_pb2_grpc.RewardServiceStub(self._channel)
        # Score with the request already encoded (score_batch).
        self._score_encoded = self._channel.unary_unary(
            "/reward.v1.RewardService/Score",
            request_serializer=None,
            response_deserializer=reward_pb2.ScoreResponse.FromString,
        )
        self._metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {s.token}"),) if s.token else ()

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None) -> "Client":
        """A client configured by the REWARDD_* environment variables (see Settings)."""
        return cls(Settings.from_env(environ))

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(target={self.target!r})"

    def list_functions(self, max_attempts: int = 0, timeout: float = 0) -> reward_pb2.ListFunctionsResponse:
        """The served functions and the config fingerprint (checked against settings.fingerprint).

        max_attempts and timeout, when given, replace the settings' for this call.
        """
        resp = self._call("ListFunctions", self._stub.ListFunctions, reward_pb2.ListFunctionsRequest(), max_attempts, timeout)
        self._check_fingerprint(resp.config_fingerprint)
        return resp

    def score(
        self,
        prompts: Optional[Sequence[Any]],
        completions: Sequence[Any],
        columns: Optional[Mapping[str, Sequence[Any]]] = None,
        functions: Sequence[str] = (),
        inline: Sequence[Any] = (),
        ok_reasons: bool = True,
    ) -> ScoreResult:
        """Scores one batch in one round trip.

        prompts and completions are strings or chat conversations; columns maps
        a field name to one value per completion (TRL's dataset columns; a
        value may be nested JSON-able data: lists, dicts). functions names
        served functions; empty means all of them, or only the inline ones
        when there are any. inline defines functions for this request only,
        each a reward_pb2.FunctionSpec or a mapping {"name", "kind",
        "params"} with params as in the config file (the server must allow
        the kind inline; its default config allows every kind but
        code_exec). ok_reasons=False asks the server to leave out the
        reasons of OK scores (ScoreRequest.omit_ok_reasons): errors then
        holds those of ERROR and NOT_APPLICABLE entries only, and the answer
        is smaller and quicker to read. Raises RPCError,
        FingerprintMismatchError, and TypeError or ValueError for an inline
        function it cannot send.
        """
        return self.score_batch(_rows.make_batch(prompts, completions, columns), functions, inline, ok_reasons)

    def score_batch(
        self, batch: _rows.Batch, functions: Sequence[str] = (), inline: Sequence[Any] = (), ok_reasons: bool = True
    ) -> ScoreResult:
        """Scores a batch made by rewardd_client._rows.make_batch (see score)."""
        specs = [_function_spec(f) for f in inline]
        # Encoded by _rows, much faster than building ScoreRequest messages.
        req = _rows.request(batch, functions, rows=self.settings.wire == "rows", inline=specs, omit_ok_reasons=not ok_reasons)
        resp = self._call("Score", self._score_encoded, req)
        self._check_fingerprint(resp.config_fingerprint)
        n = len(batch)
        out: dict[str, FunctionResult] = {}
        for fs in resp.functions:
            values = list(fs.values)
            status = list(fs.status)
            if len(values) != n or len(status) != n:
                raise RewarddError(
                    f"rewardd: server answered {len(values)} values and {len(status)} statuses "
                    f"of function {fs.name!r} for {n} rollouts"
                )
            errors = dict(fs.reasons) if fs.reasons else {}  # a server before reasons_as_lists
            if fs.reason_rollouts:
                rollouts, texts = list(fs.reason_rollouts), list(fs.reason_texts)
                if len(rollouts) != len(texts):
                    raise RewarddError(f"rewardd: server answered {len(rollouts)} reason rollouts and {len(texts)} reasons for function {fs.name!r}")
                errors.update(zip(rollouts, texts))
            if fs.errors:
                errors.update(fs.errors)
            out[fs.name] = FunctionResult(name=fs.name, values=values, status=_statuses(status), errors=errors)
        return ScoreResult(out, resp.config_fingerprint, resp.batch_id)

    def score_request(self, request: reward_pb2.ScoreRequest) -> reward_pb2.ScoreResponse:
        """Sends a ScoreRequest as is (with retries and the fingerprint check)."""
        resp = self._call("Score", self._stub.Score, request)
        self._check_fingerprint(resp.config_fingerprint)
        return resp

    def _check_fingerprint(self, served: str) -> None:
        want = self.settings.fingerprint
        if want and served != want:
            raise FingerprintMismatchError(want, served or "(no fingerprint)", self.target)

    def _call(self, method: str, rpc: Callable[..., _T], request: Any, max_attempts: int = 0, timeout: float = 0) -> _T:
        """Calls rpc with the settings' retries and deadline, or these when given."""
        s = self.settings
        max_attempts = max_attempts or s.max_attempts
        delay = s.backoff
        for attempt in range(1, max_attempts + 1):
            try:
                return rpc(request, timeout=timeout or s.timeout, metadata=self._metadata)
            except grpc.RpcError as err:
                code = err.code() if callable(getattr(err, "code", None)) else grpc.StatusCode.UNKNOWN
                details = (err.details() if callable(getattr(err, "details", None)) else None) or str(err)
                if code == grpc.StatusCode.UNAVAILABLE and attempt == 1:
                    hint = transport_hint(self.target, bool(s.tls_ca))
                    if hint:  # retrying would not help
                        raise RPCError(method, self.target, code, details, attempt, hint) from None
                if code not in RETRYABLE or attempt == max_attempts:
                    raise RPCError(method, self.target, code, details, attempt) from None
                pause = delay * random.uniform(0.5, 1.0)
                log.info("rewardd: %s on %s: %s: %s; retry %d of %d in %.2fs", method, self.target, code.name, details, attempt, max_attempts - 1, pause)
                self._pause(pause, code)
                delay = min(delay * 2, s.max_backoff)
        raise AssertionError("unreachable")

    def _pause(self, seconds: float, code: grpc.StatusCode) -> None:
        """Backs off for `seconds` before a retry.

        After UNAVAILABLE it waits on a ListFunctions call that waits for a
        connection, for as long: with no call in flight, gRPC Python polls a
        reconnecting channel only every 5 s (the client channel's backup
        poller), so a plain sleep would see a restarted server seconds late.
        """
        end = time.monotonic() + seconds
        if code == grpc.StatusCode.UNAVAILABLE:
            try:
                self._stub.ListFunctions(reward_pb2.ListFunctionsRequest(), timeout=seconds, wait_for_ready=True, metadata=self._metadata)
            except grpc.RpcError:
                pass
        left = end - time.monotonic()
        if left > 0:
            time.sleep(left)  # back off all the same: a draining server is connected too


_STATUSES = frozenset(int(s) for s in Status)
_STATUS_BY_INT = tuple(sorted(Status))  # _STATUS_BY_INT[i] is Status(i)


def _statuses(raw: list[int]) -> list[Status]:
    """Status of each wire value; an unknown value is UNSPECIFIED."""
    if raw.count(Status.OK) == len(raw):
        return [Status.OK] * len(raw)  # the common case, without a call per value
    if _STATUSES.issuperset(raw):
        return list(map(_STATUS_BY_INT.__getitem__, raw))
    return [Status(s) if s in _STATUSES else Status.UNSPECIFIED for s in raw]


_URL_SCHEMES = ("http", "https", "grpc", "grpcs")
_TARGET_SCHEMES = ("dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:", "vsock:")


def _read_ca(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            pem = f.read()
    except OSError as err:
        raise ConfigError(f"REWARDD_TLS_CA={path!r}: {err.strerror or err}") from None
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        raise ConfigError(f"REWARDD_TLS_CA={path!r} holds no PEM certificate")
    return pem


def transport_hint(target: str, tls: bool) -> str:
    """What is likely wrong when a call to target finds no server: a
    plaintext client at a TLS port, or a TLS client at a plaintext one; ""
    when the server's transport is the client's, or target is not one
    host:port, or nothing answers there.

    It probes with a TLS handshake that verifies no certificate: it only asks
    whether the port speaks TLS, and sends nothing else.
    """
    if ":/" in target or "," in target or target.startswith(_TARGET_SCHEMES):
        return ""
    try:
        host, port = _split_host_port(target)
    except ConfigError:
        return ""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=3) as sock:
            try:
                with ctx.wrap_socket(sock, server_hostname=host):
                    speaks_tls = True
            except ssl.SSLError:
                speaks_tls = False
    except OSError:
        return ""
    if speaks_tls and not tls:
        return f"the server at {target} speaks TLS: set REWARDD_TLS_CA (Client(tls_ca=…)) to the CA that signed its certificate"
    if tls and not speaks_tls:
        return f"the server at {target} does not speak TLS: unset REWARDD_TLS_CA, or start it with --tls-cert/--tls-key"
    return ""


def grpc_target(addr: str, tls: bool = False) -> str:
    """The gRPC target for REWARDD_ADDR.

    A target URI (dns:///host:port, ipv4:…, unix:…) is used as is. One
    host:port is resolved by gRPC's DNS resolver (all its addresses are
    balanced). A comma-separated list becomes one ipv4: (or ipv6:) target
    over all the listed servers: host names in a list are resolved once,
    here; use dns:/// for a name whose addresses change. A URL
    (http://host:port, grpc://…) is refused with the host:port to give.
    """
    addr = addr.strip()
    if not addr:
        raise ConfigError("REWARDD_ADDR is empty: want host:port, a comma-separated list, or dns:///host:port")
    scheme, sep, rest = addr.partition("://")
    if sep and scheme.lower() in _URL_SCHEMES:
        host_port = rest.rstrip("/")
        tls_too = " and REWARDD_TLS_CA to the CA that signed the server's certificate" if scheme.lower() in ("https", "grpcs") and not tls else ""
        raise ConfigError(f"REWARDD_ADDR={addr!r} is a URL: give host:port (REWARDD_ADDR={host_port}){tls_too}")
    if "://" in addr or addr.startswith(_TARGET_SCHEMES):
        return addr
    parts = [p.strip() for p in addr.split(",") if p.strip()]
    if len(parts) == 1:
        _split_host_port(parts[0])
        return parts[0]
    v4: list[str] = []
    v6: list[str] = []
    for part in parts:
        host, port = _split_host_port(part)
        for ip in _resolve(host, port):
            if ip.version == 4:
                v4.append(f"{ip}:{port}")
            else:
                v6.append(f"[{ip}]:{port}")
    if v4 and v6:
        raise ConfigError(f"REWARDD_ADDR={addr!r} mixes IPv4 and IPv6 servers; gRPC balances one family per target: list one family, or use dns:///")
    return ("ipv4:" + ",".join(v4)) if v4 else ("ipv6:" + ",".join(v6))


def _split_host_port(part: str) -> tuple[str, int]:
    if part.startswith("["):
        host, sep, rest = part[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, sep, port = part.rpartition(":")
    try:
        p = int(port)
    except ValueError:
        p = -1
    if not host or not sep or not 0 < p < 65536:
        raise ConfigError(f"REWARDD_ADDR entry {part!r}: want host:port (or [ipv6]:port)")
    return host, p


def _resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise ConfigError(f"REWARDD_ADDR: cannot resolve {host!r}: {err}") from None
    ips = []
    for info in infos:
        ip = ipaddress.ip_address(info[4][0])
        if ip not in ips:
            ips.append(ip)
    # A name with both families (localhost): keep IPv4, as one target holds one family.
    v4 = [ip for ip in ips if ip.version == 4]
    return v4 or ips


def _function_spec(f: Any) -> reward_pb2.FunctionSpec:
    """An inline function: a FunctionSpec as is, or one made from a mapping
    {"name", "kind", "params"} (params optional, JSON-able)."""
    if isinstance(f, reward_pb2.FunctionSpec):
        return f
    if not isinstance(f, Mapping):
        raise TypeError(f"rewardd: inline function {f!r} is a {type(f).__name__}, want a mapping or reward_pb2.FunctionSpec")
    unknown = set(f) - {"name", "kind", "params"}
    if unknown:
        raise ValueError(f"rewardd: inline function {f.get('name')!r}: unknown keys {sorted(unknown)} (want name, kind, params)")
    name, kind, params = f.get("name"), f.get("kind"), f.get("params") or {}
    if not isinstance(name, str) or not name or not isinstance(kind, str) or not kind:
        raise ValueError(f"rewardd: inline function {f!r}: name and kind must be non-empty strings")
    if not isinstance(params, Mapping):
        raise TypeError(f"rewardd: inline function {name!r}: params is a {type(params).__name__}, want a mapping")
    spec = reward_pb2.FunctionSpec(name=name, kind=kind)
    spec.params.update(_rows.jsonable(params))
    return spec
