package repl

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"ndb/debugger"
	"ndb/internal/pysource"
	"ndb/internal/termsafe"
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

// functionRange is the source of f's function as inspect.getsourcelines
// gives it to pdb's longlist: the whole file for the module; for a def or
// a class body its decorators, header and body (sourceBlock); a lambda's
// or comprehension's own line.
func functionRange(ix *pysource.Index, f debugger.Stop) (int, int) {
	n := len(ix.Lines)
	if f.Function == "<module>" || f.Lineno < 1 || f.Lineno > n {
		return 1, n
	}
	var in *pysource.Scope // the innermost def or class of that name around the line
	for _, s := range ix.Functions() {
		if s.Name == f.Function && s.First <= f.Lineno && f.Lineno <= s.End && (in == nil || s.First > in.First) {
			in = s
		}
	}
	if in == nil {
		return f.Lineno, f.Lineno
	}
	return sourceBlock(ix, in)
}

// sourceBlock is the lines inspect.getblock gives for a def or class:
// from co_firstlineno (its first decorator) to the end of its body, and
// the comments after it indented at least as deep as the body (3.11's
// BlockFinder); a one-line def's is its logical line.
func sourceBlock(ix *pysource.Index, s *pysource.Scope) (int, int) {
	last := s.End
	if s.OneLine() {
		return s.First, last
	}
	body := ix.Line(s.Body)
	col := len(body) - len(strings.TrimLeft(body, " \t"))
	for k := s.End + 1; k <= len(ix.Lines); k++ {
		l := ix.Line(k)
		t := strings.TrimLeft(l, " \t")
		if t == "" {
			continue
		}
		if !strings.HasPrefix(t, "#") {
			break
		}
		if len(l)-len(t) >= col {
			last = k
		}
	}
	return s.First, last
}

func longlistCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	f, _, _, ok := t.frame()
	if !ok {
		return Result{}, errNotRunning
	}
	all := debugger.SourceLines(t.s.Source())
	first, last := functionRange(pysource.New(t.s.Source()), f)
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
			fmt.Fprintf(&b, "\n%s: %s", d.name, termsafe.Line(d.value))
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
	return Result{Message: fmt.Sprintf("display %s: %s", arg, termsafe.Line(v)), Data: map[string]any{"name": arg, "value": v}}, nil
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
			out = append(out, fmt.Sprintf("display %s: %s  [old: %s]", d.name, termsafe.Line(v), termsafe.Line(d.value)))
			t.displays[st.Frame][k].value = v
		}
	}
	return out
}

func tbreakCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	return t.setBreak(ctx, arg, true)
}

func breakCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	return t.setBreak(ctx, arg, false)
}

// setBreak is pdb's do_break: LINE, FILE:LINE or FUNC (a function's name,
// Class.method, module.function), then an optional ", CONDITION"; without
// an argument, the list of breakpoints.
func (t *Terminal) setBreak(ctx context.Context, arg string, temp bool) (Result, error) {
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
	} else if fn, line, err := t.resolveFunction(ctx, where); err == nil {
		spec.Line, spec.Func = line, fn
	} else {
		return Result{}, err
	}
	bp, err := t.s.Break(spec)
	if err != nil {
		return Result{}, err
	}
	msg := fmt.Sprintf("Breakpoint %d at %s:%d", bp.Number, t.name, bp.Line)
	data := map[string]any{"breaks": nonNil(t.s.Breaks()), "number": bp.Number}
	if len(t.richSpecs()) > 0 {
		data["breakpoints"] = t.s.BreakSpecs()
	}
	return Result{Message: msg, Data: data}, nil
}

