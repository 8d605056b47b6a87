# ndb's compile-only helper: which lines of a program carry an instruction
# of its compiled code (any code object), and where a line event on each
# line can be followed by the frame's next line event, as the program's
# interpreter compiles it. It never runs the program: compile() only.
# Still, the text is untrusted and the compiler is a large C program, so
# ndb starts this under
# bubblewrap (tracer.SandboxCommand) with the tracer's isolate.py ahead of
# it: it drops to the sandbox uid, limits its memory and CPU time and
# installs the seccomp filter before it reads a byte of the programs.
#   python -I -S -c ISOLATE+THIS SECCOMP_HEX < ["source", ...]
# Output: one JSON list, per source {"lines": sorted lines, "next": {line:
# sorted lines}} ("next" null where this interpreter's dis cannot say), or
# null where it does not compile.
import dis, json, resource, sys

if sys.argv[1:2] != ["--no-sandbox"]:
    _LIBC = _libc()
    _enter_sandbox(_LIBC)
    _set_seccomp(sys.argv[1] if len(sys.argv) > 1 else "")
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
    if _SECCOMP and not _install_seccomp(_LIBC):
        raise SystemExit("ndb compile: cannot install the seccomp filter")


# Jumps with no fall-through, and what ends the frame or raises.
_ONLY_JUMP = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE", "JUMP_NO_INTERRUPT", "JUMP"}
_ENDS = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}


def next_lines(co, out):
    """Adds to out, per line of co, the lines its frame's next line event
    may fire on after one there, as CPython 3.11's tracing decides
    (ceval.c, maybe_call_line_trace): an executed instruction with a line
    fires one when its line differs from the instruction executed before
    it (an instruction without a line counts as differing), or when a jump
    went back to it (not to a SEND). Control follows the jumps and falls
    through; calls, yields and exceptions are other events and leave the
    frame's last instruction as it was, but a re-raise (RERAISE, a bare
    raise) goes to its handler with no exception event."""
    ins = list(dis.get_instructions(co))
    at = {x.offset: k for k, x in enumerate(ins)}
    line = [x.positions.lineno if x.positions and x.positions.lineno else -1 for x in ins]
    table = dis._parse_exception_table(co)

    def succ(k):
        x = ins[k]
        if x.opname == "RERAISE" or x.opname == "RAISE_VARARGS" and x.arg == 0:
            return [at[e.target] for e in table if e.start <= x.offset < e.end][:1]
        if x.opname in _ENDS:
            return []
        out = []
        if x.opcode in dis.hasjrel or x.opcode in dis.hasjabs:
            out.append(at[x.argval])
            if x.opname in _ONLY_JUMP:
                return out
        if k + 1 < len(ins):
            out.append(k + 1)
        return out

    # where an event may fire: after RESUME, where the line changes, at a
    # jump's target or a handler's entry (not inside a run of one line,
    # whose walk the run's first instruction's covers)
    first = next((k for k, x in enumerate(ins) if x.opname == "RESUME"), -1)
    targets = {at[x.argval] for x in ins if x.opcode in dis.hasjrel or x.opcode in dis.hasjabs}
    targets |= {at[e.target] for e in table}
    for s in range(first + 1, len(ins)):
        if line[s] < 1 or s > first + 1 and line[s - 1] == line[s] and s not in targets:
            continue
        dest = out.setdefault(line[s], set())
        seen, todo = set(), [(s, j) for j in succ(s)]
        while todo:
            prev, j = todo.pop()
            if (prev, j) in seen:
                continue
            seen.add((prev, j))
            if line[j] != -1 and (line[j] != line[prev] or j < prev and ins[j].opname != "SEND"):
                dest.add(line[j])
            else:
                todo.extend((j, n) for n in succ(j))


def compiled(src):
    try:
        code = compile(src, "<program>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
        return None
    # the line events' rule read here is 3.11's (3.12 traces through sys.monitoring)
    lines, nxt, stack = set(), {} if sys.version_info[:2] == (3, 11) else None, [code]
    while stack:
        co = stack.pop()
        lines.add(co.co_firstlineno)  # a call event's line
        for _, _, line in co.co_lines():
            if line is not None and line > 0:
                lines.add(line)
        if nxt is not None:
            try:
                next_lines(co, nxt)
            except (AttributeError, KeyError, IndexError):
                nxt = None  # an interpreter whose bytecode this reading does not know
        stack.extend(c for c in co.co_consts if hasattr(c, "co_lines"))
    lines.discard(0)
    return {"lines": sorted(lines), "next": None if nxt is None else {l: sorted(d) for l, d in nxt.items()}}


sys.stdout.write(json.dumps([compiled(s) for s in json.loads(sys.stdin.read())]))
