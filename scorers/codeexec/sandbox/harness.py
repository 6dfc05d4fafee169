# rewardd code_exec fork server, for python programs. Each slot runs two
# servers, each as PID 1 of namespaces of its own (or as plain processes
# in unsafe mode), started by the Go pool with its role as the one
# argument. A server's program is this file (what both roles share: the
# frames, the wire encoding of values, slot time, the descriptors) followed
# by its role's files (harness.go): runner.py, or zygote_io.py and
# zygote.py.
#
# - "runner" talks to Go (fd 3 in, fd 4 out) and runs the assert-style
#   tests (trusted: the dataset's). It never forks, so the pages it writes
#   are its own after the first write: running tests costs no copy-on-write
#   faults.
# - "zygote" (the fork server proper) forks one child per submission, in
#   which the program runs, and kills everything after it. Between forks it
#   does as little as it can: every page it writes after a fork is a fault.
#
# The two talk over a unix socket pair (fd 5 in the runner, fd 3 in the
# zygote): frames of a 4-byte big-endian length, an op byte and a body; an
# assert job passes the two pipe ends of the program's process along
# (SCM_RIGHTS), so the runner talks to the program directly: its requests
# in marshal (ask_frame: it is trusted), the answers in JSON (they are not).
# The slot's cpu.pressure and cpu.stat follow each role's descriptors (the
# runner's 6 and 7, the zygote's 4 and 5): its wall limits are slot time.
#
# Protocol with Go: frames of a 4-byte big-endian length and a JSON object.
# A request names the program, the test style and its inputs (never the
# expected outputs: those stay in Go), the limits and the uid to run as. The
# reply lists one fact per test, in order: how it ended, what it used and
# printed; Go judges them (judge.go). An io request goes on to the zygote,
# which forks one child that runs every test of the submission; if the
# child dies in the middle of the suite, the test it was running is
# recorded and the rest run in a new child, within the request's wall time.
# After each request every process of the program is killed and the work
# dir emptied, so the next submission starts clean. Programs of every other
# language are the executor's (executor.go).
#
# This file is the trusted side: it never runs the submission's code in the
# runner or the zygote, only in children that dropped to an unprivileged uid.


import _signal
import array
import base64
import builtins
import errno
import fcntl
import gc
import json
import marshal
import os
import resource
import select
import signal
import socket
import struct
import sys
import time

ROLE = sys.argv[1] if len(sys.argv) > 1 else ""
# The runner's descriptors: requests from Go, replies to Go, the zygote.
IN_FD, OUT_FD, RUNNER_PEER_FD = 3, 4, 5
# The slot's accounting (see slottime.go).
STALL_FD, CPU_FD = (6, 7) if ROLE == "runner" else (4, 5)
WORK = os.environ.get("REWARDD_WORK", "/tmp/work")
AS_PID1 = os.getpid() == 1

# Modules imported up front (HumanEval prompts and tests and typical
# stdin/stdout solutions use these): by the runner for the tests, by the
# zygote for the programs. The zygote leaves out random (and statistics,
# which imports it): random reseeds itself in every fork (an at-fork hook,
# Python code that a fresh fork pays for in page faults), which only the
# rare program that uses it should pay, by importing it.
PRELOAD = ("typing", "math", "re", "collections", "itertools", "functools", "heapq", "bisect",
           "string", "random", "hashlib", "fractions", "decimal", "statistics", "copy", "io",
           "operator", "array", "datetime")


def read_exact(fd, n, got=b""):
    """n bytes from fd (got: the first of them, already read), or None when
    fd ends first."""
    buf = bytearray(got)
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


HEAD = struct.Struct(">I")


def read_frame(fd):
    """The body of the next length-prefixed frame on fd, or None when fd
    ends first. Two reads nearly always do it: in the program's process
    every step of Python more writes pages of the zygote's."""
    head = os.read(fd, 4)
    if len(head) != 4:
        head = read_exact(fd, 4, head)
        if head is None:
            return None
    (size,) = HEAD.unpack(head)
    body = os.read(fd, size)
    if len(body) != size:
        return read_exact(fd, size, body)
    return body


def write_all(fd, data):
    n = os.write(fd, data)
    if n == len(data):
        return
    view = memoryview(data)[n:]
    while view:
        n = os.write(fd, view)
        view = view[n:]


def micros(fd, key):
    """The number after key in what fd holds (a cgroup file), in seconds
    from microseconds; 0 when there is none."""
    try:
        data = os.pread(fd, 512, 0)
    except OSError:
        return 0.0
    i = data.find(key)
    if i < 0:
        return 0.0
    j = k = i + len(key)
    while k < len(data) and 48 <= data[k] <= 57:
        k += 1
    return int(data[j:k] or b"0") / 1e6


class Watch:
    """A stretch of slot time (slottime.go): the wall time since it began
    less the time the slot waited for a CPU."""

    def __init__(self):
        self.t0 = time.monotonic()
        self.s0 = micros(STALL_FD, b"total=")
        self.c0 = micros(CPU_FD, b"usage_usec ")

    def slot(self):
        stalled = micros(STALL_FD, b"total=") - self.s0
        return max(0.0, time.monotonic() - self.t0 - max(0.0, stalled))

    def left(self, limit, cpu):
        """How much longer to wait before asking again whether limit
        seconds of slot time ran out (or, past limit of wall time, cpu
        seconds of the slot's CPU time, after which it stretches no
        further); 0 when they have."""
        slot = self.slot()
        if slot >= limit or time.monotonic() - self.t0 >= limit and micros(CPU_FD, b"usage_usec ") - self.c0 >= cpu:
            return 0.0
        return max(limit - slot, 0.02)