// resolveFunction is where pdb's `b FUNC` puts a breakpoint: the code's
// name and co_firstlineno of what FUNC evaluates to in the frame (a
// function, Class.method, a bound method), where the live program waits;
// else, as pdb's lineinfo, a name in the program's file: a top-level
// function, a method of a class the module has defined, or
// MODULE.function where MODULE is the program's own module name.
func (t *Terminal) resolveFunction(ctx context.Context, where string) (string, int, error) {
	notFound := fmt.Errorf("The specified object '%s' is not a function or was not found along sys.path.", where)
	if !dottedName.MatchString(where) {
		return "", 0, notFound
	}
	if t.s.Live() {
		// pdb: eval in the frame, __func__ of a method, then its code
		src := "(lambda f: (lambda c: (c.co_name, c.co_firstlineno, c.co_filename == __import__('sys')._getframe(1).f_code.co_filename or c.co_filename == globals().get('__file__')))(getattr(f, '__func__', f).__code__))(" + where + ")"
		if res, err := t.s.Eval(ctx, t.sel, src, tracer.EvalExpr); err == nil && res.OK {
			if m := codeInfo.FindStringSubmatch(res.Text); m != nil {
				if m[3] != "True" {
					return "", 0, fmt.Errorf("%s is not defined in the program's file (%s): ndb traces the program's own file only", where, t.name)
				}
				line, _ := strconv.Atoi(m[2])
				return m[1], line, nil
			}
		}
	}
	parts := strings.Split(where, ".")
	ix := pysource.New(t.s.Source())
	switch {
	case len(parts) == 1:
		// once the def has run, pdb evaluates the name: co_firstlineno
		// (debugger.FunctionLine, DAP's and MCP's too); before, its
		// find_function searches the text
		if t.functionDefined(where) {
			if line := debugger.FunctionLine(t.s.Source(), where); line > 0 {
				return where, line, nil
			}
		} else if line := pdbFindFunction(ix, where); line > 0 {
			return where, line, nil
		}
	case len(parts) == 2 && parts[0] == strings.TrimSuffix(filepath.Base(t.name), ".py"):
		// pdb's lineinfo finds the module's file and "def NAME(" in it
		if line := pdbFindFunction(ix, parts[1]); line > 0 {
			return parts[1], line, nil
		}
	case t.classDefined(parts[0]):
		// pdb evaluates Class.method (or Outer.Inner.method): its code's
		// co_firstlineno, the first decorator's line
		if line := debugger.FunctionLine(t.s.Source(), where); line > 0 {
			return parts[len(parts)-1], line, nil
		}
	}
	return "", 0, notFound
}

var (
	dottedName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	codeInfo   = regexp.MustCompile(`^\('([^']*)', (\d+), (True|False)\)$`)
)

// pdbFindFunction is the line pdb's find_function gives a function it
// has not evaluated: the first `def NAME(` at the start of a line (not an
// async def, not an indented one), 0 if none; a def in a string or a
// comment is none (pdb's regular expression would take it).
func pdbFindFunction(ix *pysource.Index, name string) int {
	for _, s := range ix.Functions() {
		if s.Kind == pysource.Function && s.Name == name && s.Indent == 0 && !s.Async {
			return s.Line
		}
	}
	return 0
}

// classDefined says whether the module's globals hold class name.
func (t *Terminal) classDefined(name string) bool {
	frames := t.s.Frames()
	if len(frames) == 0 {
		return false
	}
	v, ok := frames[0].Locals.Get(name)
	return ok && strings.HasPrefix(v, "<class ")
}

func (t *Terminal) isProgramFile(file string) bool {
	file = strings.Trim(file, `'"`)
	return file != "" && (file == t.name || filepath.Base(file) == filepath.Base(t.name))
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
		if b.Cond != "" || b.Temp || b.Func != "" || b.Ignore > 0 || b.Disabled {
			out = append(out, b)
		}
	}
	return out
}

// bpString is bdb's str(Breakpoint): "breakpoint N at FILE:LINE".
func (t *Terminal) bpString(b debugger.BreakSpec) string {
	return fmt.Sprintf("breakpoint %d at %s:%d", b.Number, t.name, b.Line)
}

// listBreaks is pdb's `b` without argument: bdb's bpformat of each
// breakpoint, in number order.
func (t *Terminal) listBreaks() Result {
	specs := t.s.BreakSpecs()
	var b strings.Builder
	if len(specs) > 0 {
		b.WriteString("Num Type         Disp Enb   Where\n")
	}
	for _, sp := range specs {
		disp := "keep "
		if sp.Temp {
			disp = "del  "
		}
		if sp.Disabled {
			disp += "no   "
		} else {
			disp += "yes  "
		}
		fmt.Fprintf(&b, "%-4dbreakpoint   %s at %s:%d\n", sp.Number, disp, termsafe.Line(t.name), sp.Line)
		if sp.Cond != "" {
			fmt.Fprintf(&b, "\tstop only if %s\n", termsafe.Line(sp.Cond))
		}
		if sp.Ignore > 0 {
			fmt.Fprintf(&b, "\tignore next %d hits\n", sp.Ignore)
		}
		if sp.Hits > 0 {
			ss := ""
			if sp.Hits > 1 {
				ss = "s"
			}
			fmt.Fprintf(&b, "\tbreakpoint already hit %d time%s\n", sp.Hits, ss)
		}
	}
	data := map[string]any{"breaks": nonNil(t.s.Breaks())}
	if len(specs) > 0 {
		data["breakpoints"] = specs
	}
	return Result{Message: strings.TrimSuffix(b.String(), "\n"), Data: data}
}

