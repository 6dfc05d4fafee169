# rewardd code_exec fork server. Each slot runs this file twice, each copy
# as PID 1 of namespaces of its own (or as plain processes in unsafe mode),
# started by the Go pool with its role as the one argument:
#
# - "runner" talks to Go (fd 3 in, fd 4 out) and runs the assert-style
#   tests (trusted: the dataset's). It never forks, so the pages it writes
#   are its own after the first write: running tests costs no copy-on-write
#   faults, which on the VMs measured cost 20 µs each.
# - "zygote" (the fork server proper) forks one child per submission, in
#   which the program runs, and kills everything after it. Between forks it
#   does as little as it can: every page it writes after a fork is a fault.
#
# The two talk over a unix socket pair (fd 5 in the runner, fd 3 in the
# zygote): frames of a 4-byte big-endian length, an op byte and a body; an
# assert job passes the two pipe ends of the program's process along
# (SCM_RIGHTS), so the runner talks to the program directly: its requests
# in marshal (ask_frame: it is trusted), the answers in JSON (they are not).
#
# Protocol with Go: frames of a 4-byte big-endian length and a JSON object.
# A request names the program, the test style and its inputs (never the
# expected outputs: those stay in Go), the limits and the uid to run as. The
# reply lists one result per test, in order. An io request goes on to the
# zygote, which forks one child that runs every test of the submission; if
# the child dies in the middle of the suite, the test it was running is
# recorded and the rest run in a new child, within the request's wall time.
# After each request every process of the program is killed and the work
# dir emptied, so the next submission starts clean.
#
# An exec request (every language but python, and compilers) also goes to
# the zygote: it writes the request's files into the work dir, then per
# test forks a child that confines itself as for python and execs the
# launcher (launcher/launcher.c) with the test's argv; the launcher runs it
# and reports its exit status, CPU time and peak memory on descriptor 3.
# Every process of a test is killed before the next test starts. After the
# last test of a compile, the files the request names are sent back.
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
    process's working directory, which the children inherit. It walks by directory
    descriptors, without recursion, so that a tree deeper than any path
    can name or Python can recurse is no obstacle; what still cannot be
    removed raises, which ends this server: the pool starts a fresh one,
    with a fresh tmpfs, rather than show one submission's files to the
    next."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(WORK, flags)
    except FileNotFoundError:
        os.makedirs(WORK, exist_ok=True)
        fd = os.open(WORK, flags)
    names = []  # the path from WORK down to fd
    if AS_PID1 and os.fstat(fd).st_size == TMPFS_EMPTY_DIR:
        # The sandbox's own tmpfs sizes a directory by its entries: this
        # one is empty, nothing to walk.
        if uid >= 0:
            os.fchown(fd, uid, uid)
        os.fchmod(fd, 0o700)
        os.fchdir(fd)
        os.close(fd)
        return
    try:
        for _ in range(1 << 22):
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
            raise RuntimeError("work dir: too many entries to remove")
    finally:
        os.close(fd)
    if uid >= 0:
        os.chown(WORK, uid, uid)
    os.chmod(WORK, 0o700)
    os.chdir(WORK)


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


def handle(req):
    if req["style"] == "exec":
        return handle_exec(req)
    return handle_io(req)