def describe(e):
    text = "%s: %s" % (type(e).__name__, e)
    return text[:500]


class NotPlain(Exception):
    pass


# Values cross between the program's process and the tests as JSON: None,
# bool, int, float and str as themselves, lists as arrays, the other plain
# built-in types tagged. Nothing else crosses: an object whose __eq__ is
# always true stays in the program's process.
TAGS = ("tuple", "set", "frozenset", "dict", "bytes", "complex")


def enc(x, depth=0):
    t = type(x)
    if depth > 200:
        raise NotPlain("a value nested too deeply")
    if x is None or t is bool or t is int or t is float or t is str:
        return x
    if t is list:
        return [enc(v, depth + 1) for v in x]
    if t is tuple or t is set or t is frozenset:
        return {"t": t.__name__, "v": [enc(v, depth + 1) for v in x]}
    if t is dict:
        return {"t": "dict", "v": [[enc(k, depth + 1), enc(v, depth + 1)] for k, v in x.items()]}
    if t is bytes:
        return {"t": "bytes", "v": x.hex()}
    if t is complex:
        return {"t": "complex", "v": [x.real, x.imag]}
    raise NotPlain("a %s" % t.__name__)


def _not_plain(o):
    raise TypeError("%s is not JSON serializable" % type(o).__name__)


# json.dumps(obj, separators=(",", ":")) without the Python around it (a
# JSONEncoder and a C encoder made per call): for the program's process's
# answers, built from enc's output, which has no cycles to check for.
_c_encode = json.encoder.c_make_encoder(None, _not_plain, json.encoder.encode_basestring_ascii, None,
                                        ":", ",", False, False, True)


def to_json(obj):
    return "".join(_c_encode(obj, 0))


def send_msg(fd, obj):
    data = to_json(obj).encode()
    write_all(fd, HEAD.pack(len(data)) + data)


def ask_frame(op, name, args=(), kwargs=None):
    """A request from the runner to the program's process: (op, name,
    args, kwargs) in marshal's version 2, which, like JSON, copies an
    object every time it occurs. The program's process reads it with
    marshal.loads, C alone, where json.loads runs Python that a fresh fork
    pays for in faults; marshal is for trusted data only, and only the
    runner writes these. Answers go the other way as JSON, which the runner
    believes nothing of."""
    body = marshal.dumps((op, name, args, kwargs if kwargs is not None else {}), 2)
    return HEAD.pack(len(body)) + body


class Peer:
    """One end of the socket pair between the runner and the zygote. A
    frame is a 4-byte big-endian length, an op byte and a body; descriptors
    travel with the frame's first bytes."""

    def __init__(self, fd):
        self.fd = fd
        self.sock = socket.socket(fileno=fd)

    def send(self, op, body=b"", fds=()):
        data = struct.pack(">I", len(body) + 1) + op + body
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        n = self.sock.sendmsg([data], anc)
        if n < len(data):
            self.sock.sendall(memoryview(data)[n:])

    def recv(self):
        """The next frame as (op, body, fds); (None, b"", []) when the other
        end is gone."""
        chunk, anc, _, _ = self.sock.recvmsg(4, socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC)
        return self.rest(chunk, anc)

    def rest(self, data, anc):
        """The frame whose first bytes, data, came with the ancillary data
        anc, read to its end (more descriptors may come with the rest of
        its first four bytes)."""
        fds = []
        while True:
            for level, kind, raw in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    a = array.array("i")
                    a.frombytes(raw[:len(raw) - len(raw) % a.itemsize])
                    fds.extend(a)
            if not data:
                break
            if len(data) >= 4:
                (size,) = struct.unpack(">I", data[:4])
                if len(data) - 4 > size:
                    break  # more than one frame: not from the other side of this protocol
                body = data[4:]
                if len(body) < size:
                    more = read_exact(self.fd, size - len(body))
                    if more is None:
                        break
                    body += more
                if not body:
                    break
                return body[:1], body[1:], fds
            chunk, anc, _, _ = self.sock.recvmsg(4 - len(data), socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC)
            if not chunk:
                data = b""
                continue
            data += chunk
        for fd in fds:
            os.close(fd)
        return None, b"", []


class ZygoteGone(Exception):
    """The zygote stopped answering: this slot cannot run programs."""


# An assert job for the zygote: limits (cpu, memory, output, processes) and
# the uid to run as.
JOB = struct.Struct(">dqqii")
A_FRAME = 4 + 1 + JOB.size
A_HEAD = struct.pack(">I", 1 + JOB.size) + b"a"
PIPE_FDS = struct.Struct("ii")


ASK_STATUS, DONE, KILLED = b"\x00\x00\x00\x01s", b"\x00\x00\x00\x01d", b"\x00\x00\x00\x11c"
# What KILLED carries: the program's CPU seconds and peak memory in KiB.
USED = struct.Struct(">dq")


HELLO_OK = b'\x00\x00\x00\x0e{"hello":"ok"}'


def pin():
    """Keep this slot, and every process it forks, on one CPU: fork, exit
    and the pipe round trips with the program then never need another CPU
    to flush its TLB or wake a process, which on the VMs measured costs
    more than the work (slot k takes the k-th allowed CPU, round robin)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
        slot = int(os.environ.get("REWARDD_SLOT", "0"))
        os.sched_setaffinity(0, {cpus[slot % len(cpus)]})
    except (OSError, ValueError):
        pass


def preload(names):
    for name in names:
        try:
            __import__(name)
        except ImportError:
            pass
