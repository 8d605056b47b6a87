# ndb eval's CruxEval scorer: one persistent process, one JSON job per line
# on stdin, one JSON result per line on stdout. Each job's program runs in a
# forked child (own process group, address-space and CPU limits, scratch
# working directory, stdout/stderr to /dev/null, an alarm), so a bad program
# can neither hang nor take the scorer down; the parent never runs it.
#
# Sandbox (docs/tracer.md, "Limits and safety"): ndb starts this process
# under bubblewrap (tracer.SandboxCommand) next to ndb_isolate.py (the
# tracer's isolate.py). It drops to the sandbox uid at start, and each job's
# program runs, like a traced program, as PID 1 of new user, PID, mount,
# network, IPC and UTS namespaces, with its own /proc, a fresh tmpfs as
# scratch, the shared mounts read-only, no capabilities, no descriptors but
# its result pipe, no_new_privs and the seccomp filter.
#   python -I -S scorer.py SCRATCH_BASE [SECCOMP_HEX]
#
# Job: {"id", "code", "func", "task": "output"|"input", "input", "output",
#       "pred" (output task: a repr), "args" (input task: [[name, repr], ...])}
# Result: {"id", "pass": bool, "exact": bool, "literal": bool, "answer", "error"}
import ast, json, os, resource, select, signal, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import ndb_isolate as iso  # the tracer's isolate.py, written here by ndb
except ImportError:
    iso = None
LIBC = iso._libc() if iso is not None else None
NAMESPACES = [iso is not None and os.environ.get("NDB_NO_PROGRAM_NS") != "1"]
SCRATCH_BYTES = 64 << 20

TIMEOUT = float(os.environ.get("NDB_SCORER_TIMEOUT", "3"))
MEMORY = int(os.environ.get("NDB_SCORER_MEMORY", str(1 << 30)))


# Besides literals, the value-building calls that reprs themselves use
# (range(1, 5), set(), frozenset({1})), with literal arguments. Anything
# else, f(...) above all, is refused.
CALLS = {"range": range, "set": set, "frozenset": frozenset}