def handle_io(req):
    """An io submission in python: one child runs every test, each with its
    own stdin, stdout and stderr (memfds). A test that ends the child (a
    crash, a limit) is recorded, and the tests after it run in a new
    child, within the submission's wall time. Once the tests together
    have printed more than the submission's total, the child is stopped:
    the test that crossed it is "total_output", the rest are skipped."""
    n = len(req["inputs"])
    lim = req["limits"]
    uid = req["uid"]
    keep = req.get("keep")
    clean_work(uid)
    put_files(req.get("files"), uid)
    inputs = [stdin_memfd(s.encode("utf-8", "surrogateescape")) for s in req["inputs"]]
    outs = [memfd("stdout") for _ in range(n)]
    # Stderr goes back only when the job keeps it: otherwise one memfd,
    # emptied before each test, serves them all (the program's process
    # holds every memfd of the submission, and may fill each).
    errs = [memfd("stderr") for _ in range(n)] if keep else [memfd("stderr")] * n
    results = [None] * n
    meter = Meter(lim["total"])

    def over(k):
        """Whether test k's output takes the tests past the total (then
        its result says so)."""
        if meter.count(outs[k], errs[k] if keep else None) is not None:
            return False
        results[k] = {"status": TOTAL_OUTPUT, "detail": ""}
        return True

    start = time.monotonic()
    deadline = start + lim["wall"]
    first = 0
    stopped = False
    while first < n:
        if deadline - time.monotonic() <= 0:
            break
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            child(req, first, w, inputs, outs, errs)
            os._exit(70)  # never reached
        os.close(w)
        current, ended = collect(pid, r, results, first, deadline, req, over)
        os.close(r)
        kill_all(pid)
        if ended:
            stopped = ended == "output"
            break
        if req.get("stop") and any(x is not None and x["status"] != "ran" for x in results):
            stopped = True
            break
        first = current + 1
    # Every process of the program is gone: the outputs are final. They
    # are counted again, every test's, in order (a program may have
    # written into another test's memfds), and only what fits in the
    # total goes back.
    meter = Meter(lim["total"])
    past = False
    for k in range(n):
        if past:
            results[k] = {"status": "skipped"}
            continue
        if results[k] is None:
            if stopped:
                results[k] = {"status": "skipped"}
            else:
                results[k] = {"status": "timeout", "detail": "the submission's wall time limit (%gs) ran out" % lim["wall"]}
        sizes = meter.count(outs[k], errs[k] if keep else None)
        if sizes is None:
            results[k], past = {"status": TOTAL_OUTPUT, "detail": ""}, True
            continue
        # Only a test that ran to its end is judged by its output (in Go);
        # a job that keeps output has all of it.
        if results[k]["status"] == "ran" or keep:
            results[k]["stdout"] = read_back(outs[k], min(sizes[0], lim["output"] + 1))
        if keep:
            results[k]["stderr"] = read_back(errs[k], min(sizes[1], lim["output"] + 1))
    for fd in set(inputs + outs + errs):
        os.close(fd)
    return {"id": req["id"], "tests": results, "seconds": time.monotonic() - start, "output": meter.used}


class Meter:
    """What the tests of a submission print, against the total they may
    print together: the sizes of the memfds of their output, counted as
    each test ends."""

    def __init__(self, total):
        self.total = total
        self.used = 0

    def count(self, out, err=None):
        """Count what memfds out and err (None: stderr does not count)
        hold; returns their sizes, or None when they take the tests past
        the total (that test's verdict is then TOTAL_OUTPUT)."""
        n_out = os.fstat(out).st_size
        n_err = os.fstat(err).st_size if err is not None else 0
        self.used += n_out + n_err
        if self.used > self.total:
            return None
        return n_out, n_err


TOTAL_OUTPUT = "total_output"


def read_back(fd, n):
    """The first n bytes a memfd holds, in base64."""
    return base64.b64encode(os.pread(fd, n, 0)).decode()


def collect(pid, r, results, first, deadline, req, over):
    """Read the child's status lines until it exits, a test runs out of its
    wall time, the submission's deadline passes or over(k), asked as each
    test k ends, says the tests printed more than they may. Returns the
    index of the test it was running when it stopped, and why it stopped
    early: "timeout" (the submission's wall time ran out), "output" (the
    total), or "" (neither)."""
    pidfd = os.pidfd_open(pid)
    buf = b""
    current = first
    exited = False
    started = [False]
    cpu_before = [0.0]  # the child's CPU when its current test began
    test_wall = req.get("test_wall") or 0
    test_start = time.monotonic()
    watch = [r, pidfd]
    try:
        while True:
            if current >= len(results):
                return current, ""
            now = time.monotonic()
            if now >= deadline:
                results[current] = {"status": "timeout", "detail": "the submission's wall time limit (%gs) ran out" % req["limits"]["wall"]}
                return current, "timeout"
            if test_wall and now - test_start >= test_wall:
                results[current] = {"status": "timeout", "detail": "wall time limit of the test (%gs) reached" % test_wall,
                                    "wall": now - test_start}
                return current, ""
            timeout = deadline - now
            if test_wall:
                timeout = min(timeout, test_start + test_wall - now)
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
                            return k, "output"
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
                k = record(line, results, started, cpu_before)
                if k is not None and k >= current:
                    current = k + 1
                    test_start = time.monotonic()
                    if over(k):
                        return k, "output"
            if len(buf) > 1 << 20:
                buf = b""
    finally:
        os.close(pidfd)
    stopped = req.get("stop") and current > first and results[current - 1]["status"] != "ran"
    if exited and current < len(results) and results[current] is None and not stopped:
        _, status, usage = os.wait4(pid, 0)
        d = death(status, usage, int(req["limits"]["cpu"] + 0.999))
        d["cpu"] = max(0.0, usage.ru_utime + usage.ru_stime - cpu_before[0])
        d["wall"] = time.monotonic() - test_start
        d["rss"] = usage.ru_maxrss
        results[current] = d
        if over(current):
            return current, "output"
    return current, ""


