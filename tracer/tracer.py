# ndb tracer worker. Embedded in the ndb binary (tracer/tracer.py) and run as
#   python -s -c <isolate.py + this file> SCRATCH_BASE SECCOMP_HEX
# (environment set by ndb; the kernel isolation helpers, _enter_sandbox,
# _isolate_program, _install_seccomp, ..., come from isolate.py).
# One worker traces many programs: per program it forks a child from this warm
# interpreter; the child applies the limits, runs the program under
# sys.settrace and streams records back; this parent enforces the wall clock
# and survives whatever the child does. Protocol and decisions: docs/tracer.md.
#
# Worker -> Go (stdout): frames of 1 type byte + 4-byte big-endian length + payload.
#   H: hello JSON; D: a chunk of the child's record stream; E: end-of-run JSON.
# Go -> worker (stdin): one JSON request per line.
# Child -> worker: chunks of a 4-byte little-endian length + marshal (version 2)
# of a list of records (see flush, local_trace, global_trace, finish):
#   call (0, lineno, frame, depth, changes, keys, co_name, gen, untraced[, first])
#     untraced: 1 when a program frame is below (depth > 0) but the direct
#     caller (f_back) is not one (exec/eval/doctest code, a sibling module);
#     first: co_firstlineno, sent when lineno is not it (a call record for a
#     frame found running: a stack after an unrecorded stretch, a resumed
#     generator the tracer had not seen)
#   line (1, lineno, frame, depth, changes[, keys])
#   return (2, lineno, frame, depth, repr, changes[, keys])
#   exception (3, lineno, frame, depth, repr, changes[, keys])
#   (the decoder also accepts return/exception without changes: no locals)
#   ("o", stdout, truncated), ("x", kind, error, reason, code)
# Live runs (request "live"; docs/tracer.md, "Live runs") add:
#   ("w", text): program output, as it is written;
#   ("t", text): the traceback of an uncaught exception (program frames);
#   ("p", reason): the child is paused after the event just sent (reason ""
#     at a pause the filter asked for, "interrupt", "jump", "postmortem");
#   ("r", ok, text, changes): the answer to an eval while paused;
#   ("u",): from here on the program runs untraced (a "go" with "untraced":
#     nothing is recorded until an interrupt, which sends a call record for
#     each program frame on the stack and ("u", 1), then pauses, or until
#     the end). A "go" with "filtered" also sends ("u",): nothing is
#     recorded, but at a line event at one of "lines" or in code whose
#     co_firstlineno is one of "starts", and at the return of a frame in
#     "frames", the stack is sent as after an interrupt, then the event,
#     then a pause; also at the line events at or past "steps_from" and
#     the exception events of a frame in "steps" (pdb's next, until, return),
#     and with "gen_exits" at every StopIteration and GeneratorExit exception
#     event (bdb stops there while it steps over a generator).
#   ("k", n): before the exit record of a run that ended untraced, its n
#     checkpoints (forked while it ran untraced); then ("p", "ended"): the
#     child waits for {"op": "checkpoint", + a go's filter}: the newest
#     checkpoint records its tail to the end, on the same pipes (the stack
#     as after an interrupt, ("u", 1), the events, its own exit record).
# Go -> child while paused (through the worker): 4-byte little-endian length
# + JSON: {"op": "go", "depth", "frames", "lines", "funcs", "exceptions",
# "untraced", "filtered", "starts", "steps", "steps_from", "gen_exits", "budget", "checkpoint_cpu"} (budget: pause after that many more
# recorded events; checkpoint_cpu: seconds of CPU between checkpoints while untraced),
# {"op": "eval", "src", "mode", "level"}, {"op": "jump", "line"}.
# A live run with "input" reads its stdin from a pipe the worker writes:
# Go sends {"input": nonce, "data": base64} and {"input": nonce, "eof": true}
# (the user's terminal; docs/debugger.md, "The program's input").
# keys: the frame's full ordered key list, only when it changed; changes:
# [index, repr, ...] of values that changed, or None.

import binascii
import builtins
import dis
import gc
import io
import json
import marshal
import os
import random
import re
import resource
import select
import shutil
import signal
import stat
import struct
import sys
import _thread
import tempfile
import time
import types

PROGRAM_FILE = "<program>"
WRAPPER_HEAD = "\n\ndef main():\n    return "  # tracer.WrapperHead
_MISSING = object()
CALL_FILE = "<call>"  # the --call expression, compiled alone
CUT_MARKER = "..."
TRACE_LOST = "trace incomplete: tracing stopped early (recursion limit reached inside the tracer, or sys.settrace replaced)"
REPR_SECONDS = 0.2  # a single user-defined __repr__ may run this long
FLUSH_RECORDS = 4096
# Checkpoints of an untraced continue (docs/debugger.md, "Long runs"): one is
# forked every CKPT_CPU seconds of the program's CPU, the newest CKPT_RING are
# kept; a resumed one counts its events to the end, and a copy of it records
# the last CKPT_TAIL of them (counted trace calls).
CKPT_CPU = 0.025
CKPT_RING = 3
CKPT_TAIL = 100000
# While a checkpoint counts, it forks a copy every CKPT_COPY_CPU seconds of
# CPU and keeps the newest CKPT_COPIES (and the first): the tail is
# recorded by the newest forked before it, which counts only from there.
CKPT_COPY_CPU = 0.005
CKPT_COPIES = 4
# A resumed checkpoint is the newest taken at least this long (program CPU,
# _program_cpu) before the end, so that the tail it records starts that far back
# (else the oldest kept).
CKPT_BEFORE = 0.005
# The exit status of a recording copy ndb gave up ("abandon"), passed on by
# its checkpoint: the process it came from pauses again where it waited.
ABANDONED = 7
EVAL_SECONDS = 5  # an expression typed at a live stop may run this long
EVAL_CHARS = 1 << 20  # and print this much
INPUT_PENDING = 1 << 20  # a live run's input not yet read by the program
MESSAGE_CHARS = 16 << 10  # an exit's reason (ndb's decoder refuses longer ones)
YIELD_VALUE = dis.opmap.get("YIELD_VALUE", -1)
GEN_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
_GEN_EXITS = (StopIteration, GeneratorExit)  # bdb stops at them while it steps over a generator
_TRACER_GLOBALS = globals()

_NoneType = type(None)
# Exact types whose repr cannot change while the object stays the same.
FROZEN_ATOMS = frozenset([int, bool, _NoneType, float, complex, str, bytes, range,
                          type(Ellipsis), type(NotImplemented)])
# Exact types whose repr is short-ish and computed in C (list fast path).
SHORT_ATOMS = frozenset([int, bool, _NoneType, float])
# Same type and == implies the same repr (float is excluded: 0.0 == -0.0).
EQ_SAFE = frozenset([int, bool, _NoneType, str, bytes])
_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
_object_repr = object.__repr__
_addr_key = object.__hash__  # a unique key per live object; id() would call the audit hook
_exc_repr = BaseException.__repr__
FunctionType = types.FunctionType


class _ReprTimeout(BaseException):
    pass


_in_user_repr = [False]


def _on_alarm(signum, frame):
    if _in_user_repr[0]:
        _in_user_repr[0] = False
        raise _ReprTimeout()


# ---------------------------------------------------------------- bounded repr

def _str_pre(s, n):
    """A prefix of repr(s): all of it, or one longer than n."""
    if len(s) <= n:
        return repr(s)
    q = '"' if ("'" in s and '"' not in s) else "'"
    rp = repr(s[:n])
    body = rp[1:-1]
    if rp[0] != q and q == "'":
        body = body.replace("'", "\\'")
    return q + body


def _bytes_pre(b, n):
    if len(b) <= n:
        return repr(b)
    q = '"' if (b"'" in b and b'"' not in b) else "'"
    rp = repr(b[:n])
    body = rp[2:-1]
    if rp[1] != q and q == "'":
        body = body.replace("'", "\\'")
    return "b" + q + body


