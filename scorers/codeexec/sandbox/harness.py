# rewardd code_exec fork server, for python programs. Each slot runs this
# file twice, each copy as PID 1 of namespaces of its own (or as plain
# processes in unsafe mode), started by the Go pool with its role as the one
# argument:
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
# The zygote's: the runner.
ZYGOTE_PEER_FD = 3
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
ZYGOTE_PRELOAD = tuple(name for name in PRELOAD if name not in ("random", "statistics"))


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


def send(obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    write_all(OUT_FD, struct.pack(">I", len(data)) + data)


def cpu_known():
    """Whether the slot's CPU time is known (cpu.stat): then the zygote ends
    a test at its CPU limit by it, and the program's own timer, which the
    kernel charges by the tick, is a backstop."""
    try:
        return b"usage_usec " in os.pread(CPU_FD, 512, 0)
    except OSError:
        return False


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

    def cpu(self):
        """The slot's CPU time since it began (exact; 0 without cpu.stat)."""
        return micros(CPU_FD, b"usage_usec ") - self.c0

    def left(self, limit, cpu):
        """How much longer to wait before asking again whether limit
        seconds of slot time ran out (or, past limit of wall time, cpu
        seconds of the slot's CPU time, after which it stretches no
        further); 0 when they have."""
        slot = self.slot()
        if slot >= limit or time.monotonic() - self.t0 >= limit and micros(CPU_FD, b"usage_usec ") - self.c0 >= cpu:
            return 0.0
        return max(limit - slot, 0.02)


class Survivors(Exception):
    pass


def survivors(signum, frame):
    raise Survivors()


def kill_all(pgid):
    """Kill every sandboxed process: as PID 1 of the namespace, kill(-1)
    reaches all of them and never this server; in unsafe mode only the
    child's process group. If they do not all die within two seconds this
    server cannot kill them (in a container: no CAP_KILL, and the children
    run under another uid), and a sandbox that cannot end its programs must
    not run the next one: it says why and exits. (The SIGALRM handler,
    survivors, is installed here and only here: a child forked at any
    other time gets SIGALRM's default action from this server, and need
    not set it back itself, which in a fresh fork costs more.)"""
    try:
        if AS_PID1:
            os.kill(-1, signal.SIGKILL)
        else:
            os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _signal.signal(_signal.SIGALRM, survivors)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                return
            except InterruptedError:
                continue
    except Survivors:
        os.write(2, b"sandbox: processes of a program survive SIGKILL from the fork server "
                    b"(in a container: is CAP_KILL missing?)\n")
        os._exit(1)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, _signal.SIG_DFL)


# The size tmpfs gives an empty directory (two entries, "." and "..", of
# 20 bytes each).
TMPFS_EMPTY_DIR = 40