# What a status line may carry besides k and status: numbers about the test.
USAGE = ("cpu", "wall", "rss", "exit")


def record(line, results, started, cpu_before):
    """Take one status line {"k": index, "status": …}; ignore anything else
    (a program may write junk into the pipe: it only hurts itself).
    started[0] is set by the child's "start" line, written just before it
    runs the program's code: "harness" (a problem with the tests, reported
    as an error rather than a failed program) and "setup" (the sandbox could
    not confine the child) are believed only before it.
    cpu_before[0] becomes the child's CPU time so far (its "c")."""
    if not line:
        return None
    try:
        msg = json.loads(line)
        k = msg["k"]
        status = msg["status"]
    except Exception:
        return None
    if status == "start":
        started[0] = True
        return None
    if status in ("harness", "setup") and started[0]:
        return None
    if not isinstance(k, int) or not 0 <= k < len(results) or results[k] is not None:
        return None
    if status not in ("ran", "exit", "error", "memory", "output", "passed", "failed", "harness", "setup", "timeout"):
        return None
    res = {"status": status, "detail": str(msg.get("detail", ""))[:2000]}
    for key in USAGE:
        v = msg.get(key)
        if type(v) in (int, float) and v >= 0:
            res[key] = v
    c = msg.get("c")
    if type(c) in (int, float) and c >= 0:
        cpu_before[0] = c
    results[k] = res
    return k


def death(status, usage, cpu_limit):
    """What a child's end means. SIGKILL is the CPU hard limit only when the
    child did use its CPU time; a program may also kill itself. SIGPROF is
    the CPU timer of one test (python)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        used = usage.ru_utime + usage.ru_stime if usage else cpu_limit
        if sig == signal.SIGXCPU or sig == signal.SIGKILL and used >= cpu_limit - 0.05:
            return {"status": "timeout", "detail": "CPU time limit reached (killed by %s)" % signal.Signals(sig).name, "signal": sig}
        if sig == signal.SIGPROF:
            return {"status": "timeout", "detail": "CPU time limit of the test reached", "signal": sig}
        if sig == signal.SIGXFSZ:
            return {"status": "output", "detail": "output limit reached", "signal": sig}
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return {"status": "crashed", "detail": "killed by signal %s" % name, "signal": sig}
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return {"status": "crashed", "detail": "process exited with status %d before the test finished" % code}


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


def report(w, k, status, detail="", **usage):
    line = json.dumps(dict(usage, k=k, status=status, detail=detail)) + "\n"
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
            report(w, k, "error", describe(e))
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
        status, detail, exit_code = "ran", "", 0
        me, kids = getrusage(SELF), getrusage(CHILDREN)
        cpu0 = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        t0 = time.monotonic()
        if test_cpu:
            # The test's CPU timer: SIGPROF's default action ends the
            # process, which the zygote reports as this test's time limit.
            _signal.signal(_signal.SIGPROF, _signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_PROF, test_cpu)
        try:
            exec(code, {"__name__": "__main__", "__builtins__": builtins})
        except SystemExit as e:
            if e.code not in (None, 0):
                status, detail = "exit", "exit status %r" % (e.code,)
                exit_code = e.code if type(e.code) is int else 1
        except MemoryError as e:
            status, detail = "memory", "MemoryError (memory limit reached)"
        except OSError as e:
            if e.errno == errno.EFBIG:
                status, detail = "output", "output limit reached"
            else:
                status, detail = "error", describe(e)
        except BaseException as e:
            status, detail = "error", describe(e)
        if test_cpu:
            signal.setitimer(signal.ITIMER_PROF, 0)
        try:
            sys.stdout.flush()
        except OSError as e:
            if e.errno == errno.EFBIG:
                status, detail = "output", "output limit reached"
        except BaseException:
            pass
        try:
            sys.stderr.flush()
        except BaseException:
            pass
        wall = time.monotonic() - t0
        me, kids = getrusage(SELF), getrusage(CHILDREN)
        cpu1 = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        if test_cpu and cpu1 - cpu0 > test_cpu and status == "ran":
            status, detail = "timeout", "used %.2f s of CPU, the test's limit is %g s" % (cpu1 - cpu0, test_cpu)
        builtins.__dict__.clear()
        builtins.__dict__.update(saved)
        usage = {"cpu": cpu1 - cpu0, "wall": wall, "rss": me.ru_maxrss, "c": cpu1}
        if status in ("ran", "exit"):
            usage["exit"] = exit_code
        report(w, k, status, detail, **usage)
        if req.get("stop") and status != "ran":
            return


# An exec test's launcher record (launcher.c's struct record), and its kinds.
RECORD = struct.Struct("<iiqqq")
EXITED, EXEC_FAILED, SETUP_FAILED = 1, 2, 3
# The errors of an exec that mean the program does not fit in its memory.
NO_ROOM = (errno.ENOMEM, errno.E2BIG)


def handle_exec(req):
    """An exec job: a command per test (a compiler, a compiled program, a
    checker), each in a process of its own, started by the launcher (see
    launcher.c) under the test's limits and ended with everything it
    started before the next test. The job's files are written into the
    work dir first, each test's just before it."""
    uid = req["uid"]
    clean_work(uid)
    put_files(req.get("files"), uid)
    start = time.monotonic()
    deadline = start + req["limits"]["wall"]
    results = []
    meter = Meter(req["limits"]["total"])
    stop = False
    for t in req["tests"]:
        if stop:
            results.append({"status": "skipped"})
            continue
        if time.monotonic() >= deadline:
            results.append({"status": "timeout", "detail": "the submission's wall time limit (%gs) ran out" % req["limits"]["wall"]})
            continue
        put_files(t.get("files"), uid)
        res = exec_test(req, t, deadline, meter)
        results.append(res)
        stop = req.get("stop") and res["status"] != "ran" or res["status"] == TOTAL_OUTPUT
    reply = {"id": req["id"], "tests": results, "seconds": time.monotonic() - start, "output": meter.used}
    if req.get("collect") and results and results[-1]["status"] == "ran":
        reply["files"] = collect_files(req["collect"])
    return reply


