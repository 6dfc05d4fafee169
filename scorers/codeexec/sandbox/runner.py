# The runner (see harness.py, which comes before this file): it takes
# requests from Go, runs the assert-style tests (the dataset's code:
# trusted) against the program's process that the zygote forks, and hands
# io requests on to the zygote. It never forks.

def send(obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    write_all(OUT_FD, struct.pack(">I", len(data)) + data)


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


MAX_MSG = 64 << 20


class Gone(Exception):
    """The program's process stopped answering: it exited or was killed."""


class Timeout(Exception):
    pass


class Refused(Exception):
    pass


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


if __name__ == "__main__":
    runner_main()
