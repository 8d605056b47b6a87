package repl

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"ndb/debugger"
	"ndb/tracer"
)

// This file holds the pdb commands that act on the selected frame (up,
// down, longlist, retval, display) and pdb's breakpoint forms (tbreak,
// b FUNC, b FILE:LINE, conditions), and restart.

var errNotRunning = fmt.Errorf("the program is not running")

// frame is the frame up/down selected (the stop's own by default) and its
// index in frames (outermost first); false when the program is not running.
func (t *Terminal) frame() (debugger.Stop, []debugger.Stop, int, bool) {
	frames := t.frames()
	if len(frames) == 0 {
		return debugger.Stop{}, nil, 0, false
	}
	i := max(0, len(frames)-1-t.sel)
	return frames[i], frames, i, true
}

// frameEntry is pdb's print_stack_entry of frames[i]: "> file(line)func()"
// and "-> source"; "->VALUE" after a frame at its return stop.
func (t *Terminal) frameEntry(frames []debugger.Stop, i int) string {
	f := frames[i]
	ret := ""
	if i == len(frames)-1 && f.Event == tracer.EventReturn {
		ret = "->" + f.Arg
	}
	return fmt.Sprintf("> %s(%d)%s()%s\n-> %s", t.name, f.Lineno, f.Function, ret, strings.TrimSpace(f.Src))
}

func frameCount(arg string) (int, error) {
	if arg == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil {
		return 0, fmt.Errorf("Invalid frame count (%s)", arg)
	}
	return n, nil
}

func upCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	_, frames, i, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	if i == 0 {
		return Result{}, fmt.Errorf("Oldest frame")
	}
	n, err := frameCount(arg)
	if err != nil {
		return Result{}, err
	}
	j := 0
	if n >= 0 {
		j = max(0, i-n)
	}
	return t.selectFrame(frames, j), nil
}

func downCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	_, frames, i, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	if i == len(frames)-1 {
		return Result{}, fmt.Errorf("Newest frame")
	}
	n, err := frameCount(arg)
	if err != nil {
		return Result{}, err
	}
	j := len(frames) - 1
	if n >= 0 {
		j = min(len(frames)-1, i+n)
	}
	return t.selectFrame(frames, j), nil
}

func (t *Terminal) selectFrame(frames []debugger.Stop, j int) Result {
	t.sel, t.listNext = len(frames)-1-j, 0
	f := frames[j]
	msg := t.frameEntry(frames, j)
	return Result{Message: msg, Data: map[string]any{"frame": map[string]any{
		"level": t.sel, "function": f.Function, "lineno": f.Lineno, "src": f.Src}}}
}

