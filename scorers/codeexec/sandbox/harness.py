# rewardd code_exec fork server. Runs as PID 1 of the sandbox's namespaces
# (or as a plain process in unsafe mode), started by the Go pool.
#
# Protocol with Go (fd 3 in, fd 4 out): frames of a 4-byte big-endian length
# and a JSON object. A request names the program, the test style and its
# inputs (never the expected outputs: those stay in Go), the limits and the
# uid to run as. The reply lists one result per test, in order.
#
# Per request the server forks one child that runs every test of the
# submission; if the child dies in the middle of the suite, the test it was
# running is recorded and the rest run in a new child, within the request's
# wall time. After the request every process of the sandbox is killed and
# the work dir emptied, so the next submission starts clean.
#
# This file is the trusted side: it never runs the submission's code in the
# server process, only in children that dropped to an unprivileged uid.

import base64
import builtins
import errno
import gc
import json
import os
import resource
import select
import signal
import struct
import sys
import time

IN_FD, OUT_FD = 3, 4
WORK = os.environ.get("REWARDD_WORK", "/tmp/work")
AS_PID1 = os.getpid() == 1

# Exact types a candidate may return in assert style: anything else (a
# subclass of int with an __eq__ that is always true, a mock) fails the test.
PLAIN = (int, float, complex, str, bytes, bool, type(None), list, tuple, dict, set, frozenset, range)

# Modules imported by the server up front (HumanEval prompts and tests and
# typical stdin/stdout solutions use these).
PRELOAD = ("typing", "math", "re", "collections", "itertools", "functools", "heapq", "bisect",
           "string", "random", "hashlib", "fractions", "decimal", "statistics", "copy", "io",
           "operator", "array", "datetime")