// clearCmd is pdb's clear: breakpoint numbers, FILE:LINE, or (without an
// argument) every breakpoint, without pdb's "Clear all breaks?" question.
func clearCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	var msgs, errs []string
	switch {
	case arg == "":
		for _, b := range t.s.BreakSpecs() {
			msgs = append(msgs, "Deleted "+t.bpString(b))
		}
		t.s.ClearBreaks()
	case strings.Contains(arg, ":"):
		i := strings.LastIndex(arg, ":")
		n, err := strconv.Atoi(strings.TrimSpace(arg[i+1:]))
		if err != nil {
			return Result{}, fmt.Errorf("Invalid line number (%s)", arg[i+1:])
		}
		if !t.isProgramFile(strings.TrimSpace(arg[:i])) {
			return Result{}, fmt.Errorf("There are no breakpoints in %s", strings.TrimSpace(arg[:i]))
		}
		gone, err := t.s.ClearLine(n)
		if err != nil {
			return Result{}, fmt.Errorf("There is no breakpoint at %s:%d", t.name, n)
		}
		for _, b := range gone {
			msgs = append(msgs, "Deleted "+t.bpString(b))
		}
	default:
		for _, f := range strings.Fields(arg) {
			b, err := t.s.ClearNumber(f)
			if err != nil {
				msgs, errs = append(msgs, "*** "+err.Error()), append(errs, err.Error())
				continue
			}
			msgs = append(msgs, "Deleted "+t.bpString(b))
		}
	}
	return t.bpResult(msgs, errs)
}

// bpResult is what a command over breakpoint numbers printed: pdb reports
// each number's message or error in turn and goes on with the next.
func (t *Terminal) bpResult(msgs, errs []string) (Result, error) {
	data := map[string]any{"breaks": nonNil(t.s.Breaks())}
	if len(errs) > 0 && len(errs) == len(msgs) { // nothing done: one error
		return Result{}, errors.New(strings.Join(errs, "\n*** "))
	}
	if len(errs) > 0 {
		data["errors"] = errs
	}
	return Result{Message: strings.Join(msgs, "\n"), Data: data}, nil
}

// enableCmd is pdb's enable N... (on) and disable N... (off).
func enableCmd(on bool) func(*Terminal, context.Context, string) (Result, error) {
	return func(t *Terminal, ctx context.Context, arg string) (Result, error) {
		verb := "Disabled "
		if on {
			verb = "Enabled "
		}
		var msgs, errs []string
		for _, f := range strings.Fields(arg) {
			b, err := t.s.EnableBreak(f, on)
			if err != nil {
				msgs, errs = append(msgs, "*** "+err.Error()), append(errs, err.Error())
				continue
			}
			msgs = append(msgs, verb+t.bpString(b))
		}
		return t.bpResult(msgs, errs)
	}
}

// conditionCmd is pdb's condition N [COND].
func conditionCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	num, cond, _ := strings.Cut(arg, " ")
	if strings.TrimSpace(num) == "" {
		return Result{}, fmt.Errorf("Breakpoint number expected")
	}
	b, err := t.s.SetCondition(num, cond)
	if err != nil {
		return Result{}, err
	}
	msg := fmt.Sprintf("New condition set for breakpoint %d.", b.Number)
	if b.Cond == "" {
		msg = fmt.Sprintf("Breakpoint %d is now unconditional.", b.Number)
	}
	return Result{Message: msg, Data: map[string]any{"breakpoints": t.s.BreakSpecs()}}, nil
}

// ignoreCmd is pdb's ignore N [COUNT].
func ignoreCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	f := strings.Fields(arg)
	if len(f) == 0 {
		return Result{}, fmt.Errorf("Breakpoint number expected")
	}
	count := 0
	if len(f) > 1 {
		count, _ = strconv.Atoi(f[1]) // pdb: anything else is 0
	}
	b, err := t.s.SetIgnore(f[0], count)
	if err != nil {
		return Result{}, err
	}
	msg := fmt.Sprintf("Will stop next time breakpoint %d is reached.", b.Number)
	switch {
	case count == 1:
		msg = fmt.Sprintf("Will ignore next 1 crossing of breakpoint %d.", b.Number)
	case count > 1:
		msg = fmt.Sprintf("Will ignore next %d crossings of breakpoint %d.", count, b.Number)
	}
	return Result{Message: msg, Data: map[string]any{"breakpoints": t.s.BreakSpecs()}}, nil
}