def clean_work(uid):
    """Empty the work dir (on the private tmpfs) of whatever the last
    submission left, then hand it to the next uid and make it this
    process's working directory, which the children inherit. It walks by
    directory descriptors, without recursion, so that a tree deeper than
    any path can name is no obstacle; what still cannot be removed raises,
    which ends this server: the pool starts a fresh one, with a fresh
    tmpfs, rather than show one submission's files to the next."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(WORK, flags)
    except FileNotFoundError:
        os.makedirs(WORK, exist_ok=True)
        fd = os.open(WORK, flags)
    names = []  # the path from WORK down to fd
    try:
        # The sandbox's own tmpfs sizes a directory by its entries: an
        # empty one needs no walk.
        for _ in range(0 if AS_PID1 and os.fstat(fd).st_size == TMPFS_EMPTY_DIR else 1 << 22):
            sub, seen = None, False
            with os.scandir(fd) as entries:
                for e in entries:
                    seen = True
                    if e.is_dir(follow_symlinks=False):
                        sub = e.name
                        break
                    os.unlink(e.name, dir_fd=fd)
            if sub is not None:
                os.chmod(sub, 0o700, dir_fd=fd)
                down = os.open(sub, flags, dir_fd=fd)
                os.close(fd)
                fd = down
                names.append(sub)
            elif seen:
                continue  # look again: it must be empty before it goes
            elif names:
                up = os.open("..", flags, dir_fd=fd)
                os.close(fd)
                fd = up
                os.rmdir(names.pop(), dir_fd=fd)
            else:
                break
        else:
            if not (AS_PID1 and os.fstat(fd).st_size == TMPFS_EMPTY_DIR):
                raise RuntimeError("work dir: too many entries to remove")
        if uid >= 0:
            os.fchown(fd, uid, uid)
        os.fchmod(fd, 0o700)
        os.fchdir(fd)
    finally:
        os.close(fd)


def memfd(name, data=b""):
    fd = os.memfd_create(name, 0)
    if data:
        write_all(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


# Seals that make a memfd read-only for good.
READ_ONLY = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


def stdin_memfd(data):
    """A memfd holding data that no process can change: a program's stdin
    (every test's is open in the program's process, which must not grow
    them: memfds are memory the slot's cgroup counts)."""
    fd = os.memfd_create("stdin", os.MFD_ALLOW_SEALING)
    if data:
        write_all(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, READ_ONLY)
    return fd


def put_files(files, uid):
    """Write files ({name, data (base64), mode}) into the work dir, owned
    by uid. A name is a plain path below the work dir (Go checked it); its
    directories are made."""
    for f in files or ():
        parts = f["name"].split("/")
        path = WORK
        for p in parts[:-1]:
            path = os.path.join(path, p)
            if not os.path.isdir(path):
                os.mkdir(path, 0o700)
                if uid >= 0:
                    os.chown(path, uid, uid)
        fd = os.open(os.path.join(path, parts[-1]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            write_all(fd, base64.b64decode(f.get("data") or ""))
            if uid >= 0:
                os.fchown(fd, uid, uid)
        finally:
            os.close(fd)


def handle_io(req):
    """An io submission: one child runs every test, each with its own
    stdin, stdout and stderr (memfds). A test that ends the child (a crash,
    a limit) is recorded, and the tests after it run in a new child, within
    the submission's wall time. Once the tests together have printed more
    than the submission's total, the child is stopped: the test that
    crossed it ends "total", the rest are skipped."""
    n = len(req["inputs"])
    lim = req["limits"]
    uid = req["uid"]
    keep = req.get("keep")
    clean_work(uid)
    try:
        put_files(req.get("files"), uid)
    except OSError as e:
        return {"id": req["id"], "tests": [{"end": "files", "detail": str(e)}] * n}
    inputs = [stdin_memfd(s.encode("utf-8", "surrogateescape")) for s in req["inputs"]]
    outs = [memfd("stdout") for _ in range(n)]
    # Stderr goes back only when the job keeps it: otherwise one memfd,
    # emptied before each test, serves them all (the program's process
    # holds every memfd of the submission, and may fill each).
    errs = [memfd("stderr") for _ in range(n)] if keep else [memfd("stderr")] * n
    results = [None] * n
    used = [0]

    def over(k):
        """Count test k's output, as it ends; whether it takes the tests
        past the total (then its fact says so)."""
        out, err = os.fstat(outs[k]).st_size, os.fstat(errs[k]).st_size
        results[k]["out"], results[k]["err"] = out, err
        used[0] += out + (err if keep else 0)
        if used[0] <= lim["total"]:
            return False
        results[k] = {"end": "total", "out": out, "err": err}
        return True

    req["exact"] = cpu_known()
    job = Watch()
    first = 0
    stopped = False
    while first < n and job.slot() < lim["wall"]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            child(req, first, w, inputs, outs, errs)
            os._exit(70)  # never reached
        os.close(w)
        current, ended = collect(pid, r, results, first, job, req, over)
        os.close(r)
        kill_all(pid)
        if ended:
            stopped = ended == "total"
            break
        if req.get("stop") and any(x is not None and not ran(x) for x in results):
            stopped = True
            break
        first = current + 1
    # Every process of the program is gone: the outputs are final. They
    # are counted again, every test's, in order (a program may have
    # written into another test's memfds), and only what fits in the
    # total goes back.
    used[0], past = 0, False
    for k in range(n):
        if past:
            results[k] = {"end": "skipped"}
            continue
        if results[k] is None:
            results[k] = {"end": "skipped" if stopped else "deadline"}
        out, err = os.fstat(outs[k]).st_size, os.fstat(errs[k]).st_size if keep else 0
        results[k]["out"] = out
        used[0] += out + err
        if used[0] > lim["total"]:
            results[k], past = {"end": "total", "out": out, "err": err}, True
            continue
        if ran(results[k]) or keep:
            results[k]["stdout"] = read_back(outs[k], min(out, lim["output"] + 1))
        if keep:
            results[k]["stderr"] = read_back(errs[k], min(err, lim["output"] + 1))
    for fd in set(inputs + outs + errs):
        os.close(fd)
    return {"id": req["id"], "tests": results, "seconds": time.monotonic() - job.t0, "slot": job.slot(),
            "output": used[0]}


def ran(fact):
    """Whether a test's program ran to its end (Go judges its output)."""
    return fact["end"] == "return" or fact["end"] == "sysexit" and fact.get("code") == 0


def read_back(fd, n):
    """The first n bytes a memfd holds, in base64."""
    return base64.b64encode(os.pread(fd, n, 0)).decode()


def collect(pid, r, results, first, job, req, over):
    """Read the child's facts until it exits, a test runs out of its slot
    time (or, when the slot's CPU time is known, of its CPU time, counted
    from the child's "start" line for the first test), the submission's
    runs out or over(k), asked as each test k ends, says the tests printed
    more than they may. Returns the index of the
    test it was running when it stopped, and why it stopped early:
    "deadline" (the submission's slot time ran out), "total", or ""."""
    pidfd = os.pidfd_open(pid)
    buf = b""
    current = first
    exited = False
    started = [False]
    cpu_before = [0.0]  # the child's CPU when its current test began
    lim = req["limits"]
    test_wall, test_cpu = req.get("test_wall") or 0, req.get("test_cpu") or lim["cpu"]
    test = Watch() if test_wall else None
    exact = req.get("exact")
    began = time.monotonic()  # the current test's start
    watch = [r, pidfd]

    def killed(end, slot):
        """The fact of the current test, killed when its slot time ran out."""
        os.kill(pid, signal.SIGKILL)
        ru = os.wait4(pid, 0)[2]
        results[current] = {"end": end, "wall": slot, "rss": ru.ru_maxrss,
                            "cpu": max(0.0, ru.ru_utime + ru.ru_stime - cpu_before[0])}

    try:
        while True:
            if current >= len(results):
                return current, ""
            timeout = job.left(lim["wall"], lim["cpu"])
            if not timeout:
                killed("deadline", job.slot())
                return current, "deadline"
            if test:
                left = test.left(test_wall, test_cpu)
                if left and exact:
                    spent = test.cpu()
                    left = 0.0 if spent >= test_cpu else min(left, max(0.005, test_cpu - spent))
                if not left:
                    killed("wall", test.slot())
                    return current, ""
                timeout = min(timeout, left)
            ready, _, _ = select.select(watch, [], [], timeout)
            if pidfd in ready:
                exited = True
                # Drain what the child wrote before it exited (bounded: a
                # process it left behind may still be writing).
                os.set_blocking(r, False)
                try:
                    while len(buf) <= 1 << 20:
                        chunk = os.read(r, 65536)
                        if not chunk:
                            break
                        buf += chunk
                except BlockingIOError:
                    pass
                for line in buf.split(b"\n"):
                    k = record(line, results, started, cpu_before)
                    if k is not None and k >= current:
                        current = k + 1
                        if over(k):
                            return k, "total"
                break
            if r not in ready:
                continue
            chunk = os.read(r, 65536)
            if not chunk:
                # Every writer closed the pipe, but the child may live on
                # (a program can close its descriptors and sleep): wait
                # for its exit, or the deadline, without the pipe.
                watch = [pidfd]
                continue
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                was_started = started[0]
                k = record(line, results, started, cpu_before)
                if test and started[0] and not was_started:
                    test = Watch()  # the program's code starts
                if k is not None and k >= current:
                    current = k + 1
                    test = Watch() if test_wall else None
                    began = time.monotonic()
                    if over(k):
                        return k, "total"
            if len(buf) > 1 << 20:
                buf = b""
    finally:
        os.close(pidfd)
    stopped = req.get("stop") and current > first and not ran(results[current - 1])
    if exited and current < len(results) and results[current] is None and not stopped:
        _, status, usage = os.wait4(pid, 0)
        results[current] = {"end": "died", "status": status, "rss": usage.ru_maxrss,
                            "cpu": max(0.0, usage.ru_utime + usage.ru_stime - cpu_before[0]),
                            "wall": test.slot() if test else time.monotonic() - began}
        if over(current):
            return current, "total"
    return current, ""


# What a fact from the program's process may carry besides k and end:
# numbers about the test, and what it raised.
USAGE = ("cpu", "wall", "rss", "code", "errno")


def record(line, results, started, cpu_before):
    """Take one fact line {"k": index, "end": …}; ignore anything else (a
    program may write junk into the pipe: it only hurts itself). started[0]
    is set by the child's "start" line, written just before it runs the
    program's code: "setup" (the sandbox could not confine the child) is
    believed only before it. cpu_before[0] becomes the child's CPU time so
    far (its "c")."""
    if not line:
        return None
    try:
        msg = json.loads(line)
        k = msg["k"]
        end = msg["end"]
    except Exception:
        return None
    if end == "start":
        started[0] = True
        return None
    if end not in ("return", "sysexit", "raise", "setup") or end == "setup" and started[0]:
        return None
    if type(k) is not int or not 0 <= k < len(results) or results[k] is not None:
        return None
    res = {"end": end, "detail": str(msg.get("detail", ""))[:2000], "exc": str(msg.get("exc", ""))[:100]}
    for key in USAGE:
        v = msg.get(key)
        if type(v) in (int, float) and v >= 0 or key == "code" and type(v) is int:
            res[key] = v
    c = msg.get("c")
    if type(c) in (int, float) and c >= 0:
        cpu_before[0] = c
    results[k] = res
    return k


def confine(lim, uid, keep, err):
    """In a forked child: close every descriptor but keep, send stdout and
    stderr to err, set the limits lim and drop to uid. Raises when any step
    fails."""
    lo = 3
    for fd in sorted(keep):
        if fd >= lo:
            os.closerange(lo, fd)
            lo = fd + 1
    os.closerange(lo, 1 << 20)
    if not AS_PID1:
        os.setpgid(0, 0)
    os.chdir(WORK)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(err, 1)
    os.dup2(err, 2)
    os.close(null)
    # _signal, not signal: signal.signal converts to and from enums, a
    # walk through the enum machinery that a fresh fork pays for in faults.
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
    _signal.signal(_signal.SIGALRM, _signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = max(1, int(lim["cpu"] + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim["output"], lim["output"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    if uid >= 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (lim["procs"], lim["procs"]))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    os.umask(0o077)
    resource.setrlimit(resource.RLIMIT_AS, (lim["memory"], lim["memory"]))


def confine_program(cpu, memory, output, procs, uid, r, w, err):
    """confine, for the process of an assert-style program, in fewer steps
    (each step of Python in a fresh fork writes pages of the zygote's, a
    copy-on-write fault apiece): the zygote has already made what all its
    children share (stdin from /dev/null, no core dumps, no supplementary
    groups, umask, SIGXFSZ ignored, SIGALRM's default action, the work
    dir as the working directory) and what this one needs (err, a memfd
    for stdout and stderr; cpu, whole seconds). Returns the descriptors r
    and w now have (3 and 4); every other one but 0, 1 and 2 is closed."""
    # err first: it may be 4. r and w are above 3 (the zygote's
    # socket, which 3 replaces here).
    os.dup2(err, 1)
    os.dup2(err, 2)
    os.dup2(r, 3)
    os.dup2(w, 4)
    os.closerange(5, 1 << 20)
    if not AS_PID1:
        os.setpgid(0, 0)
    setrlimit = resource.setrlimit
    setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    setrlimit(resource.RLIMIT_FSIZE, (output, output))
    setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    if uid >= 0:
        setrlimit(resource.RLIMIT_NPROC, (procs, procs))
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    setrlimit(resource.RLIMIT_AS, (memory, memory))
    return 3, 4


def zygote_setup():
    """What every child of the zygote gets from it once, rather than
    setting it in each fork (see confine_program): confine sets each of
    these again for io submissions."""
    null = os.open("/dev/null", os.O_RDWR)
    if null != 0:
        os.dup2(null, 0)
        os.close(null)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.getuid() == 0:
        os.setgroups([])
    os.umask(0o077)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def child(req, first, w, inputs, outs, errs):
    """Runs in the forked child of an io submission: confine, run the tests
    from index first on, report each on w. Never returns."""
    try:
        confine(req["limits"], req["uid"], set(inputs + outs + errs + [w]), errs[first])
    except BaseException as e:
        report(w, first, "setup", "sandbox setup failed: %r" % (e,))
        os._exit(71)
    run_io(req, first, w, inputs, outs, errs)
    os._exit(0)


def report(w, k, end, detail="", **usage):
    line = json.dumps(dict(usage, k=k, end=end, detail=detail)) + "\n"
    try:
        write_all(w, line.encode())
    except OSError:
        pass


def describe(e):
    text = "%s: %s" % (type(e).__name__, e)
    return text[:500]


def run_io(req, first, w, inputs, outs, errs):
    import io

    # From here on the program's code runs in this process (see record).
    report(w, -1, "start")
    try:
        code = compile(req["code"], "<submission>", "exec")
    except BaseException as e:
        for k in range(first, len(outs)):
            report(w, k, "raise", str(e)[:500], exc=type(e).__name__)
            if req.get("stop"):
                break
        return
    saved = dict(builtins.__dict__)
    test_cpu = req.get("test_cpu") or 0
    getrusage, SELF, CHILDREN = resource.getrusage, resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN
    shared_err = not req.get("keep")  # one memfd for every test's stderr (handle_io)
    for k in range(first, len(outs)):
        os.dup2(inputs[k], 0)
        os.lseek(0, 0, os.SEEK_SET)
        os.dup2(outs[k], 1)
        os.dup2(errs[k], 2)
        if shared_err:
            # Each test's stderr starts empty, as if it had its own.
            os.ftruncate(2, 0)
            os.lseek(2, 0, os.SEEK_SET)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="surrogateescape")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="surrogateescape")
        end, detail, usage = "return", "", {}
        me, kids = getrusage(SELF), getrusage(CHILDREN)
        cpu0 = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        t0 = time.monotonic()
        if test_cpu:
            # The test's CPU timer: SIGPROF's default action ends the
            # process, which the zygote reports as this test's death. With
            # the slot's CPU time known, the zygote ends the test at its
            # limit, and the timer is a backstop (see cpu_known).
            _signal.signal(_signal.SIGPROF, _signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_PROF, test_cpu * 1.1 + 0.1 if req.get("exact") else test_cpu)
        try:
            exec(code, {"__name__": "__main__", "__builtins__": builtins})
        except SystemExit as e:
            end = "sysexit"
            usage["code"] = 0 if e.code is None else e.code if type(e.code) is int else 1
        except BaseException as e:
            end, detail, usage["exc"] = "raise", str(e)[:500], type(e).__name__
            if isinstance(e, OSError) and e.errno:
                usage["errno"] = e.errno
        if test_cpu:
            signal.setitimer(signal.ITIMER_PROF, 0)
        try:
            sys.stdout.flush()
        except OSError as e:
            if end != "raise" and e.errno == errno.EFBIG:
                end, detail, usage = "raise", str(e), {"exc": "OSError", "errno": e.errno}
        except BaseException:
            pass
        try:
            sys.stderr.flush()
        except BaseException:
            pass
        wall = time.monotonic() - t0
        me, kids = getrusage(SELF), getrusage(CHILDREN)
        cpu1 = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        builtins.__dict__.clear()
        builtins.__dict__.update(saved)
        report(w, k, end, detail, cpu=cpu1 - cpu0, wall=wall, rss=me.ru_maxrss, c=cpu1, **usage)
        if req.get("stop") and not ran(dict(usage, end=end)):
            return


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


def dec(x, depth=0):
    t = type(x)
    if depth > 200:
        raise ValueError("nested too deeply")
    if x is None or t is bool or t is int or t is float or t is str:
        return x
    if t is list:
        return [dec(v, depth + 1) for v in x]
    if t is not dict or type(x.get("t")) is not str or x["t"] not in TAGS or type(x.get("v")) is not (str if x["t"] == "bytes" else list):
        raise ValueError("not a value")
    tag, v = x["t"], x["v"]
    if tag == "bytes":
        return bytes.fromhex(v)
    if tag == "complex":
        return complex(float(v[0]), float(v[1]))
    if tag == "dict":
        out = {}
        for pair in v:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("not a dict item")
            out[dec(pair[0], depth + 1)] = dec(pair[1], depth + 1)
        return out
    items = [dec(w, depth + 1) for w in v]
    return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)


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


MAX_MSG = 64 << 20


class Gone(Exception):
    """The program's process stopped answering: it exited or was killed."""


class Timeout(Exception):
    pass


class Refused(Exception):
    pass


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


class Remote:
    """The runner's end of the conversation with the program's process: r
    and w are pipes to it; peer is the zygote, which knows how it ended."""

    def __init__(self, r, w, peer):
        self.r, self.w, self.peer = r, w, peer
        self.expired = False  # the test's slot time ran out (judge's timer)
        self.pending = b""  # read past the last answer

    def exit_status(self):
        """Ask the zygote how the process ended (it waits half a second
        for it to end)."""
        self.peer.send(b"s")
        while True:
            op, body, fds = self.peer.recv()
            for fd in fds:
                os.close(fd)
            if op is None:
                raise ZygoteGone()
            if op == b"x":
                return json.loads(body)

    def read_some(self, n):
        """Up to n bytes from the program's process. The read blocks:
        judge's timer (SIGALRM when the slot time runs out) interrupts it
        with Timeout, and a read after that (test code may catch Timeout)
        raises it at once."""
        if self.expired:
            raise Timeout()
        chunk = os.read(self.r, min(n, 1 << 20))
        if not chunk:
            raise Gone()
        return chunk

    def recv(self):
        # One read nearly always brings the whole answer (each is one
        # write); what comes after it waits for the next recv.
        buf, self.pending = self.pending, b""
        while len(buf) < 4:
            buf += self.read_some(64 << 10)
        (size,) = HEAD.unpack_from(buf)
        if size > MAX_MSG:
            raise Gone()
        body = buf[4:4 + size]
        self.pending = buf[4 + size:]
        while len(body) < size:
            body += self.read_some(size - len(body))
        try:
            msg = json.loads(body)
        except ValueError:
            raise Gone()
        if type(msg) is not dict:
            raise Gone()
        return msg

    def send_raw(self, data):
        try:
            write_all(self.w, data)
        except OSError:
            raise Gone()

    def ask(self, frame):
        """Send the request frame (ask_frame) and return the answer."""
        try:
            write_all(self.w, frame)
        except OSError:
            raise Gone()
        return self.recv()


class RemoteFunction:
    """A function of the program, called in the program's process with
    plain arguments, returning plain data or raising."""

    def __init__(self, remote, name):
        self.remote, self.name = remote, name

    def __call__(self, *args, **kwargs):
        try:
            # Only plain data crosses (enc refuses the rest); it goes as
            # itself, in marshal.
            enc(args)
            enc(kwargs)
        except NotPlain as e:
            raise TypeError("rewardd passes only plain data to the program, not %s" % e)
        msg = self.remote.ask(ask_frame("call", self.name, args, kwargs))
        if "value" in msg:
            try:
                return dec(msg["value"])
            except (ValueError, TypeError, RecursionError):
                raise Gone()
        if "refused" in msg:
            raise Refused("the program returned %s, not plain built-in data" % str(msg["refused"])[:200])
        if "raise" in msg:
            name, detail = str(msg["raise"])[:100], str(msg.get("detail", ""))[:500]
            if name == "SystemExit":
                raise Exited("the program called exit during the tests")
            if name == "MemoryError":
                raise MemoryError(detail)
            cls = getattr(builtins, name, None)
            if type(cls) is type and issubclass(cls, Exception):
                raise cls(detail)
            raise RuntimeError("%s: %s" % (name, detail))
        raise Gone()

    def __repr__(self):
        return "<function %s>" % self.name


class Exited(Exception):
    pass


class TestGlobals(dict):
    """Globals of the test code: a name it does not define itself and that
    is no builtin is looked up first in the trusted prompt (a test may call
    a helper the prompt defines, as HumanEval's do), then in the program.
    A name the prompt defines (but the entry point, which is the
    program's) is never taken from the program: a program that redefines
    the helper the tests check it with must not pass by that."""

    def __init__(self, remote, prompt):
        super().__init__(__name__="__rewardd_tests__", __builtins__=builtins)
        self.remote, self.prompt = remote, prompt

    def __missing__(self, name):
        if name in builtins.__dict__ or name.startswith("__"):
            raise KeyError(name)
        p = self.prompt
        if p is not None and name != p.entry and name in p.names:
            if name not in p.ns:
                raise PromptBroken("the prompt's code raised %s before it defined %r" % (p.error, name))
            v = p.ns[name]
            self[name] = v
            return v
        msg = self.remote.ask(ask_frame("get", name))
        if msg.get("callable") is True:
            v = RemoteFunction(self.remote, name)
        elif "value" in msg:
            try:
                v = dec(msg["value"])
            except (ValueError, TypeError, RecursionError):
                raise Gone()
        else:
            raise KeyError(name)
        self[name] = v
        return v


class PromptBroken(Exception):
    """The test code needs a name the trusted prompt defines, and running
    the prompt's code failed before it did."""


class Prompt:
    """The trusted prompt of an assert job, run: its globals ns, the names
    its code binds at the top level (whether or not it got that far), why
    it stopped early ("" when it did not), and the job's entry point."""

    def __init__(self, compiled, entry):
        code, self.names = compiled
        self.entry = entry
        self.ns = {"__name__": "__rewardd_prompt__", "__builtins__": builtins}
        self.error = ""
        try:
            exec(code, self.ns)
        except Timeout:
            raise
        except BaseException as e:
            self.error = describe(e)


# Compiled prompts, by source: (code, the names it binds at the top level),
# or None for a prompt that is not python.
PROMPT_CODE = {}


def compile_prompt(src):
    if not src:
        return None
    if src in PROMPT_CODE:
        return PROMPT_CODE[src]
    import symtable

    try:
        code = compile(src, "<prompt>", "exec", dont_inherit=True)
        table = symtable.symtable(src, "<prompt>", "exec")
        compiled = code, frozenset(s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported())
    except Exception:
        compiled = None  # not python (prose, a chat turn): it defines nothing
    return remember(PROMPT_CODE, src, compiled)


def remember(cache, key, value):
    """Keep value in cache under key (a cache of 256 at most, emptied when
    full), and return it."""
    if len(cache) >= 256:
        cache.clear()
    cache[key] = value
    return value


# The helpers of prompts, by source and entry point: (code, names,
# modules), or None for a prompt that defines none (or is not python).
HELPER_CODE = {}


def compile_helpers(src, entry):
    """The helpers a prompt defines: its top-level functions and classes
    with a body (more than a docstring, pass or ...), but the entry point,
    compiled as a module of them and the prompt's imports, with their names
    and the modules it imports. The program's process defines them again
    after the program's code ran (program_process)."""
    if not src:
        return None
    key = (src, entry)
    if key in HELPER_CODE:
        return HELPER_CODE[key]
    import ast

    def has_body(node):
        body = node.body
        if body and type(body[0]) is ast.Expr and type(body[0].value) is ast.Constant and type(body[0].value.value) is str:
            body = body[1:]
        return any(not (type(b) is ast.Pass or type(b) is ast.Expr and type(b.value) is ast.Constant and b.value.value is ...)
                   for b in body)

    out = None
    try:
        keep, names, modules = [], [], set()
        for node in ast.parse(src).body:
            if type(node) is ast.Import:
                keep.append(node)
                modules.update(a.name.split(".")[0] for a in node.names)
            elif type(node) is ast.ImportFrom and node.module and not node.level:
                keep.append(node)
                modules.add(node.module.split(".")[0])
            elif type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) and node.name != entry and has_body(node):
                keep.append(node)
                names.append(node.name)
        if names:
            code = compile(ast.Module(body=keep, type_ignores=[]), "<prompt>", "exec", dont_inherit=True)
            out = code, tuple(names), tuple(sorted(modules))
    except Exception:
        out = None  # not python (prose, a chat turn): it defines nothing
    return remember(HELPER_CODE, key, out)


# Compiled test code, by source: every rollout of a prompt has the same.
TEST_CODE = {}


def compile_tests(src):
    code = TEST_CODE.get(src)
    if code is None:
        code = remember(TEST_CODE, src, compile(src, "<tests>", "exec"))
    return code


# Programs up to this size are compiled in the runner, which sends the
# program's process the code object (marshal): compiling in a fresh fork
# writes ~70 pages of the zygote's memory, ~1.5 ms of copy-on-write faults.
# A larger program is compiled in its own process, under its limits.
COMPILE_IN_RUNNER = 64 << 10


def run_assert(peer, req):
    """HumanEval style, in the runner. The program runs in a child of the
    zygote, confined like an io submission; the test code and
    check(entry point) run here, where the program's code never runs, and
    reach the program's functions only through a pipe that carries plain
    data. It cannot write the verdict, patch what the asserts compare with,
    or pass by returning an object equal to everything.

    The test code is the dataset's, trusted as much as the config; it runs
    in this process, which is inside a sandbox too."""
    lim, uid = req["limits"], req["uid"]
    job = Watch()

    def reply(fact):
        return {"id": req["id"], "tests": [fact], "seconds": time.monotonic() - job.t0, "slot": job.slot()}

    try:
        tests = compile_tests(req["test"])
    except BaseException as e:
        return reply({"end": "harness", "detail": "test code does not compile: " + describe(e)})
    src = req["code"]
    if len(src) <= COMPILE_IN_RUNNER:
        try:
            code = compile(src, "<submission>", "exec", dont_inherit=True)
        except BaseException as e:
            return reply({"end": "program", "detail": "program does not compile: " + describe(e)})
        program = b"m" + marshal.dumps(code)
    else:
        code, program = None, b"s" + src.encode("utf-8", "surrogatepass")
    helpers = compile_helpers(req.get("helpers"), req["entry"])
    if helpers:
        program = b"h" + marshal.dumps((code, None if code else src.encode("utf-8", "surrogatepass")) + helpers)
    program = struct.pack(">I", len(program)) + program
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    try:
        peer.send(b"a", JOB.pack(lim["cpu"], lim["memory"], lim["output"], lim["procs"], uid), (to_r, from_w))
    finally:
        os.close(to_r)
        os.close(from_w)
    remote = Remote(from_r, to_w, peer)
    try:
        fact = judge(remote, tests, req["entry"], lim["wall"], lim["cpu"], program, compile_prompt(req.get("prompt")))
    finally:
        os.close(from_r)
        os.close(to_w)
        # Whatever happened, every process of the program goes now.
        peer.send(b"d")
        while True:
            op, body, fds = peer.recv()
            for fd in fds:
                os.close(fd)
            if op is None:
                raise ZygoteGone()
            if op == b"c":
                break
    if len(body) == USED.size and "cpu" not in fact:
        fact["cpu"], fact["rss"] = USED.unpack(body)
    fact["wall"] = job.slot()
    return reply(fact)


def gone(remote, when):
    """The fact when the program's process stopped answering: it closed the
    pipe, and has exited or does soon, or it is alive without it."""
    d = remote.exit_status()
    if d.get("alive"):
        return {"end": "gone", "alive": True, "detail": when}
    return {"end": "gone", "status": d["status"], "cpu": d["cpu"], "rss": d["rss"], "detail": when}


def judge(remote, tests, entry, wall, cpu, program, prompt):
    """Run the test code and check(entry point) against the program's
    process; the fact of how it went."""
    watch = Watch()

    def alarm(signum, frame):
        left = watch.left(wall, cpu)
        if left:
            signal.setitimer(signal.ITIMER_REAL, left)
            return
        remote.expired = True
        raise Timeout()

    # The test code runs here: a loop in it, or a program that never reads
    # what it is sent, must not outlive the slot time.
    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, max(0.001, wall))
    try:
        try:
            remote.send_raw(program)
            hello = remote.recv()
        except Gone:
            return gone(remote, "before the tests ran")
        except Timeout:
            return {"end": "wall"}
        if hello.get("hello") != "ok":
            return {"end": "program", "detail": str(hello.get("detail", "the program did not start"))[:1000]}
        g = TestGlobals(remote, Prompt(prompt, entry) if prompt is not None else None)
        try:
            exec(tests, g)
        except (Gone, Timeout, Refused, Exited, ZygoteGone, PromptBroken):
            raise
        except BaseException as e:
            return {"end": "harness", "detail": "test code raised " + describe(e)}
        check = dict.get(g, "check")
        if not callable(check):
            return {"end": "harness", "detail": "test code defines no check(candidate)"}
        msg = remote.ask(ask_frame("get", entry))
        if msg.get("callable") is not True:
            return {"end": "program", "detail": "program defines no function %r" % entry}
        check(RemoteFunction(remote, entry))
    except ZygoteGone:
        raise
    except Gone:
        return gone(remote, "during the tests")
    except Timeout:
        return {"end": "wall"}
    except PromptBroken as e:
        return {"end": "harness", "detail": str(e)}
    except Refused as e:
        return {"end": "refused", "detail": str(e)}
    except Exited:
        return {"end": "exited"}
    except BaseException as e:
        return {"end": "raise", "exc": type(e).__name__, "detail": str(e)[:500]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    return {"end": "passed"}


# An assert job for the zygote: limits (cpu, memory, output, processes) and
# the uid to run as.
JOB = struct.Struct(">dqqii")
A_FRAME = 4 + 1 + JOB.size
A_HEAD = struct.pack(">I", 1 + JOB.size) + b"a"
PIPE_FDS = struct.Struct("ii")


def fork_program(peer_fd, job, r, w):
    """In the zygote: fork the process of an assert-style program, which
    talks to the runner over the pipe ends r and w; say how it ended when
    the runner asks; when the runner is done, kill every process of the
    program and say so. It writes as little as it can: every page it writes
    while the program's process lives is a copy-on-write fault (a copy and
    a TLB flush), and every page it writes until the next fork a fault."""
    cpu, memory, output, procs, uid = JOB.unpack(job)
    # The runner writes the program into the pipe right after the job. A
    # program it compiled is unmarshalled here, before the fork: the pages
    # that makes this process write cost it a fault each at most, the
    # child's previous owner being gone, where in the child each would be
    # a copy-on-write fault, the zygote being alive. The child inherits the
    # code object; it never runs here. A program sent as source is
    # compiled in the child, under its limits.
    program = read_frame(r)
    if program is not None and program[:1] in (b"m", b"h"):
        program = marshal.loads(memoryview(program)[1:])
    clean_work(uid)
    # What the child would otherwise make for itself (see confine_program).
    err = os.memfd_create("stderr", 0)
    cpu_seconds = max(1, int(cpu + 0.999))
    pid = os.fork()
    if pid == 0:
        program_process(cpu_seconds, memory, output, procs, uid, r, w, err, program)
        os._exit(70)  # never reached
    try:
        os.close(r)
        os.close(w)
        os.close(err)
        # Only "s" and "d" come now, five bytes each and no descriptors:
        # a plain read allocates less than Peer.recv.
        frame = os.read(peer_fd, 5)
        while frame != DONE:
            if frame == ASK_STATUS:
                status = json.dumps(exit_status(pid)).encode()
                write_all(peer_fd, struct.pack(">I", len(status) + 1) + b"x" + status)
            elif 0 < len(frame) < 5:
                rest = read_exact(peer_fd, 5 - len(frame))
                if rest is None:
                    raise ZygoteGone()
                frame += rest
                continue
            else:
                raise ZygoteGone()  # the runner is gone (or confused): so is this slot
            frame = os.read(peer_fd, 5)
    finally:
        # The program's CPU time and peak memory, for the verdict's
        # details (exit_status may have reaped it already).
        usage = (0.0, 0)
        try:
            os.kill(pid, signal.SIGKILL)
            ru = os.wait4(pid, 0)[2]
            usage = (ru.ru_utime + ru.ru_stime, ru.ru_maxrss)
        except (ProcessLookupError, ChildProcessError):
            pass
        kill_all(pid)
    write_all(peer_fd, KILLED + USED.pack(*usage))


ASK_STATUS, DONE, KILLED = b"\x00\x00\x00\x01s", b"\x00\x00\x00\x01d", b"\x00\x00\x00\x11c"
# What KILLED carries: the program's CPU seconds and peak memory in KiB.
USED = struct.Struct(">dq")


def exit_status(pid):
    """How the program's process pid ended, once it has (half a second at
    most): its wait status, CPU time and peak memory, or {"alive": true}
    if it has not."""
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], 0.5)
    finally:
        os.close(pidfd)
    if not ready:
        return {"alive": True}
    _, st, usage = os.wait4(pid, 0)
    return {"status": st, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss}