def _generic_repr(o):
    t = type(o)
    if t.__repr__ is _object_repr:
        r = _object_repr(o)
    else:
        _in_user_repr[0] = True
        signal.setitimer(signal.ITIMER_REAL, REPR_SECONDS)
        try:
            r = repr(o)
        finally:
            _in_user_repr[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    if "0x" in r:
        r = _ADDR.sub(" at 0x0", r)
    return r


def _items_pre(it, n, open_, close, active, key_of=None):
    parts = [open_]
    total = len(open_)
    first = True
    for e in it:
        if first:
            first = False
        else:
            parts.append(", ")
            total += 2
        if key_of is not None:
            k, v = e
            p = _pre(k, n - total, active)
            parts.append(p)
            total += len(p)
            if total > n:
                return "".join(parts)
            parts.append(": ")
            total += 2
            e = v
        p = _pre(e, n - total, active)
        parts.append(p)
        total += len(p)
        if total > n:
            return "".join(parts)
    parts.append(close)
    return "".join(parts)


def _list_pre(o, n, active):
    ln = len(o)
    m = n // 3 + 2  # at most this many elements fit in n characters
    s = o[:m] if ln > m else o
    if set(map(type, s)) <= SHORT_ATOMS:
        try:
            r = repr(s)
        except ValueError:  # an int too long to print: let the walker raise it
            r = None
        if r is not None:
            return r[:-1] + ", " if ln > m else r
    oid = _addr_key(o)
    if oid in active:
        return "[...]"
    active.add(oid)
    try:
        return _items_pre(o, n, "[", "]", active)
    finally:
        active.discard(oid)


def _pre(o, n, active):
    """A prefix of repr(o): all of repr(o) if it has at most n characters,
    else a prefix longer than n. Builtin containers are walked so a huge value
    costs O(n); other objects use their own repr (time-limited)."""
    t = type(o)
    if t is int or t is bool or t is _NoneType or t is float:
        return repr(o)
    if t is str:
        return _str_pre(o, n)
    if t is list:
        return _list_pre(o, n, active)
    if t is tuple:
        oid = _addr_key(o)
        if oid in active:
            return "(...)"
        if len(o) == 1:
            active.add(oid)
            try:
                p = _pre(o[0], n - 1, active)
            finally:
                active.discard(oid)
            return "(" + p + ",)" if len(p) < n else "(" + p
        active.add(oid)
        try:
            return _items_pre(o, n, "(", ")", active)
        finally:
            active.discard(oid)
    if t is dict:
        if not o:
            return "{}"
        oid = _addr_key(o)
        if oid in active:
            return "{...}"
        active.add(oid)
        try:
            return _items_pre(o.items(), n, "{", "}", active, key_of=True)
        finally:
            active.discard(oid)
    if t is set or t is frozenset:
        name = t.__name__
        if not o:
            return name + "()"
        oid = _addr_key(o)
        if oid in active:
            return name + "(...)"
        active.add(oid)
        try:
            if t is set:
                return _items_pre(o, n, "{", "}", active)
            return _items_pre(o, n, "frozenset({", "})", active)
        finally:
            active.discard(oid)
    if t is bytes:
        return _bytes_pre(o, n)
    if isinstance(o, BaseException) and t.__repr__ is _exc_repr:
        args = o.args
        name = t.__name__
        if len(args) == 1:
            return name + "(" + _pre(args[0], n - len(name) - 1, active) + ")"
        return name + _pre(args, n - len(name), active)
    return _generic_repr(o)


def brepr(o, limit):
    """repr(o) if it has at most limit characters, else its first limit
    characters followed by CUT_MARKER; a placeholder if repr fails."""
    try:
        s = _pre(o, limit, set())
    except _ReprTimeout:
        return "<repr timed out>"
    except RecursionError:
        return "<repr raised RecursionError>"
    except MemoryError:
        raise
    except BaseException as e:  # a user __repr__ may raise anything
        s = "<repr raised %s>" % type(e).__name__  # cut as any repr: a class name can be long
    if type(s) is not str:
        return "<repr raised TypeError>"
    if len(s) > limit:
        return s[:limit] + CUT_MARKER
    return s


def _is_frozen(o, budget=1000):
    """True when o's repr cannot change while o is the same object."""
    t = type(o)
    if t in FROZEN_ATOMS:
        return True
    if (t is tuple or t is frozenset) and len(o) <= budget:
        for e in o:
            if not _is_frozen(e, budget // 2):
                return False
        return True
    return False


# ---------------------------------------------------------------- child side

class _Capture(io.TextIOBase):
    """Bounded stand-in for sys.stdout: keeps the first `limit` characters."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, limit):
        self._parts = []
        self._size = 0
        self._limit = limit
        self.truncated = False
        self.sink = None  # a live run streams what it keeps

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        room = self._limit - self._size
        if len(s) > room:
            self.truncated = True
            s = s[:max(room, 0)]
        if s:
            self._parts.append(s)
            self._size += len(s)
            if self.sink is not None:
                self.sink(s)
        return len(s)

    def writable(self):
        return True

    def isatty(self):
        return False

    def getvalue(self):
        return "".join(self._parts)

    def size(self):
        return self._size

    def digest(self):
        """What was kept so far, in short (two runs' outputs compared)."""
        v = self.getvalue().encode("utf-8", "surrogatepass")
        return "%d:%08x:%d" % (len(v), binascii.crc32(v), self.truncated)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_all(fd):
    """What fd holds until its end (a checkpoint's go)."""
    parts = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            break
        parts.append(b)
    os.close(fd)
    return b"".join(parts)


def _stdin_reopens():
    """Whether a forked copy can have its own standard input (_own_stdin)."""
    try:
        if not stat.S_ISREG(os.fstat(0).st_mode):
            return True  # /dev/null (no --stdin): every read is its end
        os.close(os.open("/proc/self/fd/0", os.O_RDONLY))
        return True
    except OSError:
        return False


def _stdin_offset():
    """Standard input's offset, read before a fork: the copy and its
    origin share it until the copy reopens the file (_own_stdin), and the
    origin may read on before the copy runs."""
    try:
        return os.lseek(0, 0, os.SEEK_CUR)
    except OSError:
        return None  # a pipe, /dev/null


def _own_stdin(at):
    """A forked copy's standard input (the --stdin memory file) at offset
    at (_stdin_offset before the fork), but its own: the run it was
    forked from reads on."""
    if at is None:
        return
    try:
        fd = os.open("/proc/self/fd/0", os.O_RDONLY)
    except OSError:
        return  # /dev/null, or no /proc: nothing to read again
    os.lseek(fd, at, os.SEEK_SET)
    os.dup2(fd, 0)
    os.close(fd)


def _program_cpu():
    """The process's CPU so far, two ways: (user CPU, process CPU). User CPU
    leaves out the copy-on-write faults of the checkpoints forked (system
    time) but is sampled at the kernel's ticks and scaled, a few ms off
    either way; process CPU is exact but counts those faults. The
    program's CPU between two moments is the smaller gap (_cpu_between)."""
    return (resource.getrusage(resource.RUSAGE_SELF).ru_utime, time.process_time())


def _cpu_between(then, now):
    return min(now[0] - then[0], now[1] - then[1])


def _wait_child(pid):
    """Wait for child pid; its exit status (0 when it cannot be known)."""
    while True:
        try:
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue


def _inside(path, roots):
    """Whether path is inside one of the folders roots (realpaths)."""
    try:
        if isinstance(path, int):
            return True  # an already open descriptor
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        path = os.fspath(path)
    except Exception:
        return False
    full = os.path.realpath(os.path.join(os.getcwd(), path))
    if full == "/dev/null":
        return True
    for root in roots:
        if full == root or full.startswith(root + "/"):
            return True
    return False


_BLOCKED = {
    "os.fork": "creating processes", "os.forkpty": "creating processes",
    "os.system": "creating processes", "os.exec": "creating processes",
    "os.posix_spawn": "creating processes", "os.spawn": "creating processes",
    "subprocess.Popen": "creating processes", "pty.spawn": "creating processes",
    "socket.connect": "network access",
    "socket.bind": "network access", "socket.sendto": "network access",
    "socket.sendmsg": "network access", "socket.getaddrinfo": "network access",
    "socket.gethostbyname": "network access", "socket.gethostbyaddr": "network access",
    "socket.getnameinfo": "network access", "socket.sethostname": "network access",
    "urllib.Request": "network access",
    # Loading libraries through ctypes is allowed (numpy and torch do it on
    # import). This event is raised only by ctypes' private call_function:
    # an ordinary call of a foreign function raises no audit event at all
    # (CPython 3.11), so the hook does not stop ctypes calls; the kernel
    # layer contains what they do (docs/tracer.md).
    "ctypes.call_function": "ctypes",
    "resource.setrlimit": "changing limits", "resource.prlimit": "changing limits",
    "os.setuid": "changing identity",
}
_PATH_EVENTS = {  # event -> indexes of path arguments that must stay in the scratch dir
    "os.remove": (0,), "os.rename": (0, 1), "os.rmdir": (0,), "os.mkdir": (0,),
    "os.symlink": (1,), "os.link": (0, 1), "os.chmod": (0,), "os.chown": (0,),
    "os.truncate": (0,), "os.utime": (0,), "os.chdir": (0,), "os.chflags": (0,),
    "os.lchflags": (0,), "os.mkfifo": (0,), "os.mknod": (0,), "os.setxattr": (0,),
    "os.removexattr": (0,), "shutil.rmtree": (0,), "shutil.copyfile": (1,),
    "shutil.copytree": (1,), "shutil.move": (0, 1), "shutil.chown": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _make_audit_hook(roots, state):
    root = tuple(roots)
    pid = os.getpid()

    def hook(event, args):
        if not state[0]:
            return
        why = _BLOCKED.get(event)
        if why is not None:
            raise PermissionError("ndb sandbox: %s is not allowed (%s)" % (why, event))
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, 0))[:3]
            if isinstance(mode, str):
                writing = any(c in mode for c in "wax+")
            else:
                writing = bool((flags or 0) & _WRITE_FLAGS)
            if writing and not _inside(path, root):
                raise PermissionError("ndb sandbox: writing outside the scratch directory is not allowed: %r" % (path,))
            if writing and len(state) > 1:
                state[1] = True
            return
        idx = _PATH_EVENTS.get(event)
        if idx is not None:
            if len(state) > 1:
                state[1] = True
            for i in idx:
                if i < len(args) and not _inside(args[i], root):
                    raise PermissionError("ndb sandbox: %s outside the scratch directory is not allowed" % event)
            return
        if event == "socket.__new__":
            # AF_UNIX socket pairs stay allowed (asyncio's event loop makes one);
            # they cannot reach anything: connect and bind are refused above.
            if len(args) > 1 and args[1] == 1:  # AF_UNIX
                return
            raise PermissionError("ndb sandbox: network access is not allowed (socket.__new__)")
        if event in ("os.kill", "os.killpg", "signal.pthread_kill"):
            if event == "os.kill" and args and args[0] == os.getppid():
                pass  # the parent (0 in a PID namespace: the parent is outside)
            elif event == "os.kill" and args and args[0] in (0, pid, os.getpid()):
                return
            raise PermissionError("ndb sandbox: signalling other processes is not allowed")
    return hook


# ---------------------------------------------------------------- the program's run (child side)
#
# _run_child runs one program in the forked child. Its parts, by job:
#   _prepare_child: the process (session, descriptors, isolation, program
#     context, standard input, limits, signals, environment);
#   _Run: the run's state and its start and end (load, run_main, uncaught),
#     with its parts as classes it is made of: _RunOutput, the records and
#     the exit (flush, finish); _RunPauses, live pauses (pause, evaluate);
#     _RunResumes, untraced and filtered resumes and interrupts
#     (go_untraced, go_filtered, reattach);
#   the trace functions, closures (_make_values, _make_recorder,
#     _make_filtered_trace): what they use per event is bound to closure
#     cells once, since an attribute of the run costs a lookup at every event.
# Child -> worker records: the protocol at the top of this file.


def _run_child(req, wfd, scratch, libc, ns=False, cfd=None, ifd=None):
    """Run req's program in this forked process: records go to wfd; a live
    run's requests come on cfd, its input on ifd. Returns the exit status."""
    context = _prepare_child(req, wfd, scratch, libc, ns, cfd, ifd)
    if context is None:
        return 0  # an isolation probe: its answer is sent
    writable_roots, context_error = context
    run = _Run(req, wfd, cfd, ns)
    if not run.load(context_error):
        return 0  # it cannot start: the exit record says why
    run.make_trace_functions()
    run.install_guards(writable_roots)
    # The program's code runs two frames above this one (run_main, exec), as
    # it always has: programs reach RecursionError at the same depth. So
    # the post-mortem pause is made here too (p in its frames: as deep).
    run.guard[0] = True
    try:
        try:
            run.run_main()
        finally:
            run.stop_tracing()
        if run.untraced:
            try:
                run.untraced_end()
            except BaseException:
                pass  # the exit still comes; the last line does not
        run.finish("normal")
        run.end_wait()
    except SystemExit as e:
        run.exited(e)
        run.end_wait()
    except MemoryError as e:
        run.finish("never", brepr(e, run.repr_limit), "memory")
    except BaseException as e:
        pm = run.uncaught(e)
        if run.live_on and pm:
            run.pause("postmortem", lambda level: pm[level] if level < len(pm) else None)
        else:
            run.end_wait()
    return 0


# ---- the process

def _prepare_child(req, wfd, scratch, libc, ns, cfd, ifd):
    """Set up the child's process for the program. Returns (writable
    roots, context error) for _Run, or None for an isolation probe (its
    answer is sent on wfd)."""
    if ns:
        # PID 1 of a new PID namespace: a session of its own (so kill(0)
        # reaches only this namespace); everything in it dies with it.
        os.setsid()
    else:
        # Own process group (the parent kills the whole group).
        os.setpgid(0, 0)
    if libc is not None:
        try:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # die with the parent
        except Exception:
            pass
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    if ifd is not None:
        # a live run's input: the read end of a pipe only ndb's worker writes
        os.dup2(ifd, 0)
        os.close(ifd)
    iso = {"ns": ns, "proc": False, "tmpfs": False, "seccomp": False}
    if ns:
        iso["proc"], iso["tmpfs"] = _isolate_program(libc, scratch, wfd, SCRATCH_BYTES, cfd)
        for d in req.get("hide") or ():
            # another program's folder, bound in this worker: not for this one
            _mount(libc, b"tmpfs", d, b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, b"size=4k,mode=0555")
    workdir, writable_roots, context_error = _program_folder(req, scratch, libc, ns)
    if ifd is None:
        _feed_stdin(req.get("stdin"), scratch)
    _set_limits(req["limits"], cfd is not None, ns)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the size limit fail with EFBIG
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.chdir(scratch)
    if workdir != scratch:
        try:
            os.chdir(workdir)
        except OSError:
            pass  # a folder the sandbox's uid cannot enter: the scratch directory (ndb warns)
    # The worker's environment is already clean (set by ndb); only these differ per run.
    os.environ["HOME"] = scratch
    os.environ["TMPDIR"] = scratch
    # random reseeds itself from urandom in every forked child (an at-fork
    # hook): seed it again so that runs are deterministic.
    random.seed(0)
    if ns:
        iso["caps"] = _drop_caps(libc)
    iso["seccomp"] = _install_seccomp(libc) if ns else False
    if req.get("probe"):
        _write_all(wfd, json.dumps(iso).encode())
        return None
    return writable_roots, context_error


def _program_folder(req, scratch, libc, ns):
    """The program context's folder (docs/tracer.md, "Program context"):
    (working directory, roots the program may write in, error to end the
    run with or "")."""
    folder = req.get("dir") or ""
    workdir = scratch
    writable_roots = [os.path.realpath(scratch)]
    context_error = ""
    if folder:
        workdir = folder
        if req.get("writable"):
            copy = os.path.join(scratch, ".ndb-folder")
            try:
                try:
                    shutil.copytree(folder, copy, symlinks=True)
                except shutil.Error:
                    pass  # unreadable files stay unreadable
                if ns and _mount(libc, os.fsencode(copy), folder, None, MS_BIND | MS_REC, None):
                    writable_roots.append(folder)  # the copy, at the folder's own path
                else:
                    workdir = copy
            except OSError as e:
                context_error = "ndb: cannot copy the program's folder into its %d MiB scratch directory: %s" % (
                    SCRATCH_BYTES >> 20, e)
    return workdir, writable_roots, context_error


def _feed_stdin(stdin, scratch):
    """The program's standard input from the request (base64), when it
    has one: a memory file (else an unlinked one in scratch) on fd 0."""
    if stdin is None:
        return
    data = binascii.a2b_base64(stdin)
    try:
        fd = os.memfd_create("stdin")
    except (AttributeError, OSError):
        path = os.path.join(scratch, ".ndb-stdin")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(path)
    _write_all(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    os.dup2(fd, 0)
    os.close(fd)


def _setlim(res, value):
    try:
        resource.setrlimit(res, (value, value))
    except (ValueError, OSError):
        pass


def _set_limits(lim, live_on, ns):
    """The program's resource limits (memory, CPU, file size, processes)."""
    mem = int(lim.get("memory") or 0)
    if mem > 0:
        _setlim(resource.RLIMIT_AS, mem)
    _setlim(resource.RLIMIT_CORE, 0)
    _setlim(resource.RLIMIT_FSIZE, 64 << 20)
    cpu = int(float(lim.get("timeout") or 10)) + 2
    if live_on:
        # a live run waits at its pauses without using CPU (freeze): its
        # own limit, Limits.LiveCPU, counts only when it runs
        cpu = int(lim.get("cpu") or 300)
    try:
        # SIGXCPU at the soft limit (exit never/cpu); the hard one, a second
        # later, kills (equal limits made the kernel send SIGKILL at once,
        # which reads as the OOM killer's)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    except (ValueError, OSError):
        pass
    if ns:
        # Processes and threads of this program. Counted per user namespace
        # (the program's own) and enforced now that it holds no capability;
        # the PID namespace kills them all at the end anyway.
        _setlim(resource.RLIMIT_NPROC, NPROC)


# ---- records and the exit

class _RunOutput:
    """A run's records to the worker and the program's output (part of
    _Run): records leave in chunks (flush) until the exit record (finish)."""

    def init_output(self, wfd, lim):
        self.wfd = wfd
        self.capture = _Capture(int(lim.get("output") or (1 << 20)))
        self.err_capture = _Capture(1 << 16)
        self.out = []  # pending records
        self.closed = False
        self.trace_lost = False  # CPython switched tracing off (the tracer hit the recursion limit)
        self.real_exit = os._exit
        self.flushing = False
        # the program's output ndb has been sent (characters of capture's):
        # a run from a checkpoint shows only what goes past it
        self.shown_chars = 0
        self.interrupt_after_flush = None  # the frame of an interrupt that came while flushing
        # Records leave in batches that double from 1 to FLUSH_RECORDS: a child
        # killed while stuck inside C code (where it cannot be asked to flush)
        # loses less than half of what it recorded, and short programs lose nothing.
        self.batch = [1]
        # On a timeout the parent sends SIGUSR1 first: hand over what is pending.
        signal.signal(signal.SIGUSR1, lambda signum, frame: self.flush())
        os.register_at_fork(after_in_child=self.forked)
        if self.live_on:
            self.capture.sink = self.sink

    def flush(self):
        # One chunk: 4-byte little-endian length, then marshal (version 2) of
        # the list of records. A chunk cut short by a dying child is dropped.
        out = self.out
        if out and not self.flushing:
            self.flushing = True
            try:
                # by count: a signal handler may append records meanwhile
                # (an interrupt in an untraced stretch: reattach)
                n = len(out)
                data = marshal.dumps(out[:n], 2)
                shown = sum(len(r[1]) for r in out[:n] if r[0] == "w") if self.live_on else 0
                del out[:n]
                if self.batch[0] < FLUSH_RECORDS:
                    self.batch[0] *= 2
                _write_all(self.wfd, struct.pack("<I", len(data)) + data)
                self.shown_chars += shown
            finally:
                self.flushing = False
                f = self.interrupt_after_flush
                if f is not None:
                    self.interrupt_after_flush = None
                    self.on_interrupt(signal.SIGUSR2, f)

    def forked(self):
        # A process the program forks shares the record pipe: it must not
        # send records (a second exit or output record is a bad record
        # to ndb's decoder), so it stops tracing and sends nothing.
        self.closed = True
        sys.settrace(None)
        self.out.clear()
        self.flushing = True

    def sink(self, text):
        """A live run's output, sent as it is written."""
        self.out.append(("w", text))
        self.flush()

    def sink_past(self, shown):
        """sink, for a run from a checkpoint whose origin showed `shown`
        characters: only what goes past them is sent."""
        capture = self.capture

        def sink(text):
            over = capture.size() - shown
            if over > 0:
                self.sink(text[max(len(text) - over, 0):])
        return sink

    def finish(self, kind, error="", reason="", code=0):
        self.guard[0] = False
        sys.settrace(None)
        if self.ckpt_next is not None:
            self.hand_over({"count": self.counted[0]})  # a counting checkpoint: no return
        sw = getattr(self, "switched", None)
        if sw is not None and not sw[0]:
            # a recording copy that met no program event to record from:
            # its exit alone (ndb finds no tail in it)
            sw[0] = True
            self.closed = self.flushing = False
            del self.out[:]
        self.checkpoints_stop()
        if not self.end_cpu:
            self.end_cpu = _program_cpu()  # an exit from inside the program (os._exit)
        if self.trace_lost and not reason:
            reason = TRACE_LOST
        if self.closed:
            return
        self.closed = True
        if self.guard[1] or self.threads_started[0]:
            self.checkpoints_drop()  # files written, or a thread started, after the newest checkpoint
        if self.ckpts and kind in ("normal", "error") and reason != "os._exit":
            self.out.append(("k", len(self.ckpts)))
        self.out.append(("o", self.capture.getvalue(), self.capture.truncated))
        self.out.append(("x", kind, error, reason, code))
        self.flush()
        if self.until_cand[0]:
            # a copy recording the way to a pause ended before it: the run
            # it came from waits at its pause again (ndb gives this one up)
            self.real_exit(ABANDONED)

    def flush_and_exit(self, kind, error, reason, code=0):
        self.finish(kind, error, reason, code)
        self.real_exit(0)

    def recorder_failed(self, e):
        # The recorder itself failed (nearly always memory): end the run clearly.
        if isinstance(e, MemoryError):
            self.flush_and_exit("never", "MemoryError()", "memory")
        self.flush_and_exit("error", "", ("ndb tracer failure: %s: %s" % (type(e).__name__, e))[:MESSAGE_CHARS])

    def guarded_exit(self, status):
        """os._exit for the program: its exit record first."""
        try:
            st = int(status)
        except Exception:
            st = 1
        self.finish("normal" if st == 0 else "error", "" if st == 0 else "os._exit(%d)" % st, "os._exit", st)
        self.real_exit(0)


# ---- live pauses (docs/tracer.md, "Live runs")

class _RunPauses:
    """A live run's pauses (part of _Run): at each, ndb's requests
    (evaluations, jumps) until a "go" with the next pause filter."""

    def init_pauses(self, cfd):
        self.cfd = cfd  # ndb's requests
        # pz is the pause filter ndb sends with each "go": pause after an event
        # of depth <= pz[0], of a frame in pz[1], a line event at a line in pz[2]
        # or in a function named in pz[3], any exception event when pz[4], and
        # at the next event once interrupted (pz[5], set by SIGUSR2). ndb's pdb
        # simulation decides which of these pauses is a stop.
        # pz[6]: pause after the event being recorded (a filtered stop);
        # pz[7]: pause once the recorded events reach this count (a "budget").
        self.pz = [1 << 30, frozenset(), frozenset(), frozenset(), False, False, False, 1 << 62]

    def read_exact_ctl(self, n):
        b = b""
        while len(b) < n:
            c = _read_holding_gil(self.cfd, n - len(b))
            if not c:  # ndb is gone: so is the run
                self.real_exit(0)
            b += c
        return b

    def read_ctl(self):
        n = struct.unpack("<I", self.read_exact_ctl(4))[0]
        msg = json.loads(self.read_exact_ctl(n))
        return msg if isinstance(msg, dict) else {}

    def freeze(self, on):
        """A paused program uses no CPU: its other threads wait for the
        GIL, which the paused thread keeps while it waits for ndb
        (_read_holding_gil), and its other processes (all of its PID
        namespace but itself, PID 1) are stopped until it resumes."""
        if not self.ns or os.getpid() != 1:
            return
        g0 = self.guard[0]
        self.guard[0] = False  # the audit hook refuses kill(-1) to the program
        try:
            os.kill(-1, signal.SIGSTOP if on else signal.SIGCONT)
        except OSError:
            pass  # no other process
        finally:
            self.guard[0] = g0

    def caller_frame(self, frame, level):
        """The level-th program frame below frame (0: frame itself)."""
        frames = self.frames
        f = frame
        while level > 0 and f is not None:
            f = f.f_back
            while f is not None and f not in frames:
                f = f.f_back
            level -= 1
        return f

    def pause(self, reason, frame_at, event="", st=None, frame=None):
        """Wait for ndb: answer evals and jumps until a "go" (with the next
        filter) resumes the program. frame_at(level) is the frame an eval
        runs in."""
        pz = self.pz
        out = self.out
        pz[5] = pz[6] = False
        if self.int_pause:
            reason, self.int_pause = "interrupt", False
        out.append(("p", reason))
        self.flush()
        dicts = {}
        self.freeze(True)
        while True:
            msg = self.read_ctl()
            op = msg.get("op")
            if op == "go":
                self.freeze(False)
                if self.pause_ckpts and (msg.get("untraced") or msg.get("filtered")):
                    # a new stretch: the way to the stop that follows is
                    # not recorded; a recorded go keeps them (ndb records
                    # the way again to the pause, then the steps since)
                    self.pause_ckpts = False
                    self.checkpoints_drop()
                self.set_filter(msg)
                if frame is not None:
                    if msg.get("untraced"):
                        self.go_untraced(frame)
                    elif msg.get("filtered"):
                        self.go_filtered(frame, pz[2], frozenset(msg.get("starts") or ()),
                                         frozenset(msg.get("steps") or ()), int(msg.get("steps_from") or 0),
                                         bool(msg.get("gen_exits")))
                return
            if op == "eval":
                try:
                    level = int(msg.get("level") or 0)
                except (TypeError, ValueError):
                    level = -1
                out.append(self.evaluate(frame_at(level) if level >= 0 else None, msg, dicts))
            elif op == "jump":
                self.jump(msg, event, st, frame)
            elif op == "checkpoint" and reason == "postmortem" and self.ckpts:
                self.resume_checkpoint(msg)  # no return
            elif op == "checkpoint" and msg.get("pause") and self.pause_ckpts and self.ckpts:
                # the way here recorded again; back when ndb gave it up
                self.end_cpu = self.pause_cpu
                self.resume_checkpoint(msg, True)
                self.pause_ckpts = False
                self.freeze(True)
                out.append(("p", reason))
            elif op == "abandon" and getattr(self, "switched", None) is not None:
                self.real_exit(ABANDONED)  # a recording copy ndb gave up: its origin pauses again
            elif op == "abandon":
                out.append(("p", reason))  # back already: still waiting here
            else:
                out.append(("r", False, "unknown request", None))
            self.flush()

    def set_filter(self, msg):
        """The pause filter (pz) of a "go"."""
        pz = self.pz
        pz[0] = int(msg.get("depth", -1))
        pz[1] = frozenset(msg.get("frames") or ())
        pz[2] = frozenset(msg.get("lines") or ())
        pz[3] = frozenset(msg.get("funcs") or ())
        pz[4] = bool(msg.get("exceptions"))
        pz[5] = False  # an interrupt that came while it waited is void
        self.ckpt_cpu = float(msg.get("checkpoint_cpu") or CKPT_CPU)
        budget = msg.get("budget")
        pz[7] = self.counter[0] + int(budget) if budget else 1 << 62

    def jump(self, msg, event, st, frame):
        """pdb's j at a pause: the frame's next line, and its line record."""
        try:
            if event != "line":
                raise ValueError("can only jump from a 'line' trace event")
            frame.f_lineno = int(msg.get("line"))
        except (ValueError, TypeError) as e:
            self.out.append(("r", False, "Jump failed: %s" % e, None))
        else:
            self.out.append((1, frame.f_lineno, st[0], st[1], None))
            self.out.append(("r", True, "", None))

    def evaluate(self, f, msg, dicts):
        """pdb's p, pp and !stmt in frame f: ("r", ok, text, locals) where
        locals are [name, repr, ...] of f after a statement (else None)."""
        if f is None:
            return ("r", False, "no such frame", None)
        mode = msg.get("mode")
        src = str(msg.get("src") or "")
        key = object.__hash__(f)  # not id(): id() is audited
        d = dicts.get(key)
        if d is None:  # read once per pause: reading f_locals again would undo a statement's writes
            d = dicts[key] = f.f_locals
        buf = io.StringIO()
        saved = sys.stdout
        sys.stdout = buf
        ok, text = True, ""
        _in_user_repr[0] = True
        signal.setitimer(signal.ITIMER_REAL, EVAL_SECONDS)
        try:
            import pprint, traceback  # here, not in the worker: a bigger worker forks slower
            if mode == "exec":
                exec(compile(src + "\n", "<stdin>", "single"), f.f_globals, d)
                text = buf.getvalue()
            else:
                v = eval(compile(src, "<stdin>", "eval"), f.f_globals, d)
                # what the expression printed comes first, as under pdb (p f())
                text = buf.getvalue() + (pprint.pformat(v) if mode == "pp" else repr(v))
        except _ReprTimeout:
            ok, text = False, "evaluation stopped after %g s" % EVAL_SECONDS
        except BaseException as e:
            ok = False
            try:
                text = traceback.format_exception_only(type(e), e)[-1].strip()
            except BaseException:
                text = type(e).__name__
        finally:
            _in_user_repr[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdout = saved
        if len(text) > EVAL_CHARS:
            text = text[:EVAL_CHARS] + CUT_MARKER
        fresh = None
        if mode == "exec":
            fresh = []
            hide = f.f_code.co_flags & 0x2 == 0
            for k, v in list(d.items()):
                if hide and k[:2] == "__" and k[-2:] == "__":
                    continue
                fresh.append(str(k))
                fresh.append(brepr(v, self.repr_limit))
        return ("r", ok, text, fresh)


# ---- untraced and filtered resumes, interrupts

class _RunResumes:
    """A live run's resumes that record nothing (part of _Run), and the
    interrupt that traces again."""

    def init_resumes(self):
        # A "go" with "untraced" (pdb's continue with no breakpoint: nothing
        # but an interrupt can stop the program) drops tracing altogether, as
        # bdb's set_continue does: the program runs at full speed and records
        # nothing; ("u",) marks the gap in the trace. An interrupt traces again.
        self.untraced = False
        self.untraced_base = None  # the outermost program frame when tracing was dropped
        # The local trace function of the mode the program runs in: what a
        # trace function returns after a pause, which may have changed it.
        self.cur_local = None
        # A "go" with "filtered" (pdb's continue with breakpoints, once the
        # trace is long: docs/debugger.md, "Long runs") records nothing either,
        # but traces the frames whose code holds a breakpoint line (or starts
        # at one: a function breakpoint) and the frames ndb knows (to follow
        # their returns), and stops tracing at such a line (filtered_stop):
        # the stack is recorded as after an interrupt, then the event, and the
        # program pauses for ndb's pdb simulation to decide.
        self.filtered = [False]
        # lines, starts (co_firstlineno of function breakpoints), steps (the
        # ids of the frames pdb steps in), steps_from (their first line that stops),
        # gen_exits (pause at every StopIteration and GeneratorExit)
        self.filt_lines = [frozenset(), frozenset(), frozenset(), 0, False]
        self.may_hit_cache = {}  # code -> whether a line of it is in filt_lines[0]
        self.excepted = set()  # known frames whose last event was an exception (see filtered_other)
        self.quiet = set()  # known frames traced for their return only (f_trace_lines off)
        # Checkpoints (CKPT_CPU): [(pid, write end of its pipe, _program_cpu())], oldest
        # first; why none are taken ("" while they may be); in a resumed
        # checkpoint that counts, its recording copy and the count.
        self.ckpts = []
        self.ckpt_off = ""
        self.ckpt_next = None
        self.ckpt_cpu = CKPT_CPU
        self.end_cpu = None
        self.counted = [0]
        # A filtered stretch's checkpoints are kept at the pause it ends with
        # (pause_ckpts, its CPU time pause_cpu) until the next "go": a
        # reverse command there records its tail from one (resume_checkpoint
        # with "pause"); filt_frames are the stretch's Frames (is_candidate);
        # until_cand: a recording copy pauses at the first event the
        # stretch paused at; int_pause: the next pause is an interrupt's
        # (interrupt_from_checkpoint).
        self.pause_ckpts = False
        self.pause_cpu = None
        self.int_pause = False
        self.filt_frames = frozenset()
        self.until_cand = [False]
        if self.live_on:
            signal.signal(signal.SIGUSR2, self.on_interrupt)

    def is_program_frame(self, f):
        return f.f_globals is self.g and f.f_code.co_filename == self.fname

    def go_untraced(self, frame, checkpoints=True):
        self.out.append(("u",))
        self.flush()
        sys.settrace(None)
        f = frame
        while f is not None:  # bdb's set_continue: no frame keeps a local trace
            f.f_trace = None
            if self.is_program_frame(f):
                self.untraced_base = f
            f = f.f_back
        self.untraced = True
        if self.pz[5]:  # an interrupt came in between: it found tracing still on
            self.reattach(frame)
        elif checkpoints:
            self.checkpoints_start()

    def on_interrupt(self, signum, frame):
        self.pz[5] = True
        if self.untraced and self.flushing:
            # a record leaves (the program's output): a run from a checkpoint
            # would take it as shown, and it would be lost; after it
            self.interrupt_after_flush = frame
            return
        if self.untraced:
            try:
                room = min(CKPT_TAIL, self.max_events - self.counter[0] - 1000)
                if self.ckpts and room > 0 and not self.req.get("input") and not self.guard[1] and not self.threads_started[0] and not self.closed:
                    self.interrupt_from_checkpoint(room)  # no return
                self.reattach(frame)
            except BaseException as e:
                self.recorder_failed(e)

    def interrupt_from_checkpoint(self, budget):
        """An interrupt in a stretch with checkpoints: the newest at least
        CKPT_BEFORE of CPU back records its way on from there, budget
        events (CKPT_TAIL, or what the event limit leaves), and pauses as
        interrupted, so reverse commands there have that much behind them
        (where an interrupt lands is anyone's guess: a little earlier, or
        later, is as good). What the program printed past the checkpoint
        and ndb was sent is not shown again; what was captured but not yet
        sent (the interrupt came between a print and its record's flush)
        is, by the run from the checkpoint. Not with the user's typing as
        input (what was read since would be waited for)."""
        self.checkpoints_stop()
        self.end_cpu = _program_cpu()
        self.resume_checkpoint({"op": "checkpoint", "interrupt": True, "depth": -1,
                                "budget": budget, "shown": self.shown_chars})

    def reattach(self, frame, keep=False):
        """Trace again from an interrupt in an untraced stretch: the
        program frames on the stack get a call record (their line and
        locals as they are now; new numbers for frames entered unrecorded),
        and frames that ended unrecorded are forgotten (a filtered stretch
        saw every known frame's end: they are kept)."""
        stack = []
        f = frame
        while f is not None:
            if self.is_program_frame(f):
                stack.append(f)
            f = f.f_back
        if not stack:
            return  # the program's code has ended (its exit is being sent)
        frames = self.frames
        self.untraced = False
        self.checkpoints_stop()
        if keep and not self.guard[1] and not self.threads_started[0] and self.ckpts:
            # a filtered stretch's pause: its checkpoints can record the
            # way here again (pause_ckpts)
            self.pause_ckpts = True
            self.pause_cpu = _program_cpu()
        else:
            self.checkpoints_drop()  # they hold the stretch that ends here
        was_filtered = self.filtered[0]
        self.filtered[0] = False
        local_trace = self.cur_local = self.local_trace
        stack.reverse()
        keep = dict(frames) if was_filtered else {}
        self.excepted.clear()
        for f in self.quiet:
            f.f_trace_lines = True
        self.quiet.clear()
        counter = self.counter
        for depth, f in enumerate(stack):
            st = frames.get(f)
            if st is None:
                counter[1] += 1
                st = _frame_state(counter[1], depth, f.f_code)
            st[1] = depth
            keep[f] = st
            # pdb's f_back of a frame called from exec'd code is that code's frame
            self.call_record(st, f, f.f_lineno, int(depth > 0 and f.f_back is not stack[depth - 1]))
            f.f_trace = local_trace
        self.out.append(("u", 1))  # the records above stand for the stack, not for events
        frames.clear()
        frames.update(keep)
        sys.settrace(self.global_trace)

    def go_filtered(self, frame, lines, starts, steps, steps_from, gen_exits=False):
        """Untraced but for the frames that can reach a breakpoint (see
        filtered in init_resumes). SIGUSR2 waits until the mode is set up: an
        interrupt then reattaches from a consistent state."""
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
        try:
            self.go_untraced(frame, False)
            if not self.untraced:
                return  # an interrupt came in between: tracing again
            filt_lines = self.filt_lines
            if lines != filt_lines[0]:
                self.may_hit_cache.clear()
            filt_lines[0], filt_lines[1], filt_lines[2], filt_lines[3] = lines, starts, steps, steps_from
            filt_lines[4] = gen_exits
            self.filtered[0] = True
            self.excepted.clear()
            f = frame
            while f is not None:  # the frames on the stack: their lines, their returns
                if self.is_program_frame(f):
                    f.f_trace = self.filtered_trace(f, f.f_code)
                f = f.f_back
            self.cur_local = frame.f_trace
            self.filt_frames = self.pz[1]
            sys.settrace(self.filtered_global)
            self.checkpoints_start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    # ---- checkpoints of an untraced continue (docs/debugger.md, "Long runs")

    def checkpoints_start(self):
        """Fork a checkpoint every CKPT_CPU seconds of CPU while the program
        runs untraced: only in PID 1 of the program's namespace (a checkpoint
        dies with it) or in a copy that recorded a tail and runs on (its
        origin, PID 1, waits for it), not over a program's own SIGVTALRM
        timer."""
        if not (self.live_on and self.ns and self.ckpt_owner()) or self.ckpt_off:
            return
        if not _stdin_reopens():
            # a --stdin file whose offset a copy would share (what the user
            # types is read once: ndb uses no checkpoint once anything was
            # typed, tracer.Run.Typed)
            self.ckpt_off = "the program's input cannot be read again"
            return
        if signal.getsignal(signal.SIGVTALRM) not in (signal.SIG_DFL, self.on_checkpoint) or \
                (signal.getsignal(signal.SIGVTALRM) == signal.SIG_DFL and signal.getitimer(signal.ITIMER_VIRTUAL)[0]):
            self.ckpt_off = "the program uses SIGVTALRM"
            return
        signal.signal(signal.SIGVTALRM, self.on_checkpoint)
        signal.setitimer(signal.ITIMER_VIRTUAL, self.ckpt_cpu, self.ckpt_cpu)

    def ckpt_owner(self):
        """Whether this process takes checkpoints (checkpoints_start)."""
        sw = getattr(self, "switched", None)
        return os.getpid() == 1 or (sw is not None and sw[0])

    def checkpoints_stop(self):
        if self.ckpt_off == "" and self.ckpt_owner() and signal.getsignal(signal.SIGVTALRM) == self.on_checkpoint:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0, 0)

    def checkpoints_drop(self):
        while self.ckpts:
            self.drop_checkpoint(self.ckpts.pop(0))

    def drop_checkpoint(self, ck):
        pid, w = ck[0], ck[1]
        g0 = self.guard[0]
        self.guard[0] = False
        try:
            os.close(w)  # its read sees the end: it exits
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        finally:
            self.guard[0] = g0

    def on_checkpoint(self, signum, frame):
        if not self.untraced or self.closed or self.flushing or self.ckpt_off:
            return
        # first, wherever the signal lands: what ends checkpoints for good
        if self.guard[1]:
            # the files it wrote are the run's, not the checkpoint's
            self.ckpt_off = "the program writes files"
            signal.setitimer(signal.ITIMER_VIRTUAL, 0, 0)
            self.checkpoints_drop()
            return
        if self.threads_started[0]:
            # a forked copy would have lost its other threads
            self.ckpt_off = "the program runs threads"
            signal.setitimer(signal.ITIMER_VIRTUAL, 0, 0)
            self.checkpoints_drop()
            return
        f = frame
        while f is not None and not self.is_program_frame(f):
            if f.f_globals is _TRACER_GLOBALS:
                return  # a filtered stretch's trace function runs: not a program's moment
            f = f.f_back
        if f is None:
            return  # the program's code has ended: nothing to record again
        g0 = self.guard[0]
        self.guard[0] = False
        # an interrupt (reattach) waits until the ring is consistent
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
        try:
            r, w = os.pipe()
            at = _stdin_offset()
            try:
                pid = os.fork()
            except OSError:  # RLIMIT_NPROC with the program's own processes
                os.close(r)
                os.close(w)
                return
            if pid == 0:
                os.close(w)
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
                self.checkpoint_wait(r, frame, at)
                return  # resumed: the program goes on (recorded or counted)
            os.close(r)
            now = _program_cpu()
            if len(self.ckpts) == CKPT_RING:
                # the oldest goes once the next is CKPT_BEFORE back: at the end
                # one is that far back even when checkpoints come faster
                # (else the one before this goes)
                far = len(self.ckpts) < 2 or _cpu_between(self.ckpts[1][2], now) >= CKPT_BEFORE
                self.drop_checkpoint(self.ckpts.pop(0 if far else -1))
            self.ckpts.append((pid, w, now))
            # the next one comes after that much of the program's own CPU,
            # not of this handler's and the fork's
            signal.setitimer(signal.ITIMER_VIRTUAL, self.ckpt_cpu, self.ckpt_cpu)
        finally:
            self.guard[0] = g0
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def checkpoint_wait(self, r, frame, stdin_at):
        """A checkpoint (the at-fork hook has silenced it: forked): wait,
        blocked in a read (a freeze's SIGSTOP and SIGCONT leave it
        blocked), for the go of resume_checkpoint; then count the events
        to the end (finish: hand_over), forking copies as it goes (the
        first at once): the copy forked last before the tail records it.
        An interrupt meanwhile is kept (pending) until a copy can take it."""
        pending = [False]
        signal.signal(signal.SIGUSR2, lambda signum, f: pending.__setitem__(0, True))
        _own_stdin(stdin_at)
        for ck in self.ckpts:
            os.close(ck[1])
        self.ckpts = []
        self.capture.sink = None
        msg = _read_all(r)
        if not msg:
            self.real_exit(0)
        self.copy_msg = json.loads(msg)
        for f in self.quiet:  # a filtered stretch's: every line counts
            f.f_trace_lines = True
        self.quiet.clear()
        if self.copy_msg.get("interrupt"):
            # interrupt_from_checkpoint: this checkpoint records on at once
            self.switched = [False]
            self.record_tail(frame, self.copy_msg, "", None)
            return
        self.copies = []  # [(pid, write end of its pipe, count when forked)], oldest first
        self.tgt = [1 << 62]
        self.switched = [False]
        head = self.fork_copy()
        if head is not None:  # the first copy: it counts from here too
            if not self.copy_resumed(head, frame):
                self.count_events(frame)
            return
        self.ckpt_next = True
        self.count_events(frame)
        signal.signal(signal.SIGUSR2, lambda signum, f: self.hand_over({"interrupt": True}))
        signal.signal(signal.SIGVTALRM, self.on_copy_timer)
        signal.setitimer(signal.ITIMER_VIRTUAL, CKPT_COPY_CPU, CKPT_COPY_CPU)
        if pending[0]:
            self.hand_over({"interrupt": True})

    def fork_copy(self):
        """Fork a copy of the counting checkpoint, kept with its count (the
        first, and the newest CKPT_COPIES). Returns None here; in the copy,
        once hand_over chose it, what it was sent."""
        r, w = os.pipe()
        at = _stdin_offset()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
        if pid == 0:
            os.close(w)
            for c in self.copies:
                os.close(c[1])
            self.copies = []
            self.ckpt_next = None
            pending = self.copy_pending = [False]
            signal.signal(signal.SIGUSR2, lambda signum, f: pending.__setitem__(0, True))
            _own_stdin(at)
            head = _read_all(r)
            if not head:
                self.real_exit(0)
            head = json.loads(head)
            self.tgt[0] = int(head.get("target") or 0)
            return head
        os.close(r)
        self.copies.append((pid, w, self.counted[0]))
        if len(self.copies) > CKPT_COPIES + 1:
            self.drop_checkpoint(self.copies.pop(1))
        return None

    def copy_resumed(self, head, frame):
        """A copy chosen by hand_over: interrupts reach its recording; True
        when it records at once (an interrupt), pausing at the next event."""
        signal.signal(signal.SIGUSR2, lambda signum, f: self.record_tail(f, self.copy_msg, None, None))
        if head.get("interrupt") or self.copy_pending[0]:
            self.record_tail(frame, self.copy_msg, None, None)
            return True
        return False

    def on_copy_timer(self, signum, frame):
        """Every CKPT_COPY_CPU of the counting: a copy. Tracing is off
        between the first line and the return, which both count."""
        sys.settrace(None)
        g0 = self.guard[0]
        self.guard[0] = False  # the audit hook refuses the program's forks
        try:
            head = self.fork_copy()
        except BaseException:
            head = None  # fewer copies: the counting goes on
        self.guard[0] = g0
        if head is not None and self.copy_resumed(head, frame):
            return
        signal.setitimer(signal.ITIMER_VIRTUAL, CKPT_COPY_CPU, CKPT_COPY_CPU)  # the counting's CPU, not the fork's
        sys.settrace(self.count_fn)

    def hand_over(self, head):
        """The counting checkpoint is done (its program ended, or an
        interrupt came): the newest copy forked before the tail's first
        event (or, after an interrupt, the newest) records; the others are
        dropped; it waits for that one, passing on interrupts, and exits."""
        sys.settrace(None)
        signal.setitimer(signal.ITIMER_VIRTUAL, 0, 0)
        self.ckpt_next = None
        self.guard[0] = False
        copies = self.copies
        if not copies:
            # none could be forked: no tail (ndb replays; at a pause the run
            # it came from waits there again)
            self.real_exit(ABANDONED if self.copy_msg.get("pause") else 0)
        k = len(copies) - 1
        if "count" in head:
            # the tail fits the run's event limit, with room for the stack
            tail = min(CKPT_TAIL, self.max_events - self.counter[0] - 1000)
            target = int(head["count"]) - max(tail, 0)
            head = {"target": target}
            k = 0
            for i, c in enumerate(copies):
                if c[2] <= target:
                    k = i
        pid, w, _ = copies.pop(k)
        for c in copies:
            self.drop_checkpoint(c)
        signal.signal(signal.SIGUSR2, lambda signum, f: os.kill(pid, signal.SIGUSR2))
        _write_all(w, json.dumps(head).encode())
        os.close(w)
        self.real_exit(max(_wait_child(pid), 0))  # ABANDONED passed on

    def count_events(self, frame):
        """Trace with a function that only counts (every call of it, in
        every frame: the same in the checkpoint and its copies); a copy
        given a target records from the first program event but a call at
        or past it (record_tail). Set last (sys.settrace, then only C
        calls): the handler's own calls are not counted."""
        n = self.counted
        n[0] = 0
        is_prog = self.is_program_frame
        tgt = self.tgt
        msg = self.copy_msg

        def count(f, event, arg):
            k = n[0] + 1
            n[0] = k
            if k < tgt[0] or event == "call" or not is_prog(f):
                return count
            return self.record_tail(f, msg, event, arg)

        is_cand = self.is_candidate
        lines, starts, steps = self.filt_lines[0], self.filt_lines[1], self.filt_lines[2]

        def count_to_pause(f, event, arg):
            """count, in a checkpoint of a filtered stretch: its end is the
            first event the stretch paused at (hand_over, as at an end)."""
            k = n[0] + 1
            n[0] = k
            if event == "line" and k < tgt[0] and not steps and f.f_lineno not in lines and \
                    f.f_code.co_firstlineno not in starts:
                return count_to_pause  # is_candidate's answer, at less cost
            if event == "call" or not is_prog(f):
                return count_to_pause
            if k >= tgt[0]:
                return self.record_tail(f, msg, event, arg)
            if is_cand(f, event, arg):
                sys.settrace(None)
                self.hand_over({"count": k})  # no return
            return count_to_pause

        if msg.get("pause"):
            count = count_to_pause
        self.count_fn = count
        f = frame
        while f is not None:
            f.f_trace = count
            f = f.f_back
        sys.settrace(count)

    def is_candidate(self, f, event, arg):
        """Whether the filtered stretch's trace functions (_make_filtered_trace)
        pause at this event of program frame f: a line at a breakpoint line
        or in a function breakpoint's code, a line from steps_from on or an
        exception of a frame pdb steps in, the return of a frame in Frames,
        a StopIteration or GeneratorExit with gen_exits."""
        fl = self.filt_lines
        st = self.frames.get(f)
        if event == "line":
            line = f.f_lineno
            return line in fl[0] or f.f_code.co_firstlineno in fl[1] or \
                (st is not None and st[0] in fl[2] and line >= fl[3])
        if event == "exception":
            return (st is not None and st[0] in fl[2]) or (fl[4] and issubclass(arg[0], _GEN_EXITS))
        return event == "return" and st is not None and st[0] in self.filt_frames

    def record_tail(self, f, msg, event, arg):
        """The recording copy: from frame f on, the run is recorded as after
        an interrupt (reattach: the stack, then the events) to its end.
        event, arg: the event being counted at f (None: an interrupt; it
        pauses at the next event)."""
        sw = getattr(self, "switched", None)
        if sw is not None and sw[0] and not self.closed:
            if event is None:
                self.pz[5] = True  # already recording: an interrupt
            return None
        if sw is not None:
            sw[0] = True
        sys.settrace(None)
        self.closed = False
        self.flushing = False
        del self.out[:]
        self.capture.sink = self.sink
        shown = msg.get("shown")
        if shown is not None:  # the run it came from showed that much
            self.capture.sink = self.sink_past(int(shown))
            self.shown_chars = int(shown)
        signal.signal(signal.SIGUSR2, self.on_interrupt)
        self.set_filter(msg)
        self.until_cand[0] = bool(msg.get("pause"))
        signal.setitimer(signal.ITIMER_VIRTUAL, 0, 0)
        signal.signal(signal.SIGVTALRM, signal.SIG_DFL)  # the copies' timer: checkpoints may use it
        self.untraced = True
        self.pz[5] = event is None
        self.reattach(f)
        if msg.get("interrupt"):
            self.int_pause = True  # its budget's pause is the interrupt's
            return None
        if event is None:
            return None
        return self.local_trace(f, event, arg)

    def end_wait(self):
        """After the exit record of a run with checkpoints: wait for ndb to
        resume the newest (resume_checkpoint) or to stop the run."""
        if not self.ckpts or not self.live_on:
            return
        self.out.append(("p", "ended"))
        self.flush()
        while True:
            msg = self.read_ctl()
            if msg.get("op") == "checkpoint":
                self.resume_checkpoint(msg)
            self.out.append(("r", False, "the program has ended", None))
            self.flush()

    def resume_checkpoint(self, msg, back=False):
        """Hand the pipes to the newest checkpoint: the others are dropped,
        it gets msg (its filter), interrupts are passed on to it, and this
        process (PID 1: the namespace lives while it does) waits for it.
        back: then returns to the pause it was called from (a filtered
        stretch's: ndb gave the recorded way up, "abandon")."""
        g0 = self.guard[0]
        self.guard[0] = False
        self.closed = True
        self.freeze(False)  # a post-mortem pause stopped them
        ring = self.ckpts
        k = 0
        for i, ck in enumerate(ring):
            if self.end_cpu is not None and _cpu_between(ck[2], self.end_cpu) >= CKPT_BEFORE:
                k = i
        pid, w, _ = ring.pop(k)
        self.checkpoints_drop()
        signal.signal(signal.SIGUSR2, lambda signum, f: os.kill(pid, signal.SIGUSR2))
        _write_all(w, json.dumps(msg).encode())
        os.close(w)
        if _wait_child(pid) != ABANDONED or not back:
            self.real_exit(0)  # the copy ran on and ended: so does the run
        signal.signal(signal.SIGUSR2, self.on_interrupt)
        self.closed = False
        self.guard[0] = g0

    def call_record(self, st, f, line, untraced=0):
        """A call record for frame f, which is past its call: its locals
        are its arguments (as at a call event: pdb's `a` reads them), the
        next record of the frame sends all of them again. untraced: its
        direct caller is not a program frame (as a call record says)."""
        code = f.f_code
        n = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x4) + bool(code.co_flags & 0x8)
        d = f.f_locals
        keys = [k for k in code.co_varnames[:n] if k in d]
        changes = []
        for i, k in enumerate(keys):
            changes.append(i)
            changes.append(brepr(d[k], self.repr_limit))
        if line != code.co_firstlineno:
            self.out.append((0, line, st[0], st[1], changes, keys, code.co_name, int(st[7]), untraced, code.co_firstlineno))
        else:
            self.out.append((0, line, st[0], st[1], changes, keys, code.co_name, int(st[7]), untraced))
        st[2] = None  # unknown: the next delta is a whole one
        st[11] = None
        st[6] = 0

    def untraced_unwind(self, e):
        """The uncaught exception's way out of an untraced stretch, as a
        traced run records it (post-mortem's frames: ndb's exceptionChain):
        each program frame of the traceback gets a call record, outermost
        first, then an exception and a return record, innermost first."""
        chain = []  # (frame, line), outermost first
        tb = e.__traceback__
        while tb is not None:
            f = tb.tb_frame
            if self.is_program_frame(f):
                chain.append((f, tb.tb_lineno))
            tb = tb.tb_next
        self.frames.clear()
        r = brepr(e, self.repr_limit)
        append = self.out.append
        counter = self.counter
        sts = []
        for depth, (f, line) in enumerate(chain):
            counter[1] += 1
            st = _frame_state(counter[1], depth, f.f_code)
            self.call_record(st, f, line)
            sts.append(st)
        for (f, line), st in reversed(list(zip(chain, sts))):
            for ev, arg in ((3, r), (2, "None")):
                changes = self.locals_delta(st, f)
                if st[11] is None:
                    append((ev, line, st[0], st[1], arg, changes))
                else:
                    append((ev, line, st[0], st[1], arg, changes, st[11]))
                    st[11] = None

    def untraced_end(self):
        """The normal end of an untraced stretch: the outermost program
        frame's call and return records (its line when it returned, its
        locals), as untraced_unwind records an uncaught exception's frames,
        so the end shows the last line run."""
        f = self.untraced_base
        if f is None:
            return
        self.counter[1] += 1
        st = _frame_state(self.counter[1], 0, f.f_code)
        line = f.f_lineno
        self.call_record(st, f, line)
        changes = self.locals_delta(st, f)
        if st[11] is None:
            self.out.append((2, line, st[0], st[1], "None", changes))
        else:
            self.out.append((2, line, st[0], st[1], "None", changes, st[11]))


# ---- the run

class _Run(_RunOutput, _RunPauses, _RunResumes):
    """One program's run in the child: its state, which its parts by job
    (_RunOutput, _RunPauses, _RunResumes) share, and its start and end.
    The one-item lists (guard, batch, filtered) and the containers are
    shared with the trace functions, which hold them in closure cells; the
    trace functions are attributes once make_trace_functions made them."""

    def __init__(self, req, wfd, cfd, ns):
        lim = req["limits"]
        self.req = req
        self.ns = ns
        self.live_on = cfd is not None
        self.repr_limit = int(lim.get("repr") or 1000)
        self.max_events = int(lim.get("events") or 100000)
        # the audit hook refuses things only while the program runs; [1]:
        # the program wrote or changed a file (checkpoints cannot replay that)
        self.guard = [False, False]
        self.threads_started = [False]  # the program started a thread (install_guards)
        self.frames = {}  # program frame -> its recorder state (_frame_state)
        self.counter = [0, 0]  # events, frame numbers
        self.init_output(wfd, lim)
        sys.stdout = self.capture
        sys.stderr = self.err_capture
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.argv = list(req.get("argv") or [PROGRAM_FILE])
        folder = req.get("dir") or ""
        if folder:
            # as for `python FILE`: the script's folder first, no "" (the -c default)
            if sys.path and sys.path[0] == "":
                sys.path[0] = folder
            else:
                sys.path.insert(0, folder)
        self.init_pauses(cfd)
        self.init_resumes()

    def load(self, context_error):
        """Compile the program (and its --call entry) and make its
        __main__. False when it cannot start: the exit record is sent."""
        req = self.req
        source = self.source = req["source"]
        call = self.call = req.get("call") or ""
        fname = self.fname = req.get("file") or PROGRAM_FILE
        try:
            if call:
                # The entry must be one expression: checked alone, its error
                # names the call, not a line of the def main() wrapper.
                compile(call, CALL_FILE, "eval", dont_inherit=True)
            self.code = compile(source, fname, "exec", dont_inherit=True)
            self.wrapped = None
            head = source.rfind(WRAPPER_HEAD) if call else -1
            if head >= 0 and "main" in source[:head]:
                # The wrapper is named main (SPEC's text format): a program that
                # defines its own main would have it replaced, and a call
                # main() would call the wrapper itself, forever. Run the
                # program's body and the wrapper's def apart (the wrapper at its
                # own line numbers), so that the name stays the program's.
                self.wrapped = (compile(source[:head], fname, "exec", dont_inherit=True),
                                compile("\n" * source.count("\n", 0, head) + source[head:], fname, "exec",
                                        dont_inherit=True))
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as e:
            self.finish("error", brepr(e, self.repr_limit), "syntax error")
            return False
        if context_error:
            self.finish("error", "", context_error[:MESSAGE_CHARS])
            return False
        module = types.ModuleType("__main__")
        self.g = module.__dict__
        self.g["__builtins__"] = builtins
        self.g["__file__"] = fname
        sys.modules["__main__"] = module
        return True

    def make_trace_functions(self):
        self.locals_delta = _make_values(self)
        self.local_trace, self.global_trace = _make_recorder(self, self.locals_delta)
        self.filtered_trace, self.filtered_global = _make_filtered_trace(self)
        self.cur_local = self.local_trace

    def install_guards(self, writable_roots):
        if os.environ.get("NDB_NO_AUDIT") != "1":  # tests: the kernel sandbox alone
            sys.addaudithook(_make_audit_hook(writable_roots, self.guard))
        # a thread started once: a checkpoint taken before it, resumed,
        # starts it again and forks its copies while it runs (they lose it):
        # no audit event says so, the start function does
        started = self.threads_started
        start = _thread.start_new_thread

        def start_new_thread(function, args, kwargs=None):
            started[0] = True
            return start(function, args, kwargs or {})
        _thread.start_new_thread = _thread.start_new = start_new_thread
        if "threading" in sys.modules:
            sys.modules["threading"]._start_new_thread = start_new_thread
        os._exit = self.guarded_exit
        try:
            import posix
            posix._exit = self.guarded_exit
        except ImportError:
            pass

    def run_main(self):
        g = self.g
        if self.call and self.wrapped is not None:
            exec(self.wrapped[0], g)  # define the program's names; not traced
            own = g.get("main", _MISSING)
            exec(self.wrapped[1], g)
            entry = g.get("main")
            if own is not _MISSING:
                g["main"] = own  # the wrapper's main() is the program's
            self.guard_trace()
            return entry()
        if self.call:
            exec(self.code, g)  # define the program's names; not traced
            entry = g.get("main")
            self.guard_trace()
            return entry()
        self.guard_trace()
        exec(self.code, g)

    def guard_trace(self):
        self.guard[0] = False
        sys.settrace(self.global_trace)
        self.guard[0] = True

    def stop_tracing(self):
        self.guard[0] = False
        tf = sys.gettrace()
        if tf is not self.global_trace and tf is not self.filtered_global and not self.untraced:
            self.trace_lost = True
        sys.settrace(None)
        # the program's code has ended: what follows (a traceback's imports)
        # is not the run's to record again (CKPT_BEFORE)
        self.checkpoints_stop()
        self.end_cpu = _program_cpu()

    def exited(self, e):
        """The program raised SystemExit: its exit as Python reports it."""
        c = e.code
        if c is None or c == 0:
            self.finish("normal", "", "sys.exit", 0)
        elif isinstance(c, int):
            self.finish("error", brepr(e, self.repr_limit), "sys.exit", c)
        else:
            self.finish("error", brepr(e, self.repr_limit), "sys.exit", 1)

    def uncaught(self, e):
        """An uncaught exception ended the program: its traceback and exit
        records. Returns the program's frames of the traceback, innermost
        first: pdb's post-mortem keeps them for p and !"""
        # Python's traceback from the first program frame on.
        pm, first = [], None
        text = ""
        fname = self.fname
        try:
            import linecache, traceback  # only on this path (see evaluate)
            tb = e.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == fname:
                    first = first or tb
                    pm.insert(0, tb.tb_frame)
                tb = tb.tb_next
            linecache.cache[fname] = (len(self.source), None, self.source.splitlines(True), fname)
            text = "".join(traceback.format_exception(type(e), e, first))
        except BaseException:
            pass
        if self.untraced:
            try:
                self.untraced_unwind(e)
            except BaseException:
                pass  # the exit and traceback still come; the frames do not
        self.out.append(("t", text[:EVAL_CHARS]))
        self.finish("error", brepr(e, self.repr_limit), "")
        return pm


# ---- the trace functions (the hot path)

def _frame_state(num, depth, code):
    """The recorder's state of a program frame: [num, depth, keys, objs,
    reprs, probes, last event, gen, hide dunders, raw keys, visible
    indexes, new key list to send, code name]. global_trace builds the
    same list inline (the hot path). A probe says how to tell, cheaply and
    exactly, that a value's repr has not changed:
      True: the object is immutable, identity is enough;
      (0, nitems, cut, length, item-pointer bytes, items, word of ob_item,
        ob_item, view of the item pointers): a list whose first items (all
        immutable) are the same objects, read through the memory view (see
        _probe_memory); cut lists need only that prefix. A moved item array
        (the list grew) counts as a change;
      (1, qualname): a function, same object and same __qualname__;
      (2, ...): the same list check without the memory view (slower);
      None: recompute the repr every event."""
    return [num, depth, None, None, None, None, 0,
            bool(code.co_flags & GEN_FLAGS), not (code.co_flags & 0x2), None, None, None, code.co_name]


def _make_values(run):
    """The recorder's values: locals_delta(st, frame), the changed locals
    of a frame since its last event, with the probes that spare most reprs
    (see _frame_state). Returns locals_delta."""
    repr_limit = run.repr_limit
    _type = type
    _len = len
    _hash = object.__hash__  # not id(): id() is audited, and the hook would run at each event
    _repr = repr
    frozen_atoms = FROZEN_ATOMS
    eq_safe = EQ_SAFE
    mem = _MEMORY
    list_m = repr_limit // 3 + 2  # items that can show in repr_limit characters
    cut_marker = CUT_MARKER

    def value(v):
        t = _type(v)
        if t in frozen_atoms:
            return brepr(v, repr_limit), True
        if t is list:
            text = brepr(v, repr_limit)
            ln = _len(v)
            cut = ln > list_m
            s = v[:list_m] if cut else v[:]
            ts = set(map(_type, s))
            if mem is not None:
                if ts <= frozen_atoms:
                    n = _len(s)
                    hw = (_hash(v) << 1) + 3  # word holding ob_item (see _probe_memory)
                    item_ptr = mem[hw]
                    view = mem[item_ptr >> 3:(item_ptr >> 3) + n]
                    return text, (0, n, cut, ln, view.tobytes(), s, hw, item_ptr, view)
            elif ts <= eq_safe:
                return text, (2, _len(s), cut, ln, s, list(map(_type, s)))
            return text, None
        if t is tuple or t is frozenset:
            return brepr(v, repr_limit), (True if _is_frozen(v) else None)
        if t is FunctionType:
            return brepr(v, repr_limit), (1, v.__qualname__)
        return brepr(v, repr_limit), None

    def same_list(v, p):
        """The slow exact check of probe tag 2 (no memory view)."""
        ln = _len(v)
        if (ln <= p[1]) if p[2] else (ln != p[3]):
            return False
        s = v[:p[1]]
        return list(map(_type, s)) == p[5] and s == p[4]

    def locals_delta(st, frame):
        """Changed locals of frame since its last event, as [index, repr, ...],
        or None. A new key list is left in st[11] for the record."""
        d = frame.f_locals
        if st[8]:  # module or class body: hide the interpreter's dunder entries
            raw = tuple(d)
            if raw != st[9]:
                st[9] = raw
                st[10] = [i for i, k in enumerate(raw) if not (k[:2] == "__" and k[-2:] == "__")]
            idx = st[10]
            allv = list(d.values())
            vals = [allv[i] for i in idx]
            keys = tuple([raw[i] for i in idx])
        else:
            keys = tuple(d)
            vals = d.values()
        if keys != st[2]:
            st[2] = keys
            st[11] = list(keys)
            objs = []
            reprs = []
            probes = []
            changes = []
            i = 0
            for v in vals:
                r, p = value(v)
                objs.append(v)
                reprs.append(r)
                probes.append(p)
                changes.append(i)
                changes.append(r)
                i += 1
            st[3] = objs
            st[4] = reprs
            st[5] = probes
            return changes
        objs = st[3]
        probes = st[5]
        changes = None
        i = -1
        for v in vals:
            i += 1
            if v is objs[i]:
                p = probes[i]
                if p is True:
                    continue
                if p is not None:
                    tag = p[0]
                    if tag == 0:
                        ln = _len(v)
                        # same length class, same item array, same item pointers
                        if ((ln > list_m) if p[2] else (ln == p[3])) and \
                                mem[p[6]] == p[7] and p[8].tobytes() == p[4]:
                            continue
                    elif tag == 1:
                        if v.__qualname__ is p[1]:
                            continue
                    elif same_list(v, p):
                        continue
                r, p = value(v)
            elif _type(v) is int:  # the common case of a changed counter
                try:
                    r = _repr(v)
                except ValueError:
                    r = brepr(v, repr_limit)
                if _len(r) > repr_limit:
                    r = r[:repr_limit] + cut_marker
                p = True
            else:
                r, p = value(v)
            objs[i] = v
            probes[i] = p
            reprs = st[4]
            if r != reprs[i]:
                reprs[i] = r
                if changes is None:
                    changes = [i, r]
                else:
                    changes.append(i)
                    changes.append(r)
        return changes

    return locals_delta


def _make_recorder(run, locals_delta):
    """The recording trace functions: global_trace (sys.settrace's, at a
    call) and local_trace (a frame's). Returns (local_trace, global_trace)."""
    out = run.out
    append = out.append
    batch = run.batch
    frames = run.frames
    counter = run.counter
    pz = run.pz
    filtered = run.filtered
    g = run.g
    fname_prog = run.fname
    repr_limit = run.repr_limit
    max_events = run.max_events
    live_on = run.live_on
    flush = run.flush
    flush_and_exit = run.flush_and_exit
    recorder_failed = run.recorder_failed
    pause = run.pause
    caller_frame = run.caller_frame
    uc = run.until_cand
    _len = len

    def candidate(st, event, frame):
        if pz[5] or pz[6] or st[1] <= pz[0] or st[0] in pz[1] or counter[0] >= pz[7]:
            return True
        if event == "line":
            return frame.f_lineno in pz[2] or st[12] in pz[3]
        return pz[4] and event == "exception"

    def local_trace(frame, event, arg):
        try:
            st = frames.get(frame)
            if st is None:  # a frame entered before tracing began
                return None
            n = counter[0] + 1
            counter[0] = n
            if n > max_events:
                flush_and_exit("never", "", "events")
            if event == "line":
                changes = locals_delta(st, frame)
                if st[11] is None:
                    append((1, frame.f_lineno, st[0], st[1], changes))
                else:
                    append((1, frame.f_lineno, st[0], st[1], changes, st[11]))
                    st[11] = None
                st[6] = 1
            elif event == "return":
                changes = locals_delta(st, frame)
                if st[11] is None:
                    append((2, frame.f_lineno, st[0], st[1], brepr(arg, repr_limit), changes))
                else:
                    append((2, frame.f_lineno, st[0], st[1], brepr(arg, repr_limit), changes, st[11]))
                    st[11] = None
                if not st[7] or st[6] == 3 or frame.f_code.co_code[frame.f_lasti] != YIELD_VALUE:
                    del frames[frame]  # final return: the frame is gone
                st[6] = 2
            elif event == "exception":
                changes = locals_delta(st, frame)
                r = brepr(arg[1] if arg[1] is not None else arg[0], repr_limit)
                if st[11] is None:
                    append((3, frame.f_lineno, st[0], st[1], r, changes))
                else:
                    append((3, frame.f_lineno, st[0], st[1], r, changes, st[11]))
                    st[11] = None
                st[6] = 3
            if uc[0] and run.is_candidate(frame, event, arg):
                uc[0] = False  # a filtered stretch's pause, recorded again
                pz[6] = True
                append(("h", run.capture.digest()))
            if live_on and candidate(st, event, frame):
                pause("interrupt" if pz[5] else "", lambda level: caller_frame(frame, level), event, st, frame)
                return run.cur_local  # the go may have changed the mode
            elif _len(out) >= batch[0]:
                flush()
            return local_trace
        except BaseException as e:
            recorder_failed(e)

    def global_trace(frame, event, arg):
        try:
            if frame.f_globals is not g:  # cheap first filter: f_code is audited
                return None
            if filtered[0]:  # the program restored a trace function it saved (doctest)
                return run.filtered_global(frame, event, arg)
            code = frame.f_code
            if code.co_filename != fname_prog:
                return None
            n = counter[0] + 1
            counter[0] = n
            if n > max_events:
                flush_and_exit("never", "", "events")
            # depth: one more than the nearest program frame below
            depth = 0
            f = frame.f_back
            untraced = 0
            while f is not None:
                pst = frames.get(f)  # only program frames are in frames
                if pst is not None:
                    depth = pst[1] + 1
                    break
                untraced = 1  # the direct caller is not a program frame
                f = f.f_back
            if depth == 0:
                untraced = 0
            st = frames.get(frame)
            new = st is None
            if new:
                counter[1] += 1
                # _frame_state, inline: a call is on the hot path
                st = [counter[1], depth, None, None, None, None, 0,
                      bool(code.co_flags & GEN_FLAGS), not (code.co_flags & 0x2), None, None, None, code.co_name]
                frames[frame] = st
            else:
                st[1] = depth
            changes = locals_delta(st, frame)
            line = frame.f_lineno
            if new and line != code.co_firstlineno:
                # a generator resumed that the tracer had not seen (started
                # in an unrecorded stretch): pdb places a function
                # breakpoint by co_firstlineno
                append((0, line, st[0], depth, changes, st[11], code.co_name, int(st[7]), untraced, code.co_firstlineno))
            else:
                append((0, line, st[0], depth, changes, st[11], code.co_name, int(st[7]), untraced))
            st[11] = None
            st[6] = 0
            if live_on and candidate(st, "call", frame):
                pause("interrupt" if pz[5] else "", lambda level: caller_frame(frame, level), "call", st, frame)
                return run.cur_local
            elif _len(out) >= batch[0]:
                flush()
            return local_trace
        except BaseException as e:
            recorder_failed(e)

    return local_trace, global_trace


def _make_filtered_trace(run):
    """The trace functions of a filtered stretch (see _Run.go_filtered):
    filtered_trace(frame, code), the local trace a program frame gets, and
    filtered_global, sys.settrace's. Returns (filtered_trace, filtered_global)."""
    frames = run.frames
    pz = run.pz
    filtered = run.filtered
    filt_lines = run.filt_lines
    may_hit_cache = run.may_hit_cache
    excepted = run.excepted
    quiet = run.quiet
    g = run.g
    fname_prog = run.fname
    local_trace = run.local_trace
    global_trace = run.global_trace
    recorder_failed = run.recorder_failed

    def filtered_trace(frame, code):
        """The local trace of a program frame in a filtered stretch: the
        lines and exceptions of a frame pdb steps in, every line of code
        with a function breakpoint, the breakpoint lines of code that has
        some, the return of a frame ndb knows; else None."""
        if filt_lines[2]:
            st = frames.get(frame)
            if st is not None and st[0] in filt_lines[2]:
                return filtered_step
        if code.co_firstlineno in filt_lines[1]:
            return filtered_every
        h = may_hit_cache.get(code)
        if h is None:
            lines = filt_lines[0]
            h = may_hit_cache[code] = any(ln in lines for _, _, ln in code.co_lines())
        if h:
            return filtered_local
        if frame in frames:
            frame.f_trace_lines = False  # only its return matters
            quiet.add(frame)
            return filtered_local
        if filt_lines[4]:
            frame.f_trace_lines = False  # only its StopIteration, GeneratorExit
            quiet.add(frame)
            return filtered_gen_exit
        return None

    def filtered_global(frame, event, arg):
        try:
            if frame.f_globals is not g:
                return None
            code = frame.f_code
            if code.co_filename != fname_prog:
                return None
            if not filtered[0]:  # an interrupt reattached meanwhile
                return global_trace(frame, event, arg)
            return filtered_trace(frame, code)
        except BaseException as e:
            recorder_failed(e)

    def filtered_local(frame, event, arg):
        try:
            if not filtered[0]:
                return local_trace(frame, event, arg)
            if event == "line":
                if frame.f_lineno in filt_lines[0]:
                    return filtered_stop(frame, event, arg)
                if excepted:
                    excepted.discard(frame)
                return filtered_local
            return filtered_other(frame, event, arg, filtered_local)
        except BaseException as e:
            recorder_failed(e)

    def filtered_gen_exit(frame, event, arg):
        """A frame ndb does not know, while a generator is stepped over:
        its StopIteration and GeneratorExit may stop (bdb's stop in any
        frame then); at its return (or yield) its lines are on again."""
        try:
            if not filtered[0]:
                return local_trace(frame, event, arg)
            if event == "return":
                frame.f_trace_lines = True
                quiet.discard(frame)
            return filtered_other(frame, event, arg, filtered_gen_exit)  # its exceptions
        except BaseException as e:
            recorder_failed(e)

    def filtered_every(frame, event, arg):
        try:
            if not filtered[0]:
                return local_trace(frame, event, arg)
            if event == "line":
                return filtered_stop(frame, event, arg)
            return filtered_other(frame, event, arg, filtered_every)
        except BaseException as e:
            recorder_failed(e)

    def filtered_step(frame, event, arg):
        """A frame pdb steps in (stop_here's: a next's, an until's): its
        line events from steps_from on and its exceptions may stop."""
        try:
            if not filtered[0]:
                return local_trace(frame, event, arg)
            if event == "line":
                line = frame.f_lineno
                if line >= filt_lines[3] or line in filt_lines[0] or frame.f_code.co_firstlineno in filt_lines[1]:
                    return filtered_stop(frame, event, arg)
                if excepted:
                    excepted.discard(frame)
                return filtered_step
            if event == "exception":
                return filtered_stop(frame, event, arg)
            return filtered_other(frame, event, arg, filtered_step)
        except BaseException as e:
            recorder_failed(e)

    def filtered_other(frame, event, arg, again):
        """A filtered stretch's return and exception events: the frames
        ndb knows are forgotten at their end, as local_trace does, and
        their returns in pz[1] are stops (a teardown begins)."""
        if event == "return":
            st = frames.get(frame)
            if st is not None:
                if st[0] in pz[1]:
                    return filtered_stop(frame, event, arg)
                # as local_trace: a generator's yield keeps the frame
                if not st[7] or frame in excepted or frame.f_code.co_code[frame.f_lasti] != YIELD_VALUE:
                    del frames[frame]
                    if frame in quiet:
                        # a generator taken for ended (a quiet frame shows
                        # no line that would clear excepted) may resume:
                        # its lines are a breakpoint's again
                        frame.f_trace_lines = True
                        quiet.discard(frame)
                excepted.discard(frame)
        elif event == "exception":
            if filt_lines[4] and issubclass(arg[0], _GEN_EXITS):
                return filtered_stop(frame, event, arg)
            if frame in frames:
                excepted.add(frame)
        return again

    def filtered_stop(frame, event, arg):
        """A filtered stretch reached an event ndb may stop at: record the
        stack (as reattach does after an interrupt), then the event, and
        pause there."""
        if run.untraced:
            run.reattach(frame, True)
            if run.pause_ckpts:
                run.out.append(("k", len(run.ckpts)))
                run.out.append(("h", run.capture.digest()))
        pz[6] = True
        return local_trace(frame, event, arg)

    return filtered_trace, filtered_global


# ---------------------------------------------------------------- parent side

_MEMORY = None  # see _probe_memory


def _probe_memory():
    """Return a memoryview of 8-byte words over the address space, used to read a list's item
    pointers (list probes) without a ctypes call per read: ctypes.string_at
    and the like are audited, and an audit hook runs for each. Only for CPython on 64 bits with
    the classic object layout, which a throwaway child checks first (a wrong
    layout could crash it, never this worker)."""
    if sys.implementation.name != "cpython" or struct.calcsize("P") != 8:
        return None
    if hasattr(sys, "gettotalrefcount"):  # debug build: bigger object header
        return None
    try:
        import sysconfig
        if sysconfig.get_config_var("Py_GIL_DISABLED"):
            return None
        import ctypes
        # 8-byte words: mem[addr >> 3] is the word at addr
        mem = memoryview((ctypes.c_uint64 * (1 << 59)).from_address(0)).cast("B").cast("Q").toreadonly()
    except Exception:
        return None

    def layout_ok():
        # The recorder finds a list's address as object.__hash__(lst) << 4
        # (CPython hashes an object by its 16-byte aligned address rotated by
        # 4 bits), so that it never calls id(), which is audited.
        objs = [object(), "x", 12345, None]
        lst = list(objs)
        if object.__hash__(lst) << 4 != id(lst):
            return False
        a = id(lst) >> 3
        if id(lst) & 15 or mem[a + 1] != id(list) or mem[a + 2] != len(lst):
            return False
        w = mem[a + 3] >> 3
        return mem[w:w + len(objs)].tolist() == [id(o) for o in objs]
    pid = os.fork()
    if pid == 0:
        try:
            ok = layout_ok()
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return mem
    return None

_PYREAD = []  # libc's read called with the GIL held (see _read_holding_gil)


def _prepare_pyread():
    try:
        import ctypes
        f = ctypes.PyDLL(None, use_errno=True).read  # PyDLL: the GIL stays held
        f.restype = ctypes.c_ssize_t
        f.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
        _PYREAD[:] = [f, ctypes]
    except Exception:
        pass


def _read_holding_gil(fd, n):
    """os.read(fd, n), but blocking with the GIL held: while a live run's
    program waits for ndb at a pause, none of its other threads can run
    Python code (they wait for the GIL), so a spinning thread stops."""
    if not _PYREAD:
        return os.read(fd, n)
    f, ctypes = _PYREAD
    buf = ctypes.create_string_buffer(n)
    while True:
        k = f(fd, buf, n)
        if k >= 0:
            return buf.raw[:k]
        if ctypes.get_errno() != 4:  # EINTR: a signal; its handler runs, then read again
            raise OSError(ctypes.get_errno(), "read")


def _send(kind, payload):
    # type, length, CRC-32 of the payload (checked by ndb), payload
    _write_all(1, struct.pack(">cII", kind, len(payload), binascii.crc32(payload)) + payload)


class _Requests:
    """Lines from ndb on fd 0, read with os.read so that the worker can
    also select() on fd 0 while a program runs (a "stop" request)."""

    def __init__(self):
        self.buf = b""
        self.eof = False

    def fill(self):
        data = os.read(0, 1 << 20)
        if not data:
            self.eof = True
        self.buf += data

    def line(self):
        """The next complete line, or None (after fill: read more)."""
        i = self.buf.find(b"\n")
        if i < 0:
            return None
        line, self.buf = self.buf[:i + 1], self.buf[i + 1:]
        return line

    def readline(self):
        while True:
            line = self.line()
            if line is not None:
                return line
            if self.eof:
                return b""
            self.fill()

    def stop_requested(self, nonce, prog=None, cwfd=None, on_input=None):
        """Called when fd 0 is readable during a run: whether ndb asked to
        stop this run. A live run's requests are passed on: an interrupt
        as SIGUSR2 to the program, a request to a paused child on its pipe
        (cwfd). Other lines stay queued."""
        self.fill()
        keep = []
        stop = False
        while True:
            line = self.line()
            if line is None:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if isinstance(msg, dict) and "stop" in msg:
                stop = stop or msg["stop"] == nonce
            elif isinstance(msg, dict) and msg.get("interrupt") == nonce and cwfd is not None:
                try:
                    os.kill(prog, signal.SIGUSR2)
                except OSError:
                    pass
            elif isinstance(msg, dict) and msg.get("live") == nonce and cwfd is not None:
                body = json.dumps(msg.get("msg")).encode()
                try:
                    _write_all(cwfd, struct.pack("<I", len(body)) + body)
                except OSError:
                    pass  # the child is gone: its end of stream follows
            elif isinstance(msg, dict) and isinstance(msg.get("input"), str):  # a run's request has "input": true
                if msg["input"] == nonce and on_input is not None:
                    on_input(msg)
                # else: for a run that has ended
            elif isinstance(msg, dict) and ("interrupt" in msg or "msg" in msg):
                pass  # for a run that has ended
            else:
                keep.append(line)
        self.buf = b"".join(keep) + self.buf
        return stop or self.eof


def _unshare_net(libc):
    """Move this worker (and so every child) into a fresh network namespace with
    no interfaces up: nothing can be reached, not even the host's 127.0.0.1."""
    if libc is None:
        return False
    try:
        return libc.unshare(0x40000000) == 0  # CLONE_NEWNET
    except Exception:
        return False


SCRATCH_BYTES = 128 << 20
NPROC = 1024  # processes + threads a program may have at once (RLIMIT_NPROC)


def _private_scratch(libc, base):
    """Mount a tmpfs of SCRATCH_BYTES on base in a private mount namespace of
    this worker: every run's scratch directory lives in it, so a program
    cannot fill the disk, and its files vanish with the worker. Needs root
    (or user namespaces); without it, scratch stays on the normal disk."""
    if libc is None:
        return False
    try:
        import ctypes
        if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
            return False
        MS_REC, MS_PRIVATE = 0x4000, 0x40000
        # stop mounts from propagating back to the host
        if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            return False
        opts = ("size=%d,mode=0700" % SCRATCH_BYTES).encode()
        return libc.mount(b"tmpfs", os.fsencode(base), b"tmpfs", 0, ctypes.c_char_p(opts)) == 0
    except Exception:
        return False


_PREIMPORT = ["math", "re", "collections", "itertools", "functools", "heapq", "bisect",
              "string", "operator", "copy", "random", "statistics", "fractions", "decimal",
              "datetime", "typing", "cmath", "array", "json", "threading", "io", "ctypes"]


def _drain_after_signal(pid, rfd):
    """Ask a child past its deadline to hand over pending records (SIGUSR1),
    and relay what arrives within a short grace period."""
    try:
        os.kill(pid, signal.SIGUSR1)
    except OSError:
        return
    end = time.monotonic() + 0.1
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        r, _, _ = select.select([rfd], [], [], left)
        if not r:
            return
        data = os.read(rfd, 1 << 20)
        if not data:
            return
        _send(b"D", data)


def _exits_soon(pid, seconds):
    """Whether the child exits (or has exited) within seconds; it is not
    reaped. After the end of its stream a dying child needs a moment (a crash
    takes longer than _exit); one that is still running closed the stream."""
    def exited():
        try:
            return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True
    if exited():
        return True
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            select.select([fd], [], [], seconds)
        finally:
            os.close(fd)
        return exited()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.001)
        if exited():
            return True
    return False


def _big_pipe(fd):
    """Grow a pipe to 1 MiB so a writer rarely waits for a busy reader."""
    try:
        import fcntl
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (OSError, ImportError):
        pass


def _read_exact(fd, n, timeout):
    """n bytes from fd, or fewer when it ends or timeout passes."""
    data = b""
    end = time.monotonic() + timeout
    while len(data) < n:
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            break
        b = os.read(fd, n - len(data))
        if not b:
            break
        data += b
    return data


class _InputFeed:
    """A live run's stdin as ndb sends it: written to the program's pipe
    without blocking the worker (a program that does not read leaves it
    pending, at most INPUT_PENDING bytes; more is dropped), closed at the
    "eof" request once all is written."""

    def __init__(self, fd):
        self.fd = fd
        self.pending = b""
        self.eof = False
        if fd is not None:
            os.set_blocking(fd, False)

    def waiting(self):
        return [self.fd] if self.fd is not None and self.pending else []

    def take(self, msg):
        if self.fd is None:
            return
        try:
            data = binascii.a2b_base64(msg.get("data") or "")
        except (binascii.Error, TypeError, ValueError):
            data = b""
        self.pending = (self.pending + data)[:INPUT_PENDING]
        self.eof = self.eof or bool(msg.get("eof"))
        self.write()

    def write(self):
        while self.fd is not None and self.pending:
            try:
                n = os.write(self.fd, self.pending)
            except BlockingIOError:
                return
            except OSError:  # the program closed its stdin, or ended
                self.pending = b""
                break
            self.pending = self.pending[n:]
        if self.eof and not self.pending:
            self.close()

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _start_program(req, scratch, libc):
    """Fork the program's process. Returns (pid to wait for, pid of the
    program, record fd, status fd, request fd of a live run or None, input
    fd of a live run with "input" or None). With namespaces the first is an
    intermediate process that waits for the program (PID 1 of its own PID
    namespace) and reports its status and CPU time on the status pipe."""
    rfd, wfd = os.pipe()
    _big_pipe(rfd)
    crfd = cwfd = None
    irfd = iwfd = None
    if req.get("live"):
        crfd, cwfd = os.pipe()
        if req.get("input"):
            irfd, iwfd = os.pipe()
    pid = None
    if _CLONE[0] is not None and _PROGRAM_NS[0]:
        try:
            pid = _raw_clone(_NS_FLAGS[0])
        except OSError:
            pid = None  # e.g. EAGAIN: the two-step path below
    if pid is not None:
        if pid == 0:
            st = 70
            try:
                os.close(rfd)
                if cwfd is not None:
                    os.close(cwfd)
                if iwfd is not None:
                    os.close(iwfd)
                _own_maps(libc)
                st = _run_child(req, wfd, scratch, libc, ns=True, cfd=crfd, ifd=irfd)
            except BaseException:
                st = 70
            os._exit(st)
        os.close(wfd)
        if crfd is not None:
            os.close(crfd)
        if irfd is not None:
            os.close(irfd)
        return pid, pid, rfd, None, cwfd, iwfd
    srfd, swfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 70
        try:
            os.close(rfd)
            os.close(srfd)
            if cwfd is not None:
                os.close(cwfd)
            if iwfd is not None:
                os.close(iwfd)  # else the program never sees its input's end
            os.setpgid(0, 0)
            if libc is not None:
                libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            ns = False
            try:
                ns = _enter_namespaces(libc)
            except Exception:
                ns = False
            if not ns:
                os.write(swfd, struct.pack("<i", os.getpid()))
                os.close(swfd)
                status = _run_child(req, wfd, scratch, libc, cfd=crfd, ifd=irfd)
            else:
                gpid = os.fork()
                if gpid == 0:
                    st = 70
                    try:
                        os.close(swfd)
                        st = _run_child(req, wfd, scratch, libc, ns=True, cfd=crfd, ifd=irfd)
                    except BaseException:
                        st = 70
                    os._exit(st)
                os.close(wfd)
                os.write(swfd, struct.pack("<i", gpid))
                _, st, ru = os.wait4(gpid, 0)
                os.write(swfd, struct.pack("<id", st, ru.ru_utime + ru.ru_stime))
                status = 0
        except BaseException:
            status = 70
        os._exit(status)
    os.close(wfd)
    os.close(swfd)
    if crfd is not None:
        os.close(crfd)
    if irfd is not None:
        os.close(irfd)
    head = _read_exact(srfd, 4, 10)
    prog = struct.unpack("<i", head)[0] if len(head) == 4 else pid
    return pid, prog, rfd, srfd, cwfd, iwfd


def _probe_isolation(base, libc):
    """Run the isolation steps once in a throwaway child: which of them
    work here (reported in the hello)."""
    scratch = os.path.join(base, "probe")
    os.mkdir(scratch, 0o700)
    req = {"probe": True, "limits": {}}
    pid, prog, rfd, srfd, _, _ = _start_program(req, scratch, libc)
    data = _read_exact(rfd, 4096, 10)
    os.close(rfd)
    try:
        os.kill(prog, signal.SIGKILL)
    except OSError:
        pass
    os.waitpid(pid, 0)
    if srfd is not None:
        os.close(srfd)
    try:
        os.rmdir(scratch)
    except OSError:
        pass
    try:
        return json.loads(data.decode())
    except ValueError:
        return {}


def _handle(req, base, seq, libc, reqs):
    lim = req["limits"]
    nonce = req.get("nonce", "")
    timeout = float(lim.get("timeout") or 10)
    max_bytes = int(lim.get("trace_bytes") or (512 << 20))
    scratch = os.path.join(base, str(seq))
    os.mkdir(scratch, 0o700)
    start = time.monotonic()
    pid, prog, rfd, srfd, cwfd, iwfd = _start_program(req, scratch, libc)
    feed = _InputFeed(iwfd)
    deadline = start + timeout
    if cwfd is not None:
        deadline = float("inf")  # ndb times a live run, which waits at its pauses
    timed_out = False
    too_big = False
    stopped = False
    relayed = 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                _drain_after_signal(prog, rfd)
                break
            r, w, _ = select.select([rfd, 0], feed.waiting(), [], None if left == float("inf") else left)
            if w:
                feed.write()
            if not r:
                continue
            if 0 in r and reqs.stop_requested(nonce, prog, cwfd, feed.take):
                stopped = True
                break
            if rfd not in r:
                continue
            data = os.read(rfd, 1 << 20)
            if not data:
                break
            relayed += len(data)
            if relayed > max_bytes:
                too_big = True
                break
            _send(b"D", data)
        # End of stream: the child has exited (its write end closes only when
        # it dies) or the program closed that descriptor itself. Either way
        # the program is killed below (with its whole PID namespace); a dead
        # child's status is unaffected.
    finally:
        os.close(rfd)
        if cwfd is not None:
            os.close(cwfd)
        feed.close()
        alive = False
        if not timed_out and not too_big and not stopped:
            alive = not _exits_soon(pid, 0.2)
        for kill in ((os.kill, prog), (os.killpg, pid)):
            try:
                kill[0](kill[1], signal.SIGKILL)
            except OSError:
                pass
        _, status, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
        if srfd is not None:
            rec = _read_exact(srfd, 12, 1)
            if len(rec) == 12:
                status, cpu = struct.unpack("<id", rec)
            elif prog != pid:
                status = 9  # the intermediate was killed first: so was the program
            os.close(srfd)
    end = {"elapsed": time.monotonic() - start, "timeout": timed_out, "too_big": too_big or stopped,
           "killed": alive and not timed_out and not too_big and not stopped,
           "cpu": cpu, "nonce": nonce}
    if os.WIFEXITED(status):
        end["code"] = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        end["signal"] = os.WTERMSIG(status)
    try:
        os.rmdir(scratch)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
    _send(b"E", json.dumps(end).encode())


def main():
    libc = _libc()
    sandbox = _enter_sandbox(libc)
    _set_seccomp(sys.argv[2] if len(sys.argv) > 2 else "")
    # A directory of our own under the one ndb gave us: a restarted worker
    # never meets a dead one's leftovers.
    base = tempfile.mkdtemp(prefix="w", dir=sys.argv[1])
    if sandbox and sys.argv[1] not in _WRITABLE_MOUNTS:
        # the private tmpfs is not at /tmp (a program folder covers /tmp):
        # programs see it read-only too, but for their own scratch
        _WRITABLE_MOUNTS.append(sys.argv[1])
    netns = tmpfs = False
    if not sandbox:
        netns = _unshare_net(libc) if os.environ.get("NDB_NO_NETNS") != "1" else False
        tmpfs = _private_scratch(libc, base) if os.environ.get("NDB_NO_TMPFS") != "1" else False
    else:
        netns = True  # bwrap --unshare-net
    if os.environ.get("NDB_NO_PROGRAM_NS") == "1":
        _PROGRAM_NS[0] = False
    _probe_clone(libc)
    iso = _probe_isolation(base, libc)
    if not iso.get("ns"):
        _PROGRAM_NS[0] = False
    for name in _PREIMPORT:
        try:
            __import__(name)
        except Exception:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _big_pipe(1)
    _prepare_pyread()
    global _MEMORY
    if os.environ.get("NDB_NO_MEMVIEW") != "1":
        _MEMORY = _probe_memory()
    # Forked children share this heap copy-on-write; a collection in a child
    # would touch (and so copy) every page of it. Freeze what exists now.
    gc.collect()
    gc.freeze()
    dumpable = False
    if libc is not None:
        dumpable = libc.prctl(3, 0, 0, 0, 0) == 1  # PR_GET_DUMPABLE
    hello = {"memview": _MEMORY is not None, "python": "%d.%d.%d" % sys.version_info[:3], "implementation": sys.implementation.name,
             "executable": sys.executable, "netns": netns or bool(iso.get("ns")),
             "tmpfs": tmpfs or bool(iso.get("tmpfs")), "pid": os.getpid(),
             "audit": hasattr(sys, "addaudithook"), "platform": sys.platform,
             "sandbox": "bwrap" if sandbox else "none", "uid": os.getuid(),
             "program_ns": bool(iso.get("ns")), "program_proc": bool(iso.get("proc")),
             "seccomp": bool(iso.get("seccomp")), "dumpable": dumpable,
             "fast_clone": _CLONE[0] is not None}
    _send(b"H", json.dumps(hello).encode())
    reqs = _Requests()
    seq = 0
    while True:
        line = reqs.readline()
        if not line:
            return
        seq += 1
        try:
            req = json.loads(line)
        except ValueError as e:
            _send(b"E", json.dumps({"worker_error": "bad request: %s" % e}).encode())
            continue
        if "stop" in req or "interrupt" in req or "msg" in req or isinstance(req.get("input"), str):
            continue  # for a run that has ended
        try:
            _handle(req, base, seq, libc, reqs)
        except Exception as e:
            _send(b"E", json.dumps({"worker_error": "%s: %s" % (type(e).__name__, e), "nonce": req.get("nonce", "")}).encode())


main()