def read_exact(fd, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def send(obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    write_all(OUT_FD, struct.pack(">I", len(data)) + data)


def kill_all(pgid):
    """Kill every sandboxed process: as PID 1 of the namespace, kill(-1)
    reaches all of them and never this server; in unsafe mode only the
    child's process group."""
    try:
        if AS_PID1:
            os.kill(-1, signal.SIGKILL)
        else:
            os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def clean_work(uid):
    # The work dir is on a private tmpfs; remove whatever the last
    # submission left, then hand a fresh dir to the next uid.
    def rm(path):
        try:
            entries = os.listdir(path)
        except OSError:
            entries = []
        for name in entries:
            p = os.path.join(path, name)
            try:
                if os.path.isdir(p) and not os.path.islink(p):
                    os.chmod(p, 0o700)
                    rm(p)
                    os.rmdir(p)
                else:
                    os.unlink(p)
            except OSError:
                pass

    os.makedirs(WORK, exist_ok=True)
    rm(WORK)
    if uid >= 0:
        os.chown(WORK, uid, uid)
    os.chmod(WORK, 0o700)


def memfd(name, data=b""):
    fd = os.memfd_create(name, 0)
    if data:
        write_all(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def handle(req):
    n = len(req["inputs"]) if req["style"] == "io" else 1
    lim = req["limits"]
    uid = req["uid"]
    clean_work(uid)
    inputs = [memfd("stdin", s.encode("utf-8", "surrogateescape")) for s in req.get("inputs", [])] or [memfd("stdin")]
    outs = [memfd("stdout") for _ in range(n)]
    err = memfd("stderr")
    results = [None] * n
    start = time.monotonic()
    deadline = start + lim["wall"]
    first = 0
    forks = 0
    while first < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            child(req, first, w, inputs, outs, err)
            os._exit(70)  # never reached
        os.close(w)
        forks += 1
        current, timed_out = collect(pid, r, results, first, deadline)
        os.close(r)
        kill_all(pid)
        if timed_out:
            break
        first = current + 1
    for k in range(n):
        if results[k] is None:
            results[k] = {"status": "timeout", "detail": "wall time limit (%gs) reached" % lim["wall"]}
    for k in range(n):
        if results[k]["status"] in ("ran", "passed", "failed", "error", "exit", "output"):
            os.lseek(outs[k], 0, os.SEEK_SET)
            data = os.read(outs[k], lim["output"] + 1)
            results[k]["stdout"] = base64.b64encode(data).decode()
    os.lseek(err, 0, os.SEEK_SET)
    stderr = os.read(err, 4096)
    for fd in inputs + outs + [err]:
        os.close(fd)
    return {"id": req["id"], "tests": results, "forks": forks,
            "stderr": stderr.decode("utf-8", "replace"), "seconds": time.monotonic() - start}


def collect(pid, r, results, first, deadline):
    """Read the child's status lines until it exits or the deadline passes.
    Returns the index of the test it was running when it stopped, and
    whether the wall time ran out."""
    pidfd = os.pidfd_open(pid)
    buf = b""
    current = first
    exited = False
    try:
        while True:
            if current >= len(results):
                return current, False
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                results[current] = {"status": "timeout", "detail": "wall time limit reached"}
                return current, True
            ready, _, _ = select.select([r, pidfd], [], [], timeout)
            if r in ready:
                chunk = os.read(r, 65536)
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    k = record(line, results)
                    if k is not None and k >= current:
                        current = k + 1
                if chunk or len(buf) > 1 << 20:
                    if len(buf) > 1 << 20:
                        buf = b""
                    continue
            if pidfd in ready or (r in ready and not chunk):
                exited = True
                # Drain what the child wrote before it exited.
                os.set_blocking(r, False)
                try:
                    while True:
                        chunk = os.read(r, 65536)
                        if not chunk:
                            break
                        buf += chunk
                except BlockingIOError:
                    pass
                for line in buf.split(b"\n"):
                    k = record(line, results)
                    if k is not None and k >= current:
                        current = k + 1
                break
    finally:
        os.close(pidfd)
    if exited and current < len(results) and results[current] is None:
        _, status = os.waitpid(pid, 0)
        results[current] = death(status)
    return current, False


def record(line, results):
    """Take one status line {"k": index, "status": …}; ignore anything else
    (a program may write junk into the pipe: it only hurts itself)."""
    if not line:
        return None
    try:
        msg = json.loads(line)
        k = msg["k"]
        status = msg["status"]
    except Exception:
        return None
    if not isinstance(k, int) or not 0 <= k < len(results) or results[k] is not None:
        return None
    if status not in ("ran", "exit", "error", "memory", "output", "passed", "failed", "harness"):
        return None
    results[k] = {"status": status, "detail": str(msg.get("detail", ""))[:2000]}
    return k


def death(status):
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU or sig == signal.SIGKILL:
            return {"status": "timeout", "detail": "CPU time limit reached (killed by %s)" % signal.Signals(sig).name}
        if sig == signal.SIGXFSZ:
            return {"status": "output", "detail": "output limit reached"}
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return {"status": "crashed", "detail": "killed by signal %s" % name}
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return {"status": "crashed", "detail": "process exited with status %d before the test finished" % code}


def child(req, first, w, inputs, outs, err):
    """Runs in the forked child: drop privileges, set limits, run the tests
    from index first on, report each on w. Never returns."""
    try:
        keep = set(inputs + outs + [err, w])
        for fd in (IN_FD, OUT_FD):
            os.close(fd)
        lo = 5
        for fd in sorted(keep):
            if fd >= lo:
                os.closerange(lo, fd)
                lo = fd + 1
        os.closerange(lo, 1 << 20)
        if not AS_PID1:
            os.setpgid(0, 0)
        os.chdir(WORK)
        lim = req["limits"]
        null = os.open("/dev/null", os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(err, 1)
        os.dup2(err, 2)
        os.close(null)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        cpu = max(1, int(lim["cpu"] + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (lim["output"], lim["output"]))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        uid = req["uid"]
        if uid >= 0:
            resource.setrlimit(resource.RLIMIT_NPROC, (lim["procs"], lim["procs"]))
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        os.umask(0o077)
        resource.setrlimit(resource.RLIMIT_AS, (lim["memory"], lim["memory"]))
    except BaseException as e:
        report(w, first, "harness", "sandbox setup failed: %r" % (e,))
        os._exit(71)
    if req["style"] == "io":
        run_io(req, first, w, inputs, outs)
    else:
        run_assert(req, w, outs[0])
    os._exit(0)


def report(w, k, status, detail=""):
    line = json.dumps({"k": k, "status": status, "detail": detail}) + "\n"
    try:
        write_all(w, line.encode())
    except OSError:
        pass


def describe(e):
    text = "%s: %s" % (type(e).__name__, e)
    return text[:500]


def run_io(req, first, w, inputs, outs):
    import io

    try:
        code = compile(req["code"], "<submission>", "exec")
    except BaseException as e:
        for k in range(first, len(outs)):
            report(w, k, "error", describe(e))
        return
    saved = dict(builtins.__dict__)
    for k in range(first, len(outs)):
        os.dup2(inputs[k], 0)
        os.lseek(0, 0, os.SEEK_SET)
        os.dup2(outs[k], 1)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="surrogateescape")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="surrogateescape")
        status, detail = "ran", ""
        try:
            exec(code, {"__name__": "__main__", "__builtins__": builtins})
        except SystemExit as e:
            if e.code not in (None, 0):
                status, detail = "exit", "exit status %r" % (e.code,)
        except MemoryError as e:
            status, detail = "memory", "MemoryError (memory limit reached)"
        except BaseException as e:
            status, detail = "error", describe(e)
        try:
            sys.stdout.flush()
        except OSError as e:
            if e.errno == errno.EFBIG:
                status, detail = "output", "output limit reached"
        except BaseException:
            pass
        builtins.__dict__.clear()
        builtins.__dict__.update(saved)
        report(w, k, status, detail)


def plain(x, seen, depth=0):
    if type(x) not in PLAIN:
        return "returned a %s, not a built-in value" % type(x).__name__
    if depth > 50:
        return "returned a value nested too deeply"
    if type(x) in (list, tuple, set, frozenset):
        if id(x) in seen:
            return None
        seen.add(id(x))
        for v in x:
            why = plain(v, seen, depth + 1)
            if why:
                return why
    elif type(x) is dict:
        if id(x) in seen:
            return None
        seen.add(id(x))
        for k, v in x.items():
            why = plain(k, seen, depth + 1) or plain(v, seen, depth + 1)
            if why:
                return why
    return None


class Refused(Exception):
    pass


def run_assert(req, w, out):
    """HumanEval style: run the program, then the test code in the same
    globals, then check(entry_point). The candidate is wrapped so that what
    it returns must be plain built-in data, and builtins and the modules the
    tests use are restored after every call: a program cannot pass by
    returning an object equal to everything or by patching what the test
    compares with."""
    os.dup2(out, 1)
    saved = dict(builtins.__dict__)
    restore_dict = dict.clear, dict.update
    _type, _len, _set, _id = type, len, set, id
    try:
        code = compile(req["code"], "<submission>", "exec")
    except BaseException as e:
        report(w, 0, "failed", "program does not compile: " + describe(e))
        return
    try:
        tests = compile(req["test"], "<tests>", "exec")
    except BaseException as e:
        report(w, 0, "harness", "test code does not compile: " + describe(e))
        return
    g = {"__name__": "__rewardd__", "__builtins__": builtins}
    try:
        exec(code, g)
    except BaseException as e:
        report(w, 0, "failed", "program raised %s before the tests ran" % describe(e))
        return
    restore_dict[0](builtins.__dict__)
    restore_dict[1](builtins.__dict__, saved)
    try:
        exec(tests, g)
    except BaseException as e:
        report(w, 0, "harness", "test code raised " + describe(e))
        return
    check = g.get("check")
    if not callable(check):
        report(w, 0, "harness", "test code defines no check(candidate)")
        return
    entry = req["entry"]
    candidate = g.get(entry)
    if not callable(candidate):
        report(w, 0, "failed", "program defines no function %r" % entry)
        return
    modules = [(m, dict(m.__dict__)) for m in g.values() if _type(m) is _type(sys)]

    def restore():
        restore_dict[0](builtins.__dict__)
        restore_dict[1](builtins.__dict__, saved)
        for m, d in modules:
            try:
                restore_dict[0](m.__dict__)
                restore_dict[1](m.__dict__, d)
            except TypeError:
                pass

    def guarded(*args, **kwargs):
        try:
            value = candidate(*args, **kwargs)
        finally:
            restore()
        why = plain(value, _set())
        if why:
            raise Refused(why)
        return value

    try:
        check(guarded)
    except Refused as e:
        restore()
        report(w, 0, "failed", "refused: candidate %s" % e)
        return
    except AssertionError as e:
        restore()
        report(w, 0, "failed", "AssertionError" + (": %s" % e if str(e) else ""))
        return
    except MemoryError:
        report(w, 0, "memory", "MemoryError (memory limit reached)")
        return
    except BaseException as e:
        restore()
        report(w, 0, "failed", describe(e))
        return
    report(w, 0, "passed")


def main():
    if AS_PID1:
        # PID 1 ignores signals it has no handler for; children that die
        # are reaped in kill_all.
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # Import once here what test programs commonly import, so that each
    # child finds it loaded instead of paying for the import again.
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    # Objects that exist now are never freed: keep the collector from
    # touching them in every child (each touched page is a copy-on-write
    # fault, ~13 µs here).
    gc.freeze()
    send({"ready": True, "pid1": AS_PID1, "uid": os.getuid()})
    while True:
        head = read_exact(IN_FD, 4)
        if head is None:
            return
        (size,) = struct.unpack(">I", head)
        body = read_exact(IN_FD, size)
        if body is None:
            return
        send(handle(json.loads(body)))


if __name__ == "__main__":
    main()