HELLO_OK = b'\x00\x00\x00\x0e{"hello":"ok"}'


def program_process(cpu, memory, output, procs, uid, r, w, err, program):
    """The program's process: confine, run the program (a code object, the
    source's frame, or None when the runner sent none), then answer the
    tests' questions (what is this name? call this function with these
    arguments) until the runner closes the pipe. Everything it sends is
    checked on the other side: this process runs untrusted code."""
    try:
        r, w = confine_program(cpu, memory, output, procs, uid, r, w, err)
    except BaseException as e:
        try:
            # confine_program moved w to 4 first.
            send_msg(4, {"hello": "failed", "detail": "sandbox setup failed: %r" % (e,)})
        finally:
            os._exit(71)
    if program is None:
        os._exit(0)
    helpers = None
    if type(program) is tuple:
        # With the prompt's helpers (compile_helpers): the program as
        # code or as source.
        program, src, helpers = program[0], program[1], program[2:]
        program = program or b"s" + src
    if type(program) is not bytes:
        code = program
    else:
        try:
            code = compile(program[1:].decode("utf-8", "surrogatepass"), "<submission>", "exec")
        except BaseException as e:
            send_msg(w, {"hello": "failed", "detail": "program does not compile: " + describe(e)})
            os._exit(0)
    del program
    g = {"__name__": "__rewardd__", "__builtins__": builtins}
    if helpers:
        # What the helpers use, as it is before the program runs.
        pristine = dict(builtins.__dict__)
        modules = [(m, sys.modules[m], dict(vars(sys.modules[m]))) for m in helpers[2] if m in sys.modules]
        loaded = sys.modules
    try:
        exec(code, g)
    except BaseException as e:
        send_msg(w, {"hello": "failed", "detail": "program raised %s before the tests ran" % describe(e)})
        os._exit(0)
    if helpers:
        # The prompt's helpers, defined again: a program that redefines
        # the helper the tests check it with (or the builtins, or the
        # modules it uses) does not pass by that.
        try:
            for m, module, d in modules:
                loaded[m] = module
                vars(module).clear()
                vars(module).update(d)
            h = {"__name__": "__rewardd_prompt__", "__builtins__": pristine}
            exec(helpers[0], h)
            for name in helpers[1]:
                g[name] = h[name]
        except BaseException as e:
            send_msg(w, {"hello": "failed", "detail": "the prompt's helpers could not be defined again after the program ran: " + describe(e)})
            os._exit(0)
    write_all(w, HELLO_OK)
    serve(g, r, w)
    os._exit(0)