def value_of(node):
    if isinstance(node, ast.Call):
        if (not isinstance(node.func, ast.Name) or node.func.id not in CALLS or node.keywords
                or len(node.args) > 3):
            raise ValueError("only literals, range(), set() and frozenset() are accepted")
        return CALLS[node.func.id](*[value_of(a) for a in node.args])
    if isinstance(node, ast.List):
        return [value_of(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(value_of(e) for e in node.elts)
    if isinstance(node, ast.Set):
        return {value_of(e) for e in node.elts}
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("no ** in a dict")
        return {value_of(k): value_of(v) for k, v in zip(node.keys, node.values)}
    return ast.literal_eval(node)


def literal(text):
    """The value of a Python literal (see CALLS), or raise ValueError."""
    return value_of(ast.parse(text.strip(), mode="eval").body)


def same(a, b):
    # repr equality: 1 == 1.0 == True would call different answers equal.
    try:
        return type(a) is type(b) and repr(a) == repr(b)
    except Exception:
        return False


def signature(code, func):
    tree = ast.parse(code)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func:
            return node.args
    raise ValueError("the code defines no function %r" % func)


def build_input(job):
    """Positional values, keyword values and the answer text from predicted
    call locals, in the order of f's signature."""
    sig = signature(job["code"], job["func"])
    got = {}
    for name, rep in job.get("args") or []:
        got[name] = rep
    pos, kw, texts = [], {}, []
    for a in sig.posonlyargs + sig.args:
        if a.arg not in got:
            raise ValueError("no value for argument %r" % a.arg)
        pos.append(literal(got[a.arg]))
        texts.append(got[a.arg].strip())
    if sig.vararg is not None and sig.vararg.arg in got:
        extra = literal(got[sig.vararg.arg])
        if not isinstance(extra, tuple):
            raise ValueError("*%s is not a tuple" % sig.vararg.arg)
        pos.extend(extra)
        texts.extend(repr(v) for v in extra)
    for a in sig.kwonlyargs:
        if a.arg in got:
            kw[a.arg] = literal(got[a.arg])
            texts.append("%s=%s" % (a.arg, got[a.arg].strip()))
    if sig.kwarg is not None and sig.kwarg.arg in got:
        extra = literal(got[sig.kwarg.arg])
        if not isinstance(extra, dict):
            raise ValueError("**%s is not a dict" % sig.kwarg.arg)
        kw.update(extra)
        texts.extend("%s=%r" % kv for kv in extra.items())
    return pos, kw, ", ".join(texts)


def gold_call(job):
    """Positional and keyword values of the data set's input."""
    call = ast.parse("%s(%s)" % (job["func"], job["input"]), mode="eval").body
    pos = tuple(value_of(a) for a in call.args)
    kw = {k.arg: value_of(k.value) for k in call.keywords}
    return pos, kw


def judge(job):
    """Runs in the scorer itself (no program code): is the answer a
    literal, is it the data set's value; and the values the check needs."""
    res = {"pass": False, "exact": False, "literal": False}
    try:
        if job["task"] == "output":
            value = literal(job["pred"])
            res["answer"] = job["pred"].strip()
        else:
            pos, kw, text = build_input(job)
            value = (pos, kw)
            res["answer"] = text
    except Exception as e:
        res["error"] = "not a literal: %s" % (str(e)[:200] or type(e).__name__)
        return res, None
    res["literal"] = True
    try:
        if job["task"] == "output":
            res["exact"] = same(value, literal(job["output"]))
        else:
            gpos, gkw = gold_call(job)
            res["exact"] = same_input(pos, kw, gpos, gkw)
    except Exception:
        # The data set's input is an expression ('a-b'.split('-')): the
        # child evaluates it next to the program.
        res["gold_in_child"] = True
    return res, value


def same_input(pos, kw, gpos, gkw):
    return same(tuple(pos), tuple(gpos)) and all(k in kw and same(kw[k], v) for k, v in gkw.items())


def check(job, value):
    """Runs in the child: does assert f(INPUT) == OUTPUT hold with the
    answer standing for OUTPUT (output task) or INPUT (input task)?"""
    ns = {"__name__": "__cruxeval__"}
    try:
        exec(compile(job["code"], "<cruxeval>", "exec"), ns)
        f = ns[job["func"]]
        expected = eval(job["output"], ns)
        if job["task"] == "output":
            got = eval("%s(%s)" % (job["func"], job["input"]), ns)
            return {"pass": bool(got == value)}
        pos, kw = value
        out = {}
        if job.get("gold_in_child"):
            gpos, gkw = eval("(lambda *a, **k: (a, k))(%s)" % job["input"], ns)
            out["exact"] = same_input(pos, kw, gpos, gkw)
        out["pass"] = bool(f(*pos, **kw) == expected)
        return out
    except BaseException as e:
        return {"pass": False, "error": "%s: %s" % (type(e).__name__, str(e)[:200])}


def isolate(w, scratch):
    """In the forked child: new namespaces, then a second fork whose child
    (PID 1 of the new PID namespace) returns here to run the check; the
    first child waits for it and exits with its status. Without namespaces
    (unsandboxed, unprivileged) it returns at once."""
    if not NAMESPACES[0]:
        return
    try:
        ok = iso._enter_namespaces(LIBC)
    except Exception:
        ok = False
    if not ok:
        return
    pid = os.fork()
    if pid != 0:
        os.close(w)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)
    os.setsid()
    LIBC.prctl(iso.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    iso._isolate_program(LIBC, scratch, w, SCRATCH_BYTES)
    iso._drop_caps(LIBC)
    if not iso._install_seccomp(LIBC):
        os._exit(71)


def run_child(job, value, scratch):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setpgid(0, 0)
            isolate(w, scratch)
            os.chdir(scratch)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            try:
                resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
            except (ValueError, OSError):
                pass
            cpu = int(TIMEOUT) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
            # PID 1 of a namespace ignores signals whose action is the
            # default: end the check from a handler instead.
            signal.signal(signal.SIGALRM, lambda signum, frame: os._exit(124))
            signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
            out = json.dumps(check(job, value))
            os.write(w, out.encode())
        except BaseException as e:
            try:
                os.write(w, json.dumps({"pass": False, "error": "scorer: %s" % type(e).__name__}).encode())
            except BaseException:
                pass
        os._exit(0)
    os.close(w)
    chunks = []
    size = 0
    deadline = time.monotonic() + TIMEOUT + 3  # a backstop for the alarm
    while size < (1 << 20):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([r], [], [], left)[0]:
            break
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
        size += len(b)
    os.close(r)
    try:
        os.killpg(pid, signal.SIGKILL)  # whatever the program forked
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    try:
        return json.loads(b"".join(chunks).decode())
    except Exception:
        why = "killed by signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status) else "exit %d" % os.WEXITSTATUS(status)
        if (os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGALRM, signal.SIGXCPU)) or \
                (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 124):
            why = "timeout"
        return {"pass": False, "error": "the check died: " + why}


def main():
    if iso is not None:
        iso._enter_sandbox(LIBC)
        iso._set_seccomp(sys.argv[2] if len(sys.argv) > 2 else "")
    base = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    scratch = tempfile.mkdtemp(prefix="job", dir=base)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
            res, value = judge(job)
            if res["literal"]:
                job["gold_in_child"] = res.pop("gold_in_child", False)
                res.update(run_child(job, value, scratch))
            res.pop("gold_in_child", None)
            res["id"] = job.get("id", "")
        except Exception as e:
            res = {"id": "", "pass": False, "exact": False, "literal": False, "error": "scorer: %s" % e}
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