// restartNote is what restart prints before the first stop (pdb: "Restarting
// FILE with arguments:" and the arguments, which ndb prints when given).
func (t *Terminal) restartNote(args []string) string {
	if args != nil {
		return fmt.Sprintf("Restarting %s with arguments:\n\t%s", t.name, termsafe.Line(strings.Join(args, " ")))
	}
	return fmt.Sprintf("Restarting %s: back to its first stop; the history before it is dropped (breakpoints and displays are kept)", t.name)
}

// restartCmd is pdb's restart (run): the program starts again (a live
// session runs it anew) and the history after the first stop is dropped;
// breakpoints and displays stay. ARGS (split as pdb's shlex.split) become
// the program's sys.argv[1:], on the real engine's live sessions.
func restartCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	if arg == "" {
		res, err := t.restart(ctx)
		if err != nil {
			return Result{}, err
		}
		res.Notes = []string{t.restartNote(t.s.RunArgs())} // pdb: sys.argv stays
		return res, nil
	}
	args, err := shellSplit(arg)
	if err != nil {
		return Result{}, err
	}
	if !t.s.LiveConditions() { // the backend runs no program anew
		return Result{}, fmt.Errorf("restart takes no arguments here: the run's arguments are those ndb debug was given (arguments need the real engine's live session)")
	}
	st, err := t.s.RestartWith(ctx, args)
	if err != nil {
		return Result{}, err
	}
	t.shown, t.listNext, t.sel = nil, 0, 0
	return Result{Moved: true, Stop: st, Displays: t.refreshDisplays(ctx, st), Notes: []string{t.restartNote(args)}}, nil
}

// shellSplit splits s as Python's shlex.split does for the common forms:
// words separated by blanks, '...' and "..." quoting, backslash escapes.
func shellSplit(s string) ([]string, error) {
	out := []string{}
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r': // shlex's whitespace
			if inWord {
				out, inWord = append(out, cur.String()), false
				cur.Reset()
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("No escaped character")
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '\'' || c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if c == '"' && s[j] == '\\' && j+1 < len(s) && strings.IndexByte(`"\$`+"`", s[j+1]) >= 0 {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, errors.New("No closing quotation")
			}
			i, inWord = j, true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

func (t *Terminal) restart(ctx context.Context) (Result, error) {
	st, err := t.s.Restart(ctx)
	if err != nil {
		return Result{}, err
	}
	t.shown, t.listNext, t.sel = nil, 0, 0
	return Result{Moved: true, Stop: st, Displays: t.refreshDisplays(ctx, st)}, nil
}

// expandAlias is pdb's precmd alias expansion: while the first word is
// an alias, the line becomes its command with %1, %2... replaced by the
// words after it and %* by all of them.
func (t *Terminal) expandAlias(line string) string {
	args := strings.Fields(line)
	for n := 0; len(args) > 0 && n < 100; n++ { // bounded: pdb loops forever on an alias of itself
		cmd, ok := t.aliases[args[0]]
		if !ok {
			break
		}
		for i, a := range args[1:] {
			cmd = strings.ReplaceAll(cmd, "%"+strconv.Itoa(i+1), a)
		}
		line = strings.ReplaceAll(cmd, "%*", strings.Join(args[1:], " "))
		args = strings.Fields(line)
	}
	return line
}

// aliasCmd is pdb's alias [NAME [COMMAND]].
func aliasCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	args := strings.Fields(arg)
	switch {
	case len(args) == 0:
		names := make([]string, 0, len(t.aliases))
		for k := range t.aliases {
			names = append(names, k)
		}
		slices.Sort(names)
		var b strings.Builder
		for _, k := range names {
			fmt.Fprintf(&b, "%s = %s\n", k, t.aliases[k])
		}
		return Result{Message: strings.TrimSuffix(b.String(), "\n"), Data: map[string]any{"aliases": t.aliases}}, nil
	case len(args) == 1:
		cmd, ok := t.aliases[args[0]]
		if !ok {
			return Result{}, fmt.Errorf("Unknown alias '%s'", args[0])
		}
		return Result{Message: fmt.Sprintf("%s = %s", args[0], cmd), Data: map[string]any{"alias": args[0], "command": cmd}}, nil
	}
	if t.aliases == nil {
		t.aliases = map[string]string{}
	}
	t.aliases[args[0]] = strings.Join(args[1:], " ")
	return Result{Data: map[string]any{"alias": args[0], "command": t.aliases[args[0]]}}, nil
}

// unaliasCmd is pdb's unalias NAME.
func unaliasCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	if args := strings.Fields(arg); len(args) > 0 {
		delete(t.aliases, args[0])
	}
	return Result{Data: map[string]any{"aliases": t.aliases}}, nil
}

