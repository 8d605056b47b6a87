package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"ndb/tracer"
)

// RefusedError is a model engine's refusal of a program that the real
// engine would end at once with an uncaught exception, before any state a
// model could predict: a program (or --call expression) that does not
// compile, and a call whose function the program does not define.
// Exception is that exception's repr exactly as the real engine's exit
// shows it (its arg), e.g. NameError("name 'g' is not defined").
type RefusedError struct {
	Reason    string
	Exception string
}

func (e *RefusedError) Error() string { return e.Reason + ": " + e.Exception }

// checkScript is run by `python -I -S -c`: it reads {"source", "call",
// "limit", "cut"} from stdin and answers one JSON object. It compiles the
// call and the program exactly as tracer.py does (same file names, same
// order, dont_inherit), and parses them with ast; it never executes them.
// A call's free names are looked up, in evaluation order, among the
// program's module-level bindings (def, class, assignments, imports, for
// and with targets, globals declared in functions), the builtins and a
// module's own attributes; a star import lets every name pass.
const checkScript = `
import ast, builtins, json, sys, types
req = json.loads(sys.stdin.read())
src, call, limit, cut = req["source"], req["call"], req["limit"], req["cut"]
def show(e):
    r = repr(e)
    return r[:limit] + cut if len(r) > limit else r
try:
    if call:
        compile(call, "<call>", "eval", dont_inherit=True)
    compile(src, req["file"], "exec", dont_inherit=True)
except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as e:
    print(json.dumps({"kind": "syntax", "exception": show(e)}))
    sys.exit(0)
if not call:
    print("{}")
    sys.exit(0)
tree = ast.parse(src)
bound, star = set(dir(builtins)) | set(vars(types.ModuleType("__main__"))) | {"__builtins__", "__file__"}, False
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
def module_level(node):
    global star
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(child.name)
            continue
        if isinstance(child, SCOPES):
            continue
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            bound.add(child.id)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            for a in child.names:
                if a.name == "*":
                    star = True
                else:
                    bound.add(a.asname or a.name.split(".")[0])
        elif isinstance(child, ast.ExceptHandler) and child.name:
            bound.add(child.name)
        elif hasattr(ast, "MatchAs") and isinstance(child, ast.MatchAs) and child.name:
            bound.add(child.name)
        elif hasattr(ast, "MatchStar") and isinstance(child, ast.MatchStar) and child.name:
            bound.add(child.name)
        elif hasattr(ast, "MatchMapping") and isinstance(child, ast.MatchMapping) and child.rest:
            bound.add(child.rest)
        module_level(child)
module_level(tree)
for node in ast.walk(tree):
    if isinstance(node, ast.Global):
        bound.update(node.names)
def free(node):
    if isinstance(node, SCOPES):
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        yield node.id
    for child in ast.iter_child_nodes(node):
        yield from free(child)
out = {}
if not star:
    for name in free(ast.parse(call.strip(), mode="eval")):
        if name not in bound:
            out = {"kind": "name", "name": name, "exception": show(NameError("name '%s' is not defined" % name))}
            break
print(json.dumps(out))
`

// checkCache remembers the answers of checkProgram (programs are checked
// again and again by evaluation runs and servers).
var checkCache = struct {
	sync.Mutex
	m map[[32]byte]error
}{m: map[[32]byte]error{}}

// checkProgram refuses, with a *RefusedError, a program the real engine
// would end at once: one whose call or source does not compile, or whose
// call uses a name the program does not define. It runs python (resolved as
// the tracer resolves it) on a fixed script that compiles and parses the
// text without executing any of it. Without a Python to ask it accepts the
// program: a model engine must work where no interpreter is installed.
func checkProgram(ctx context.Context, python string, p Program) error {
	source := tracer.TracedSource(p)
	call := strings.TrimSpace(p.Call)
	// The name the real engine compiles the program under: its path when
	// it runs as a file (Program.Context), else "<program>".
	file := "<program>"
	if p.Context != nil && p.Path != "" {
		if f, err := tracer.PythonFileName(p.Path); err == nil {
			file = f
		}
	}
	key := sha256.Sum256([]byte(python + "\x00" + call + "\x00" + file + "\x00" + source))
	checkCache.Lock()
	err, ok := checkCache.m[key]
	checkCache.Unlock()
	if ok {
		return err
	}
	exe, rerr := tracer.ResolvePython(python)
	if rerr != nil {
		return nil
	}
	req, _ := json.Marshal(map[string]any{"source": source, "call": call, "file": file,
		"limit": tracer.DefaultLimits().ReprLimit, "cut": tracer.CutMarker})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-I", "-S", "-c", checkScript)
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, xerr := cmd.Output()
	if xerr != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("engine: checking the program: %w", ctx.Err())
		}
		return nil // an interpreter too old for the script: accept, as without one
	}
	var ans struct {
		Kind, Name, Exception string
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		return nil
	}
	switch ans.Kind {
	case "syntax":
		what := "the program does not compile"
		if call != "" && strings.Contains(ans.Exception, "'<call>'") {
			what = fmt.Sprintf("the call %s does not compile", call)
		}
		err = &RefusedError{Reason: what, Exception: ans.Exception}
	case "name":
		err = &RefusedError{Reason: fmt.Sprintf("the call %s uses %s, which the program does not define", call, ans.Name),
			Exception: ans.Exception}
	}
	checkCache.Lock()
	if len(checkCache.m) >= 4096 {
		clear(checkCache.m)
	}
	checkCache.m[key] = err
	checkCache.Unlock()
	return err
}
