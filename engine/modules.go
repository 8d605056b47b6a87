package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"sync"
	"time"

	"ndb/tracer"
)

// moduleScript is run by `python -I -S -c`: it reads a JSON list of module
// names and answers, for those of the standard library, the repr a module
// frame shows for the module on this interpreter (<module 'os' (frozen)>,
// <module 'glob' from '/usr/lib/python3.11/glob.py'>). It locates them
// (importlib.util.find_spec: a dotted name imports its standard-library
// parents) and never imports the module itself nor runs the program.
// Reprs a frame's JSON would escape, or longer than 120 characters, are
// left out.
const moduleScript = `
import importlib.util, json, sys
out = {}
for name in json.loads(sys.stdin.read()):
    if name.split(".")[0] not in getattr(sys, "stdlib_module_names", ()):
        continue
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        continue
    if spec is None or not spec.origin:
        continue
    if spec.origin in ("built-in", "frozen"):
        r = "<module %r (%s)>" % (name, spec.origin)
    elif spec.has_location:
        r = "<module %r from %r>" % (name, spec.origin)
    else:
        continue
    if len(r) <= 120 and "\\" not in r and '"' not in r:
        out[name] = r
print(json.dumps(out))
`

// moduleReprs remembers, per interpreter, the repr of each module asked
// ("": not in its standard library).
var moduleReprs = struct {
	sync.Mutex
	m map[string]map[string]string
}{m: map[string]map[string]string{}}

// stdlibModules maps the modules of names that are python's standard
// library to the reprs it shows for them (moduleScript); nil without a
// python to ask. Each module is asked once per interpreter (the lock is
// held while python answers: a later prediction waits for what it would
// ask again).
func stdlibModules(ctx context.Context, python string, names []string) map[string]string {
	if python == "" || len(names) == 0 {
		return nil
	}
	moduleReprs.Lock()
	defer moduleReprs.Unlock()
	known := moduleReprs.m[python]
	if known == nil {
		known = map[string]string{}
		moduleReprs.m[python] = known
	}
	var ask []string
	for _, n := range names {
		if _, ok := known[n]; !ok {
			ask = append(ask, n)
		}
	}
	if len(ask) > 0 {
		got := askModules(ctx, python, ask)
		for _, n := range ask {
			known[n] = got[n]
		}
	}
	out := map[string]string{}
	for _, n := range names {
		if r := known[n]; r != "" {
			out[n] = r
		}
	}
	return out
}

// askModules runs moduleScript for names; nil where python cannot answer.
func askModules(ctx context.Context, python string, names []string) map[string]string {
	exe, err := tracer.ResolvePython(python)
	if err != nil {
		return nil
	}
	req, _ := json.Marshal(names)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-I", "-S", "-c", moduleScript)
	cmd.Stdin = bytes.NewReader(req)
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	var got map[string]string
	if json.Unmarshal(out, &got) != nil {
		return nil
	}
	return got
}