# Bounds of what a job writes into the work dir and collects from it.
MAX_FILES, MAX_NAME = 64, 255


def put_files(files, uid):
    """Write files ({name, data (base64), mode}) into the work dir, owned
    by uid. A name is a path below the work dir; its directories are made."""
    for f in (files or [])[:MAX_FILES]:
        name = f["name"]
        parts = name.split("/")
        if not name or len(name) > MAX_NAME or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise ValueError("bad file name %r" % name)
        path = WORK
        for p in parts[:-1]:
            path = os.path.join(path, p)
            if not os.path.isdir(path):
                os.mkdir(path, 0o700)
                if uid >= 0:
                    os.chown(path, uid, uid)
        path = os.path.join(path, parts[-1])
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, f.get("mode", 0o600))
        try:
            write_all(fd, base64.b64decode(f.get("data") or ""))
            if uid >= 0:
                os.fchown(fd, uid, uid)
            os.fchmod(fd, f.get("mode", 0o600))
        finally:
            os.close(fd)


def collect_files(patterns):
    """The regular files at the top of the work dir that match patterns,
    as {name, data (base64), mode}."""
    import fnmatch

    out = []
    with os.scandir(WORK) as entries:
        for e in entries:
            if not e.is_file(follow_symlinks=False) or not any(fnmatch.fnmatchcase(e.name, p) for p in patterns):
                continue
            fd = os.open(e.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                st = os.fstat(fd)
                data = os.read(fd, st.st_size + 1)
            finally:
                os.close(fd)
            out.append({"name": e.name, "data": base64.b64encode(data).decode(), "mode": st.st_mode & 0o700})
            if len(out) >= MAX_FILES:
                break
    return out


def exec_test(req, t, deadline, meter):
    """Run one test of an exec job: fork, confine, exec the launcher with
    the test's argv; wait for the launcher's record, the test's wall time
    or the job's deadline; then kill every process of the test, and count
    its output on meter."""
    fin = stdin_memfd(base64.b64decode(t.get("stdin") or ""))
    out, err = memfd("stdout"), memfd("stderr")
    rep_r, rep_w = os.pipe()
    start = time.monotonic()
    wall = min(t["wall"], deadline - start)
    pid = os.fork()
    if pid == 0:
        try:
            exec_child(req, t, fin, out, err, rep_w)
        except BaseException as e:
            # Before exec: descriptor 3 is the record pipe, or rep_w still is.
            msg = RECORD.pack(SETUP_FAILED, 0, 0, 0, 0) + describe(e).encode("utf-8", "replace")
            for fd in (3, rep_w):
                try:
                    write_all(fd, msg)
                    break
                except OSError:
                    pass
        finally:
            os._exit(71)
    os.close(rep_w)
    os.close(fin)
    data, timed_out = read_records(rep_r, start + wall)
    os.close(rep_r)
    status = usage = None
    if not timed_out:
        _, status, usage = os.wait4(pid, 0)
    elapsed = time.monotonic() - start
    kill_all(pid)
    res = judge_exec(req, t, data, status, timed_out, wall, out, err)
    keep_err = req.get("keep") or req.get("collect")
    sizes = meter.count(out, err if keep_err else None)
    if sizes is None:
        res = {"status": TOTAL_OUTPUT, "detail": ""}
    res.setdefault("wall", elapsed)
    if sizes is not None and (res["status"] == "ran" or req.get("keep")):
        res["stdout"] = read_back(out, min(sizes[0], t["output"] + 1))
    if sizes is not None and keep_err:
        res["stderr"] = read_back(err, min(sizes[1], t["output"] + 1))
    os.close(out)
    os.close(err)
    return res


def read_records(r, until):
    """Read the launcher's records until it exits (the pipe's end: nothing
    else holds it) or the time until; returns them and whether the time
    ran out first."""
    data = b""
    while len(data) <= 4 * RECORD.size + 1024:
        left = until - time.monotonic()
        if left <= 0:
            return data, True
        ready, _, _ = select.select([r], [], [], left)
        if not ready:
            return data, True
        chunk = os.read(r, 256)
        if not chunk:
            return data, False
        data += chunk
    return data, False


def judge_exec(req, t, data, status, timed_out, wall, out, err):
    """What happened to an exec test, from the launcher's records."""
    cpu_limit = t["cpu"]
    # However it ended (a runtime may ignore SIGXFSZ, then loop on failed
    # writes until a time limit ends it, the wall one first on a loaded
    # machine), a program that filled its output printed too much.
    printed_too_much = full(out, t["output"]) or full(err, t["output"])
    if timed_out:
        if printed_too_much:
            return {"status": "output", "detail": "output limit reached", "wall": wall}
        return {"status": "timeout", "detail": "wall time limit (%gs) reached" % wall, "wall": wall}
    if len(data) >= RECORD.size and RECORD.unpack_from(data)[0] == SETUP_FAILED:
        return {"status": "setup", "detail": "sandbox setup failed: " + data[RECORD.size:].decode("utf-8", "replace")}
    records = [RECORD.unpack_from(data, i) for i in range(0, len(data) - RECORD.size + 1, RECORD.size)]
    failed = [r for r in records if r[0] == EXEC_FAILED]
    exited = [r for r in records if r[0] == EXITED]
    if failed:
        e = failed[0][1]
        if e in NO_ROOM:
            return {"status": "memory", "detail": "the program does not fit in the memory limit (exec: %s)" % os.strerror(e)}
        if e == errno.EAGAIN:
            return {"status": "crashed", "detail": "could not start: the process limit was reached"}
        return {"status": "noexec", "detail": "could not start %s: %s" % (t["argv"][0], os.strerror(e))}
    if not exited:
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 71:
            return {"status": "setup", "detail": "sandbox setup failed"}
        return {"status": "crashed", "detail": "the program's launcher was killed (%s)" % describe_status(status)}
    _, st, cpu_us, rss, _ = exited[0]
    res = {"cpu": cpu_us / 1e6, "rss": rss}
    cpu = cpu_us / 1e6
    if os.WIFEXITED(st):
        res["exit"] = os.WEXITSTATUS(st)
    elif os.WIFSIGNALED(st):
        res["signal"] = os.WTERMSIG(st)
    if printed_too_much:
        res.update(status="output", detail="output limit reached")
    elif cpu > cpu_limit or os.WIFSIGNALED(st) and (os.WTERMSIG(st) == signal.SIGXCPU or cpu >= int(cpu_limit + 0.999) - 0.05) \
            or res.get("exit") != 0 and marked(err, req.get("time_markers")):
        res.update(status="timeout", detail="used %.2f s of CPU, the limit is %g s" % (cpu, cpu_limit))
    elif os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGXFSZ:
        res.update(status="output", detail="output limit reached")
    elif res.get("exit") == 0:
        res.update(status="ran", detail="")
    elif marked(err, req.get("markers")):
        res.update(status="memory", detail="out of memory (%s)" % describe_status(st))
    elif os.WIFSIGNALED(st):
        res.update(status="crashed", detail=describe_status(st))
    else:
        res.update(status="exit", detail=describe_status(st))
    return res


def describe_status(st):
    if os.WIFSIGNALED(st):
        try:
            return "killed by signal %s" % signal.Signals(os.WTERMSIG(st)).name
        except ValueError:
            return "killed by signal %d" % os.WTERMSIG(st)
    return "exit status %d" % os.WEXITSTATUS(st)


def full(fd, limit):
    return os.fstat(fd).st_size >= limit


def marked(fd, markers):
    """Whether what fd holds (its last 64 KiB) contains one of markers."""
    if not markers:
        return False
    size = os.fstat(fd).st_size
    tail = os.pread(fd, 65536, max(0, size - 65536))
    return any(m.encode() in tail for m in markers)


def exec_child(req, t, fin, out, err, rep):
    """In the forked child of an exec test: stdin, stdout, stderr and the
    launcher's record pipe on 0-3, nothing else open; the test's limits;
    the job's uid; then exec the launcher, which runs the test's argv."""
    os.dup2(fin, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.dup2(rep, 3)
    os.closerange(4, 1 << 20)
    if not AS_PID1:
        os.setpgid(0, 0)
    os.chdir(WORK)
    # A program gets the default action of the signals the zygote
    # ignores: past the output limit it is killed (SIGXFSZ), as it is when
    # it writes to a closed pipe.
    for sig in (_signal.SIGXFSZ, _signal.SIGPIPE, _signal.SIGALRM):
        _signal.signal(sig, _signal.SIG_DFL)
    setrlimit = resource.setrlimit
    cpu = max(1, int(t["cpu"] + 0.999))
    setrlimit(resource.RLIMIT_CORE, (0, 0))
    setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    setrlimit(resource.RLIMIT_FSIZE, (t["output"], t["output"]))
    setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    setrlimit(resource.RLIMIT_STACK, (t["stack"], t["stack"]))
    uid = req["uid"]
    if uid >= 0:
        # The launcher counts too.
        setrlimit(resource.RLIMIT_NPROC, (t["procs"] + 1, t["procs"] + 1))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    os.umask(0o077)
    if t["memory"] > 0:
        setrlimit(resource.RLIMIT_AS, (t["memory"], t["memory"]))
    launcher = req["launcher"]
    os.execve(launcher, [launcher] + t["argv"], dict(kv.split("=", 1) for kv in req["env"]))


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

    def __init__(self, r, w, peer, deadline):
        self.r, self.w, self.peer, self.deadline = r, w, peer, deadline
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
        judge's timer (SIGALRM at the deadline) interrupts it with Timeout,
        and a read after the deadline (test code may catch Timeout) raises
        it at once."""
        if time.monotonic() >= self.deadline:
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
    if len(PROMPT_CODE) >= 256:
        PROMPT_CODE.clear()
    PROMPT_CODE[src] = compiled
    return compiled


# Compiled test code, by source: every rollout of a prompt has the same.
TEST_CODE = {}


def compile_tests(src):
    code = TEST_CODE.get(src)
    if code is None:
        code = compile(src, "<tests>", "exec")
        if len(TEST_CODE) >= 256:
            TEST_CODE.clear()
        TEST_CODE[src] = code
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
    start = time.monotonic()
    deadline = start + lim["wall"]

    def reply(status, detail=""):
        return {"id": req["id"], "tests": [{"status": status, "detail": detail}],
                "seconds": time.monotonic() - start}

    try:
        tests = compile_tests(req["test"])
    except BaseException as e:
        return reply("harness", "test code does not compile: " + describe(e))
    src = req["code"]
    if len(src) <= COMPILE_IN_RUNNER:
        try:
            code = compile(src, "<submission>", "exec", dont_inherit=True)
        except BaseException as e:
            return reply("failed", "program does not compile: " + describe(e))
        program = b"m" + marshal.dumps(code)
    else:
        program = b"s" + src.encode("utf-8", "surrogatepass")
    program = struct.pack(">I", len(program)) + program
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    try:
        peer.send(b"a", JOB.pack(lim["cpu"], lim["memory"], lim["output"], lim["procs"], uid), (to_r, from_w))
    finally:
        os.close(to_r)
        os.close(from_w)
    remote = Remote(from_r, to_w, peer, deadline)
    try:
        status, detail = judge(remote, tests, req["entry"], deadline, program, compile_prompt(req.get("prompt")))
        if status == "gone":
            status, detail = gone(remote, detail)
    finally:
        os.close(from_r)
        os.close(to_w)
        # Whatever happened, every process of the program goes now.
        peer.send(b"d")
        while True:
            op, _, fds = peer.recv()
            for fd in fds:
                os.close(fd)
            if op is None:
                raise ZygoteGone()
            if op == b"c":
                break
    return reply(status, detail)


def gone(remote, when):
    """The verdict when the program's process stopped answering: it closed
    the pipe, and has exited or does soon, or it is alive without it."""
    d = remote.exit_status()
    if d.get("alive"):
        return "failed", "the program closed its connection to the tests %s" % when
    if d.get("signaled"):
        if d["status"] == "crashed":
            return "crashed", "the program was %s %s" % (d["detail"], when)
        return d["status"], d["detail"]
    return "failed", "the program exited %s" % when


def judge(remote, tests, entry, deadline, program, prompt):
    def alarm(signum, frame):
        raise Timeout()

    # The test code runs here: a loop in it, or a program that never reads
    # what it is sent, must not outlive the wall time.
    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, max(0.001, deadline - time.monotonic()))
    try:
        try:
            remote.send_raw(program)
            hello = remote.recv()
        except Gone:
            return "gone", "before the tests ran"
        except Timeout:
            return "timeout", ""
        if hello.get("hello") != "ok":
            return "failed", str(hello.get("detail", "the program did not start"))[:1000]
        g = TestGlobals(remote, Prompt(prompt, entry) if prompt is not None else None)
        try:
            exec(tests, g)
        except (Gone, Timeout, Refused, Exited, ZygoteGone, PromptBroken):
            raise
        except BaseException as e:
            return "harness", "test code raised " + describe(e)
        check = dict.get(g, "check")
        if not callable(check):
            return "harness", "test code defines no check(candidate)"
        msg = remote.ask(ask_frame("get", entry))
        if msg.get("callable") is not True:
            return "failed", "program defines no function %r" % entry
        check(RemoteFunction(remote, entry))
    except ZygoteGone:
        raise
    except Gone:
        return "gone", "during the tests"
    except Timeout:
        return "timeout", ""
    except PromptBroken as e:
        return "harness", str(e)
    except Refused as e:
        return "failed", "refused: %s" % e
    except Exited as e:
        return "failed", str(e)
    except AssertionError as e:
        return "failed", "AssertionError" + (": %s" % e if str(e) else "")
    except MemoryError:
        return "memory", "MemoryError (memory limit reached)"
    except BaseException as e:
        return "failed", describe(e)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    return "passed", ""


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
    if program is not None and program[:1] == b"m":
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
                status = json.dumps(exit_status(pid, int(cpu + 0.999))).encode()
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
        kill_all(pid)
    write_all(peer_fd, KILLED)

ASK_STATUS, DONE, KILLED = b"\x00\x00\x00\x01s", b"\x00\x00\x00\x01d", b"\x00\x00\x00\x01c"


def exit_status(pid, cpu_limit):
    """How the program's process pid ended, once it has (half a second at
    most): {"alive": true} if it has not."""
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], 0.5)
    finally:
        os.close(pidfd)
    if not ready:
        return {"alive": True}
    _, st, usage = os.wait4(pid, 0)
    d = {"signaled": os.WIFSIGNALED(st)}
    if d["signaled"]:
        d.update(death(st, usage, cpu_limit))
    return d


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
    try:
        exec(code, g)
    except BaseException as e:
        send_msg(w, {"hello": "failed", "detail": "program raised %s before the tests ran" % describe(e)})
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
            peer.send(b"r", json.dumps(handle(json.loads(body)), separators=(",", ":")).encode())
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