// liveValue evaluates a pdb command's Python text in the selected frame
// where the live program waits (statement mode: what it prints is the
// answer); name is the command, for the refusal elsewhere.
func (t *Terminal) liveValue(ctx context.Context, name, arg, src string) (string, error) {
	if strings.TrimSpace(arg) == "" {
		return "", fmt.Errorf("SyntaxError: invalid syntax")
	}
	res, err := t.s.Eval(ctx, t.sel, src, tracer.EvalExec)
	if err != nil {
		return "", fmt.Errorf("%s %s: %s", name, arg, t.notLiveWhy())
	}
	if !res.OK {
		return "", errors.New(res.Text)
	}
	return strings.TrimSuffix(res.Text, "\n"), nil
}

// whatisCmd is pdb's whatis EXPR: "Method NAME", "Function NAME",
// "Class MODULE.QUALNAME", or the value's type, evaluated in the frame.
func whatisCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	src := "print((lambda v: (lambda m, f: 'Method %s' % m.co_name if m is not None else 'Function %s' % f.co_name if f is not None " +
		"else 'Class %s.%s' % (v.__module__, v.__qualname__) if v.__class__ is type else type(v))" +
		"(getattr(getattr(v, '__func__', None), '__code__', None), getattr(v, '__code__', None)))((" + arg + "\n)))"
	msg, err := t.liveValue(ctx, "whatis", arg, src)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: msg, Data: map[string]any{"whatis": msg}}, nil
}

// sourceCmd is pdb's source EXPR: the source of a function, method or
// class of the program (inspect.getsourcelines), without marks.
func sourceCmd(t *Terminal, ctx context.Context, arg string) (Result, error) {
	src := "print((lambda o: (lambda f: ('def', f.__code__.co_name, f.__code__.co_firstlineno) if hasattr(f, '__code__') " +
		"else ('class', o.__qualname__, 0) if isinstance(o, type) else ('none', type(o).__name__, 0))(getattr(o, '__func__', o)))((" + arg + "\n)))"
	out, err := t.liveValue(ctx, "source", arg, src)
	if err != nil {
		return Result{}, err
	}
	m := sourceInfo.FindStringSubmatch(out)
	if m == nil {
		return Result{}, fmt.Errorf("could not get source code")
	}
	lines := debugger.SourceLines(t.s.Source())
	ix := pysource.New(t.s.Source())
	first, last := 0, 0
	switch m[1] {
	case "def":
		line, _ := strconv.Atoi(m[3])
		first, last = functionRange(ix, debugger.Stop{State: tracer.State{Function: m[2], Lineno: line}})
	case "class":
		// inspect finds a class by its qualified name (3.11's _ClassFinder)
		if c := ix.Lookup(m[2]); c != nil && c.Kind == pysource.Class {
			first, last = sourceBlock(ix, c)
		}
	default:
		return Result{}, fmt.Errorf("module, class, method, function, traceback, frame, or code object was expected, got %s", m[2])
	}
	if first < 1 || last > len(lines) || first > last {
		return Result{}, fmt.Errorf("could not find class definition")
	}
	var b strings.Builder
	for n := first; n <= last; n++ {
		fmt.Fprintf(&b, "%4d      %s\n", n, termsafe.Line(lines[n-1]))
	}
	return Result{Message: strings.TrimSuffix(b.String(), "\n"), Data: map[string]any{"first": first, "last": last, "lines": lines[first-1 : last]}}, nil
}

var sourceInfo = regexp.MustCompile(`^\('(def|class|none)', '([^']*)', (\d+)\)$`)

// refuseCmd answers a pdb command ndb does not run, with the reason
// (docs/debugger.md lists them).
func refuseCmd(why string) func(*Terminal, context.Context, string) (Result, error) {
	return func(t *Terminal, ctx context.Context, arg string) (Result, error) {
		return Result{}, errors.New(why)
	}
}