var defLine = regexp.MustCompile(`^(\s*)(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " \t")) }

func blankOrComment(line string) bool {
	s := strings.TrimSpace(line)
	return s == "" || strings.HasPrefix(s, "#")
}

// functionRange is the source of f's function as inspect.getsourcelines
// gives it to pdb's longlist: the whole file for the module; for a
// function its decorators, def line and body; a lambda's or
// comprehension's own line.
func functionRange(lines []string, f debugger.Stop) (int, int) {
	n := len(lines)
	if f.Function == "<module>" || f.Lineno < 1 || f.Lineno > n {
		return 1, n
	}
	def := 0
	for k := f.Lineno; k <= n && strings.HasPrefix(strings.TrimSpace(lines[k-1]), "@"); k++ { // at a decorator (the call's line)
		if m := defLine.FindStringSubmatch(lines[k]); k < n && m != nil && m[2] == f.Function {
			def = k + 1
		}
	}
	if def == 0 && !strings.HasPrefix(f.Function, "<") {
		limit := -1 // the def encloses the line: smaller indentation, unless it is the line itself
		for k := f.Lineno; k >= 1; k-- {
			line := lines[k-1]
			if blankOrComment(line) {
				continue
			}
			ind := indentOf(line)
			if m := defLine.FindStringSubmatch(line); m != nil && m[2] == f.Function && (k == f.Lineno || limit < 0 || ind < limit) {
				def = k
				break
			}
			if limit < 0 || ind < limit {
				limit = ind
			}
		}
	}
	if def == 0 {
		return f.Lineno, f.Lineno
	}
	first := def
	for first > 1 && strings.HasPrefix(strings.TrimSpace(lines[first-2]), "@") && indentOf(lines[first-2]) == indentOf(lines[def-1]) {
		first--
	}
	last := def
	for k := def + 1; k <= n; k++ {
		if blankOrComment(lines[k-1]) {
			continue
		}
		if indentOf(lines[k-1]) <= indentOf(lines[def-1]) {
			break
		}
		last = k
	}
	return first, last
}

func longlistCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	f, _, _, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	all := debugger.SourceLines(t.s.Source())
	first, last := functionRange(all, f)
	if first < 1 || last > len(all) || first > last {
		return Result{}, fmt.Errorf("could not get source code")
	}
	return Result{Message: t.renderSourceAt(first, last, f.Lineno),
		Data: map[string]any{"first": first, "last": last, "lines": all[first-1 : last]}}, nil
}

func retvalCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	f, _, _, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	if t.sel != 0 || f.Event != tracer.EventReturn {
		return Result{}, fmt.Errorf("Not yet returned!")
	}
	return Result{Message: f.Arg, Data: map[string]any{"name": "__return__", "value": f.Arg}}, nil
}

// displayValue is what pdb's display shows for expr in the frame level
// frames below the stop, whose locals are locals: its repr, or the error
// evaluating it raised. It is evaluated where the live program waits;
// elsewhere only a name is known (from locals): false for an expression.
func (t *Terminal) displayValue(ctx context.Context, level int, locals tracer.Locals, expr string) (string, bool) {
	if res, err := t.s.Eval(ctx, level, expr, tracer.EvalExpr); err == nil {
		if !res.OK {
			return "** raised " + res.Text + " **", true
		}
		return res.Text, true
	}
	if !debugger.IsName(expr) {
		return "", false
	}
	if v, ok := locals.Get(expr); ok {
		return v, true
	}
	return fmt.Sprintf("** raised NameError: name '%s' is not defined **", expr), true
}

func displayCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	f, _, _, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	if arg == "" {
		var b strings.Builder
		b.WriteString("Currently displaying:")
		shown := map[string]string{}
		for _, d := range t.displays[f.Frame] {
			fmt.Fprintf(&b, "\n%s: %s", d.name, d.value)
			shown[d.name] = d.value
		}
		return Result{Message: b.String(), Data: map[string]any{"displaying": shown}}, nil
	}
	v, ok := t.displayValue(ctx, t.sel, f.Locals, arg)
	if !ok {
		return Result{}, t.notLive("display", arg)
	}
	if t.displays == nil {
		t.displays = map[int][]displayVar{}
	}
	ds := t.displays[f.Frame]
	if k := slices.IndexFunc(ds, func(d displayVar) bool { return d.name == arg }); k >= 0 {
		ds[k].value = v
	} else {
		t.displays[f.Frame] = append(ds, displayVar{arg, v})
	}
	return Result{Message: fmt.Sprintf("display %s: %s", arg, v), Data: map[string]any{"name": arg, "value": v}}, nil
}

func undisplayCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	f, _, _, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	if arg == "" {
		delete(t.displays, f.Frame)
		return Result{Data: map[string]any{"displaying": map[string]string{}}}, nil
	}
	ds := t.displays[f.Frame]
	k := slices.IndexFunc(ds, func(d displayVar) bool { return d.name == arg })
	if k < 0 {
		return Result{}, fmt.Errorf("not displaying %s", arg)
	}
	t.displays[f.Frame] = slices.Delete(ds, k, k+1)
	return Result{Data: map[string]any{"undisplayed": arg}}, nil
}

// refreshDisplays is pdb's preloop at a new stop: the displayed expressions
// of the stop's frame whose value changed, as "display EXPR: NEW  [old:
// OLD]". Values are compared by repr (pdb compares the objects: a list
// mutated in place is the same object and pdb does not show it). Away from
// the live program an expression that is not a name is not shown.
func (t *Terminal) refreshDisplays(ctx context.Context, st debugger.Stop) []string {
	if st.IsExit() || !t.s.Live() && len(st.Locals) == 0 && (st.Event == tracer.EventReturn || st.Event == tracer.EventException) {
		return nil // a trace without locals at this stop: nothing known changed
	}
	var out []string
	for k, d := range t.displays[st.Frame] {
		v, ok := t.displayValue(ctx, 0, st.Locals, d.name)
		if ok && v != d.value {
			out = append(out, fmt.Sprintf("display %s: %s  [old: %s]", d.name, v, d.value))
			t.displays[st.Frame][k].value = v
		}
	}
	return out
}

func tbreakCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	return t.setBreak(arg, true)
}

func breakCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	return t.setBreak(arg, false)
}

// setBreak is pdb's do_break: LINE, FILE:LINE or FUNC, then an optional
// ", CONDITION"; without an argument, the list of breakpoints.
func (t *Terminal) setBreak(arg string, temp bool) (Result, error) {
	if arg == "" {
		return t.listBreaks(), nil
	}
	where, cond, _ := strings.Cut(arg, ",")
	where, cond = strings.TrimSpace(where), strings.TrimSpace(cond)
	spec := debugger.BreakSpec{Temp: temp, Cond: cond}
	if i := strings.LastIndex(where, ":"); i >= 0 {
		file := strings.TrimSpace(where[:i])
		if !t.isProgramFile(file) {
			return Result{}, fmt.Errorf("%q is not the program's file (%s): ndb traces the program's own file only", file, t.name)
		}
		where = strings.TrimSpace(where[i+1:])
	}
	if n, err := strconv.Atoi(where); err == nil {
		spec.Line = n
	} else if debugger.IsName(where) {
		line, err := t.functionLine(where)
		if err != nil {
			return Result{}, err
		}
		spec.Line, spec.Func = line, where
	} else {
		return Result{}, fmt.Errorf("The specified object '%s' is not a function or was not found along sys.path (ndb: a line, FILE:LINE or a top-level function's name).", where)
	}
	if err := t.s.AddBreak(spec); err != nil {
		return Result{}, err
	}
	msg := fmt.Sprintf("Breakpoint at line %d", spec.Line)
	if temp {
		msg = fmt.Sprintf("Temporary breakpoint at line %d", spec.Line)
	}
	data := map[string]any{"breaks": nonNil(t.s.Breaks())}
	if len(t.richSpecs()) > 0 {
		data["breakpoints"] = t.s.BreakSpecs()
	}
	return Result{Message: msg, Data: data}, nil
}

func (t *Terminal) isProgramFile(file string) bool {
	file = strings.Trim(file, `'"`)
	return file != "" && (file == t.name || filepath.Base(file) == filepath.Base(t.name))
}