def serve(g, r, w):
    """Answer get and call requests (ask_frame) on r with the program's
    globals g, on w, until r ends. The program may have replaced anything
    (builtins, json): the runner believes none of what this sends."""
    missing = object()
    while True:
        body = read_frame(r)
        if body is None:
            return
        op, name, args, kwargs = marshal.loads(body)
        v = g.get(name, missing)
        if op == "get":
            if v is missing:
                out = {"missing": True}
            elif callable(v):
                out = {"callable": True}
            else:
                try:
                    out = {"value": enc(v)}
                except NotPlain:
                    out = {"missing": True}
        else:
            try:
                value = v(*args, **kwargs)
                try:
                    out = {"value": enc(value)}
                except NotPlain as e:
                    out = {"refused": str(e)}
            except BaseException as e:
                out = {"raise": type(e).__name__, "detail": str(e)[:500]}
        send_msg(w, out)


def share_text():
    """Make fork copy the page-table entries of the interpreter's code.

    Fork copies the entries of a mapping only when the mapping has private
    (anonymous) pages; the read-only code and data of python3 and its
    libraries have none, so every child would fault each page of them in
    again (~13 µs apiece on the VMs measured, a few hundred per submission).
    Writing one byte of each such mapping, with the whole mapping made
    writable for that moment, gives it an anonymous page without splitting
    it, and children inherit the entries instead. The mappings come from
    dl_iterate_phdr (/proc is closed to the sandbox). Best effort.

    Then the 2 MiB-aligned part of each object's read-only run (python3's
    code: 4 MiB of it) moves to anonymous huge pages (huge_text). Returns
    how many mappings were shared and how many bytes moved."""
    try:
        import ctypes
    except ImportError:
        return 0, 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

    class Phdr(ctypes.Structure):
        _fields_ = [("type", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("offset", ctypes.c_uint64),
                    ("vaddr", ctypes.c_uint64), ("paddr", ctypes.c_uint64), ("filesz", ctypes.c_uint64),
                    ("memsz", ctypes.c_uint64), ("align", ctypes.c_uint64)]

    class Info(ctypes.Structure):
        _fields_ = [("addr", ctypes.c_uint64), ("name", ctypes.c_char_p), ("phdr", ctypes.POINTER(Phdr)),
                    ("phnum", ctypes.c_uint16)]

    segments = []

    def each(info, size, data):
        i = info.contents
        for k in range(i.phnum):
            ph = i.phdr[k]
            if ph.type == 1 and not ph.flags & 2:  # PT_LOAD, not writable
                lo = (i.addr + ph.vaddr) & ~4095
                hi = (i.addr + ph.vaddr + ph.memsz + 4095) & ~4095
                prot = (1 if ph.flags & 4 else 0) | (4 if ph.flags & 1 else 0)
                segments.append((lo, hi, prot, i.addr))
        return 0

    callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Info), ctypes.c_size_t, ctypes.c_void_p)(each)
    libc.dl_iterate_phdr(callback, None)
    done = 0
    for lo, hi, prot, _ in segments:
        if lo == 0 or libc.mprotect(lo, hi - lo, prot | 2) != 0:
            continue
        b = ctypes.c_char.from_address(lo)
        b.value = b.value
        libc.mprotect(lo, hi - lo, prot)
        done += 1
    # Runs of adjacent read-only pages of one object.
    runs = []
    for lo, hi, _, base in sorted(segments, key=lambda seg: seg[0]):
        if lo == 0:
            continue
        if runs and runs[-1][2] == base and runs[-1][1] == lo:
            runs[-1][1] = hi
        else:
            runs.append([lo, hi, base])
    moved = 0
    for lo, hi, _ in runs:
        moved += huge_text(ctypes, libc, (lo + HUGE - 1) & ~(HUGE - 1), hi & ~(HUGE - 1))
    return done, moved


