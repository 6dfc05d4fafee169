# The zygote's io submissions (see harness.py; zygote.py follows this
# file): one forked child runs every test of a submission, each with its
# own stdin, stdout and stderr, and reports how each ended; the zygote
# watches the child's slot time and CPU time and reports the facts, which
# Go judges (judge.go).

def cpu_clock(pid):
    """The CPU-time clock of process pid (clock_getcpuclockid's: all its
    threads, by the nanosecond; not its children), for time.clock_gettime."""
    return ((~pid) << 3) | 2


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
    time or of its CPU time (the child's own, by its CPU-time clock; the
    first test's counts from the child's fork, as a process's CPU time
    does), the child of the submission's CPU limit (since its fork: a
    process's), the submission's slot time runs out or over(k), asked as
    each test k ends, says the tests printed more than they may. Returns the index of the
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
    clock = cpu_clock(pid)
    test_c0 = [0.0]  # the child's CPU time when its current test began
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
            # The submission's CPU limit, the process's since its fork, on
            # its clock (the kernel's RLIMIT_CPU, charged by the tick, is
            # a backstop a second above: confine).
            try:
                used = time.clock_gettime(clock)
            except OSError:  # it exited: the pidfd says so
                used = 0.0
            if used >= lim["cpu"]:
                killed("wall", job.slot())
                return current, ""
            timeout = min(timeout, max(0.005, lim["cpu"] - used))
            if test:
                left = test.left(test_wall, test_cpu)
                if left:
                    spent = used - test_c0[0] if used else 0.0
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
                    begin(test_c0, clock, cpu_before)
                if k is not None and k >= current:
                    current = k + 1
                    test = Watch() if test_wall else None
                    begin(test_c0, clock, cpu_before)
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


def begin(test_c0, clock, cpu_before):
    """A test begins: test_c0[0] becomes the child's CPU time now, or what
    the child said it was as the test began (cpu_before[0], read from its
    line) when less: the child may have run a while before this process
    read the line. (What the child says is believed only when it costs
    the child: a smaller time counts more of its CPU.)"""
    try:
        test_c0[0] = min(time.clock_gettime(clock), cpu_before[0])
    except OSError:
        test_c0[0] = cpu_before[0]


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
    # A backstop: the zygote ends the process at lim["cpu"] (collect).
    resource.setrlimit(resource.RLIMIT_CPU, (cpu + 1, cpu + 2))
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim["output"], lim["output"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    if uid >= 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (lim["procs"], lim["procs"]))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    os.umask(0o077)
    resource.setrlimit(resource.RLIMIT_AS, (lim["memory"], lim["memory"]))


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
            signal.setitimer(signal.ITIMER_PROF, test_cpu * 1.1 + 0.1)
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