// functionLine is where pdb's `b FUNC` puts the breakpoint: the code's
// co_firstlineno (its first decorator's line) once the def has run, else
// the def line that pdb finds by searching the file for "def FUNC(" at the
// start of a line (for a decorated function that breakpoint never stops,
// in pdb as here).
func (t *Terminal) functionLine(name string) (int, error) {
	lines := debugger.SourceLines(t.s.Source())
	re := regexp.MustCompile(`^(async\s+)?def\s+` + regexp.QuoteMeta(name) + `\s*\(`)
	def := 0
	for i, l := range lines {
		if re.MatchString(l) {
			def = i + 1
			break
		}
	}
	defined := t.functionDefined(name)
	if def == 0 || !defined && strings.HasPrefix(lines[def-1], "async") {
		return 0, fmt.Errorf("The specified object '%s' is not a function or was not found along sys.path.", name)
	}
	if !defined {
		return def, nil
	}
	first := def
	for first > 1 && strings.HasPrefix(lines[first-2], "@") {
		first--
	}
	return first, nil
}

// functionDefined says whether the module has run name's def: its globals
// (the module frame's locals) hold a function of that name; a --call
// program's module has run entirely before main.
func (t *Terminal) functionDefined(name string) bool {
	frames := t.s.Frames()
	if len(frames) == 0 {
		return false
	}
	if frames[0].Function != "<module>" {
		return true
	}
	v, ok := frames[0].Locals.Get(name)
	return ok && strings.HasPrefix(v, "<function ")
}

func (t *Terminal) richSpecs() []debugger.BreakSpec {
	var out []debugger.BreakSpec
	for _, b := range t.s.BreakSpecs() {
		if b.Cond != "" || b.Temp || b.Func != "" {
			out = append(out, b)
		}
	}
	return out
}

func (t *Terminal) listBreaks() Result {
	specs := t.s.BreakSpecs()
	slices.SortStableFunc(specs, func(a, b debugger.BreakSpec) int { return a.Line - b.Line })
	var b strings.Builder
	for _, sp := range specs {
		fmt.Fprintf(&b, "breakpoint at line %d: %s", sp.Line, strings.TrimSpace(t.s.Line(sp.Line)))
		if sp.Func != "" {
			fmt.Fprintf(&b, " [function %s]", sp.Func)
		}
		if sp.Temp {
			b.WriteString(" [temporary]")
		}
		if sp.Cond != "" {
			fmt.Fprintf(&b, "\n\tstop only if %s", sp.Cond)
		}
		b.WriteByte('\n')
	}
	if len(specs) == 0 {
		b.WriteString("no breakpoints\n")
	}
	data := map[string]any{"breaks": nonNil(t.s.Breaks())}
	if len(t.richSpecs()) > 0 {
		data["breakpoints"] = specs
	}
	return Result{Message: strings.TrimSuffix(b.String(), "\n"), Data: data}
}

// restartNote is what restart prints before the first stop (pdb: "Restarting
// FILE with arguments:").
func (t *Terminal) restartNote() string {
	return fmt.Sprintf("Restarting %s: back to its first stop; the history before it is dropped (breakpoints and displays are kept)", t.name)
}

// restartCmd is pdb's restart (run): the program starts again (a live
// session runs it anew) and the history after the first stop is dropped;
// breakpoints and displays stay.
func restartCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	if arg != "" {
		return Result{}, fmt.Errorf("restart takes no arguments: the run's arguments are those ndb debug was given")
	}
	res, err := t.restart(ctx)
	if err != nil {
		return Result{}, err
	}
	res.Notes = []string{t.restartNote()}
	return res, nil
}

func (t *Terminal) restart(ctx context.Context) (Result, error) {
	st, err := t.s.Restart(ctx)
	if err != nil {
		return Result{}, err
	}
	t.shown, t.listNext, t.sel = nil, 0, 0
	return Result{Moved: true, Stop: st, Displays: t.refreshDisplays(ctx, st)}, nil
}