HUGE = 2 << 20


def huge_text(ctypes, libc, lo, hi):
    """Put the read-only pages [lo, hi) (code, and the read-only data
    beside it) on anonymous huge pages, in place, and return how many bytes
    moved (0 when any step fails: nothing changed then).

    On the VMs measured a fresh fork pays ~5 µs the first time it touches
    each 4 KiB page it inherited, even one it only reads, but once per 2 MiB
    huge page; the interpreter's code is what every child runs. The copy is
    made readable and executable as a whole (read-only data beside the code
    becomes executable: no new power for a program, which may map
    executable memory of its own), then moved over the original with
    mremap, which replaces it at once."""
    if hi - lo < HUGE:
        return 0
    size = hi - lo
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.mremap.restype = ctypes.c_void_p
    libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    raw = libc.mmap(None, size + HUGE, 3, 0x22, -1, 0)  # read|write, private|anonymous
    if raw is None or raw == ctypes.c_void_p(-1).value:
        return 0
    new = (raw + HUGE - 1) & ~(HUGE - 1)
    if new > raw:
        libc.munmap(raw, new - raw)
    if raw + HUGE > new:
        libc.munmap(new + size, raw + HUGE - new)
    MADV_HUGEPAGE, READ_EXEC, MAYMOVE_FIXED = 14, 5, 3
    if libc.madvise(new, size, MADV_HUGEPAGE) != 0:
        libc.munmap(new, size)
        return 0
    ctypes.memmove(new, lo, size)
    if libc.mprotect(new, size, READ_EXEC) != 0 or libc.mremap(new, size, size, MAYMOVE_FIXED, lo) != lo:
        libc.munmap(new, size)
        return 0
    return size


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


