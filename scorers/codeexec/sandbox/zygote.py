# The zygote proper (see harness.py; zygote_io.py comes before this
# file): it forks the process of each assert-style program, kills every
# process of a program after it, and keeps itself cheap to fork from.

# The zygote's: the runner.
ZYGOTE_PEER_FD = 3
ZYGOTE_PRELOAD = tuple(name for name in PRELOAD if name not in ("random", "statistics"))


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


if __name__ == "__main__":
    zygote_main()