# A HumanEval-like program and what the tests ask of it: warm_up runs the
# program's side of the conversation with them in the zygote.
SAMPLE = '''from typing import List


def below(xs: List[int], t: int) -> List[int]:
    """ Values of xs below t.
    >>> below([1, 5, 2], 3)
    [1, 2]
    """
    return [x for x in xs if x < t]
'''
SAMPLE_ASKS = (ask_frame("get", "below"), ask_frame("get", "List"),
               ask_frame("call", "below", ([1, 5, 2.5], 3)),
               ask_frame("call", "below", ((1, 5),), {"t": 2}),
               ask_frame("call", "below", (None, 3)))


def warm_up():
    """Run, in the zygote, the code every program's process runs after
    confine (load the program, answer the tests), until CPython has
    specialised it: a function that first runs in a fresh fork writes to
    its own code object there, each page of it a copy-on-write fault."""
    for _ in range(40):
        program = b"m" + marshal.dumps(compile(SAMPLE, "<submission>", "exec", dont_inherit=True))
        r, w = os.pipe()
        ar, aw = os.pipe()
        write_all(w, struct.pack(">I", len(program)) + program)
        for ask in SAMPLE_ASKS:
            write_all(w, ask)
        os.close(w)
        g = {"__name__": "__rewardd__", "__builtins__": builtins}
        exec(marshal.loads(memoryview(read_frame(r))[1:]), g)
        write_all(aw, HELLO_OK)
        serve(g, r, aw)
        os.close(r)
        os.close(aw)
        while os.read(ar, 65536):
            pass
        os.close(ar)


def zygote_main():
    if AS_PID1:
        # PID 1 ignores signals it has no handler for; children that die
        # are reaped in kill_all.
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # Import once here what programs commonly import, so that each child
    # finds it loaded instead of paying for the import again.
    preload(ZYGOTE_PRELOAD)
    # What the site module (which -S leaves out) gives programs: exit()
    # and quit(), which end the program as sys.exit does.
    builtins.exit = builtins.quit = sys.exit
    pin()
    warm_up()
    # What warm-up left (cycles through its globals) goes before the
    # freeze: fewer pages for each fork to copy and write.
    gc.collect()
    share_text()
    # Objects that exist now are never freed: keep the collector from
    # touching them in every child (each touched page is a copy-on-write
    # fault).
    gc.freeze()
    zygote_setup()
    peer = Peer(ZYGOTE_PEER_FD)
    peer.send(b"h", json.dumps({"pid1": AS_PID1, "uid": os.getuid()}).encode())
    recvmsg, fd = peer.sock.recvmsg, peer.fd
    space, flags = socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC
    while True:
        # An assert job, the frame nearly every request is, comes in one
        # read: its size is fixed.
        data, anc, _, _ = recvmsg(A_FRAME, space, flags)
        if data[:5] == A_HEAD and len(data) == A_FRAME and len(anc) == 1:
            level, kind, raw = anc[0]
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS and len(raw) == 8:
                r, w = PIPE_FDS.unpack(raw)
                fork_program(fd, data[5:], r, w)
                continue
        op, body, fds = peer.rest(data, anc)
        if op is None:
            return
        if op == b"a" and len(fds) == 2 and len(body) == JOB.size:
            fork_program(fd, body, fds[0], fds[1])
        elif op == b"i" and not fds:
            peer.send(b"r", json.dumps(handle_io(json.loads(body)), separators=(",", ":")).encode())
        else:
            for k in fds:
                os.close(k)
            raise RuntimeError("zygote: unexpected request %r with %d descriptors" % (op, len(fds)))


def runner_main():
    if AS_PID1:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # What the test code commonly imports, once.
    preload(PRELOAD)
    pin()
    # A program compiled here must not write its warnings on this
    # process's stderr (the pool shows it when the sandbox fails).
    import warnings
    warnings.simplefilter("ignore")
    peer = Peer(RUNNER_PEER_FD)
    op, body, _ = peer.recv()
    if op != b"h":
        os.write(2, b"sandbox: the zygote did not start\n")
        sys.exit(1)
    z = json.loads(body)
    send({"ready": True, "pid1": AS_PID1 and z.get("pid1") is True, "uid": os.getuid() or z.get("uid")})
    try:
        while True:
            body = read_frame(IN_FD)
            if body is None:
                return
            req = json.loads(body)
            if req["style"] == "assert":
                send(run_assert(peer, req))
                continue
            peer.send(b"i", body)
            op, out, _ = peer.recv()
            if op != b"r":
                raise ZygoteGone()
            write_all(OUT_FD, struct.pack(">I", len(out)) + out)
    except (ZygoteGone, BrokenPipeError, ConnectionResetError):
        os.write(2, b"sandbox: the zygote is gone\n")
        sys.exit(1)


def preload(names):
    for name in names:
        try:
            __import__(name)
        except ImportError:
            pass


if __name__ == "__main__":
    if ROLE == "runner":
        runner_main()
    elif ROLE == "zygote":
        zygote_main()
    else:
        sys.exit("usage: harness.py runner|zygote")
