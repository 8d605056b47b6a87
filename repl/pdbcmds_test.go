package repl

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/internal/pysource"
	"ndb/tracer"
)

// The pdb commands of pdbcmds.go, each checked against what `python3 -m pdb
// pdbcmds.py` prints for the same commands (testdata/pdbcmds.py). Both
// outputs are reduced to what they must share: stop headers (--Call--,
// --Return--, "> file(line)function()"), values printed, display lines,
// `w` entries of the program's frames, listings (line, B, ->, text),
// breakpoint numbers and errors (as "***": ndb's texts differ where pdb
// names files or paths). ndb's source context and locals are dropped.

const pdbFixture = "pdbcmds.py"

func newScriptSession(t *testing.T, file string) *debugger.Session {
	t.Helper()
	tracerOnce.Do(func() { tracerInst, tracerErr = tracer.New(tracer.Options{Python: "python3"}) })
	if tracerErr != nil {
		t.Skipf("no tracer: %v", tracerErr)
	}
	src, err := tracer.ReadSource(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tracerInst.Trace(context.Background(), tracer.Program{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(context.Background(), debugger.NewTraceBackend(tr))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type pdbCase struct {
	name     string
	commands []string
	// live cases run on a live session (the program waits at the stop:
	// expressions, statements, jump, post-mortem) and compare pdb's error
	// lines in full; file is the fixture (default pdbFixture).
	live bool
	file string
}

var pdbCmdCases = []pdbCase{
	{name: "up_down", commands: []string{"b square", "c", "w", "u", "p acc", "a", "w", "u", "p values", "d", "d", "d", "p n", "u 2", "d 5", "d", "u", "u", "ll", "l"}},
	{name: "longlist", commands: []string{"ll", "b 20", "c", "ll", "l", "u", "ll", "s", "s", "ll"}},
	{name: "list_frames", commands: []string{"b 2", "c", "l", "l", "u", "l", "d", "l 1, 3"}},
	{name: "tbreak_cond", commands: []string{"tbreak 9, x == 2", "b 2, n >= 3", "b", "c", "p x", "p i", "c", "p n", "c", "p n", "b"}},
	{name: "tbreak_plain", commands: []string{"tbreak 2", "c", "c"}},
	{name: "tbreak_step", commands: []string{"b 25", "c", "s", "n", "n", "tbreak 9", "n", "n", "n", "c", "p x", "c"}},
	{name: "cond_error", commands: []string{"b 9, nope == 1", "tbreak 2, nope", "c", "c", "c", "p n", "c", "p n"}},
	{name: "cond_forms", commands: []string{"b 9, not acc", "b 3, result != 1", "c", "p acc", "c", "p result", "c", "p result", "c"}},
	{name: "break_func", commands: []string{"b square", "b shout", "b", "c", "p n", "c", "p n", "c", "p n", "c"}},
	{name: "break_func_first_line", commands: []string{"b 25", "c", "s", "s", "b total", "c", "p x", "c"}},
	{name: "break_file", commands: []string{"b pdbcmds.py:9", "b other.py:3", "b nosuch", "b 9.5", "c", "p x"}},
	{name: "break_func_defined", commands: []string{"n", "n", "n", "n", "n", "b shout", "b total", "b square", "c", "c", "c"}},
	// issue 20: p NAME, a and display at --Return-- stops read the frame's locals there
	{name: "return_locals", commands: []string{"b 3", "c", "display result", "n", "p result", "p n", "a", "c", "n", "p result", "p n", "u", "p acc", "d", "p result", "undisplay", "r", "p acc", "p i"}},
	{name: "retval", commands: []string{"b 3", "c", "retval", "n", "retval", "rv", "u", "retval", "d", "rv", "r", "rv"}},
	{name: "display", commands: []string{"display acc", "display i", "n", "n", "n", "b 25", "c", "s", "display acc", "display", "n", "n", "n", "display x", "n", "undisplay acc", "n", "n", "n", "undisplay nope", "display", "undisplay", "display", "r", "n"}},
	{name: "restart", commands: []string{"b 9", "tbreak 2", "c", "c", "p x", "restart", "c", "p x", "n", "run", "b", "c", "l", "s"}},
	{name: "display_frames", commands: []string{"b 2", "c", "display result", "u", "display acc", "display", "d", "display", "n", "c", "c", "u", "undisplay", "d", "n"}},

	// Live sessions only: pdb's expression commands in the program's frames.
	{name: "p_expr", live: true, commands: []string{"b 9", "c", "p x * 2 + acc", "p [i, x]", "pp values", "pp ['a' * 50, 'b' * 50]",
		"p nope", "p 1/0", "p", "u", "p xs[1:]", "p values", "p acc", "d", "p acc", "p __name__"}},
	{name: "exec", live: true, commands: []string{"b 9", "c", "!acc = 100", "p acc", "acc", "acc + 1", "!print('hi', x)", "x = 7", "p x",
		"n", "p acc", "!nope", "!", "!1/0", "u", "!values", "d", "c", "p acc", "p out", "p x"}},
	{name: "display_expr", live: true, commands: []string{"b 9", "c", "display acc * 10", "display x + 1", "display nope", "display",
		"c", "c", "undisplay x + 1", "display", "u", "display values[0]", "display", "d", "c"}},
	{name: "jump", live: true, commands: []string{"b 24", "c", "j 26", "p values", "n", "p msg", "j 99", "j x", "p out"}},
	{name: "jump_frames", live: true, commands: []string{"b 2", "c", "u", "j 9", "d", "j 3", "p result", "p n"}},
	// pdb's post-mortem at a KeyError raised two calls deep: the traceback,
	// the frames of the traceback for w/u/d/p/pp/!/a/ll, then c restarts.
	{name: "post_mortem", live: true, file: "pm.py", commands: []string{"c", "w", "p k", "pp d", "p v + '!'", "u", "p key", "!key", "key",
		"nope", "a", "d", "d", "ll", "display k", "u", "u", "p data", "p outer.__name__", "c", "p data", "n", "b 3", "c", "c", "s", "p data"}},
}

var (
	pdbHeaders = map[string]*regexp.Regexp{}
	tbFile     = regexp.MustCompile(`^  File "(?:[^"]*/)?([^"/]*)", line (\d+), in (\S+)$`)
	pmRestart  = regexp.MustCompile(`^Post mortem debugger finished\. The \S*?([^/ ]+) will be restarted$`)
	pyError    = regexp.MustCompile(`^\*\*\* (\w+(Error|Exception)(: |$)|Jump failed: |You can only jump|The 'jump' command)`)
	pdbListing = regexp.MustCompile(`^\s*(\d+)\s+(B?)(->|>>)?\s*\t(.*)$`)
	ndbListing = regexp.MustCompile(`^\s*(\d+) (B| ) (->|  ) ?(.*)$`)
	// breakpoints are compared with their numbers
	breakSet    = regexp.MustCompile(`^Breakpoint (\d+) at \S*?([^/]+):(\d+)$`)
	deleted     = regexp.MustCompile(`^Deleted breakpoint (\d+) at \S*?([^/]+):(\d+)$`)
	sysExitNote = regexp.MustCompile(`The program exited via sys\.exit\(\)\. Exit status: \S*`)
	// pdb names the file by its path, ndb by the name it was given
	filePath = regexp.MustCompile(`(^|\s)/\S*/([^/\s]+\.py)`)
)

func pdbHeader(fixture string) *regexp.Regexp {
	if pdbHeaders[fixture] == nil {
		pdbHeaders[fixture] = regexp.MustCompile(`^([> ]) \S*?` + regexp.QuoteMeta(fixture) + `\((\d+)\)(\S+)$`)
	}
	return pdbHeaders[fixture]
}

// reduce turns one command's output into the lines pdb and ndb share. With
// exact, errors that Python raised (and jump's) are compared in full.
func reduce(chunk string, pdb bool, fixture string, exact bool) []string {
	if pdb && strings.Contains(chunk, "The program finished and will be restarted") ||
		!pdb && strings.Contains(chunk, "--Exit-- the program finished") {
		return []string{"EXIT"} // pdb restarts; ndb stays at the exit (no command follows one here)
	}
	if m := sysExitNote.FindString(chunk); m != "" {
		return []string{m, "EXIT"} // pdb restarts; ndb stays at the exit
	}
	var out []string
	context := false // ndb: the source lines a stop shows under its header
	for _, l := range strings.Split(chunk, "\n") {
		if m := pdbHeader(fixture).FindStringSubmatch(strings.TrimRight(l, " ")); m != nil {
			out = append(out, fmt.Sprintf("%s %s(%s)%s", m[1], fixture, m[2], m[3]))
			context = !pdb
			continue
		}
		if m := tbFile.FindStringSubmatch(l); m != nil { // a traceback: the program's frames only
			if m[1] == fixture {
				out = append(out, fmt.Sprintf("File %s, line %s, in %s", m[1], m[2], m[3]))
			}
			continue
		}
		if m := pmRestart.FindStringSubmatch(l); m != nil {
			out = append(out, "POST MORTEM RESTART "+m[1])
			continue
		}
		listing := ndbListing
		if pdb {
			listing = pdbListing
		}
		if m := listing.FindStringSubmatch(l); m != nil {
			if context {
				continue
			}
			out = append(out, fmt.Sprintf("%s%s%s %s", m[1], strings.TrimSpace(m[2]), strings.TrimSpace(m[3]), strings.TrimRight(m[4], " ")))
			continue
		}
		if m := breakSet.FindStringSubmatch(l); m != nil {
			out = append(out, fmt.Sprintf("break %s %s:%s", m[1], m[2], m[3]))
			continue
		}
		if m := deleted.FindStringSubmatch(l); m != nil {
			out = append(out, fmt.Sprintf("deleted %s %s:%s", m[1], m[2], m[3]))
			continue
		}
		l = strings.TrimRight(l, " ")
		if strings.HasPrefix(l, "Restarting ") && strings.HasSuffix(l, " with arguments:") ||
			!pdb && strings.HasPrefix(l, "Restarting "+pdbFixture+": ") {
			out = append(out, "RESTART")
			continue
		}
		switch {
		case pdb && l == "\t": // pdb's restart: the arguments, none here
		case l == "", strings.HasPrefix(l, "-> "), strings.HasPrefix(l, "locals: "):
		case !pdb && strings.HasPrefix(l, "    "): // a traceback's source lines (pdb's fall under "  " below)
		case exact && pyError.MatchString(l):
			out = append(out, l)
		case strings.HasPrefix(l, "*** "):
			out = append(out, "***")
		case pdb && strings.HasPrefix(l, "  "):
			// frames outside the program (bdb, <string>)
		default:
			out = append(out, filePath.ReplaceAllString(l, "$1$2"))
		}
	}
	return out
}

func splitPrompts(out, prompt string) []string {
	return strings.Split(out, prompt)
}

func TestPdbCommands(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	for _, tc := range pdbCmdCases {
		for _, live := range []bool{false, true} {
			if tc.live && !live || testing.Short() && live && !tc.live {
				continue
			}
			name := tc.name
			if live && !tc.live {
				name += "/live" // the recorded cases again on a live session: the same output
			}
			t.Run(name, func(t *testing.T) { comparePdb(t, python, tc, live) })
		}
	}
}

func comparePdb(t *testing.T, python string, tc pdbCase, live bool) {
	fixture := tc.file
	if fixture == "" {
		fixture = pdbFixture
	}
	in := strings.Join(tc.commands, "\n") + "\nq\n"
	cmd := exec.Command(python, "-m", "pdb", fixture)
	cmd.Dir = "testdata"
	cmd.Stdin = strings.NewReader(in)
	pdbOut, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m pdb: %v\n%s", err, pdbOut)
	}
	var s *debugger.Session
	if live {
		s = newLiveScriptSession(t, fixture, tracer.Limits{})
	} else {
		s = newScriptSession(t, fixture)
	}
	var ndbOut bytes.Buffer
	if err := New(s, Options{Name: fixture}).Run(context.Background(), strings.NewReader(in), &ndbOut, false); err != nil {
		t.Fatal(err)
	}
	p, n := splitPrompts(string(pdbOut), "(Pdb) "), splitPrompts(ndbOut.String(), "(ndb) ")
	if len(p) < len(tc.commands)+1 || len(n) < len(tc.commands)+1 {
		t.Fatalf("%d pdb and %d ndb outputs for %d commands\npdb:\n%s\nndb:\n%s", len(p), len(n), len(tc.commands), pdbOut, ndbOut.String())
	}
	for i := 0; i <= len(tc.commands); i++ {
		what := "the start"
		if i > 0 {
			what = fmt.Sprintf("command %d %q", i, tc.commands[i-1])
		}
		want, got := reduce(p[i], true, fixture, tc.live), reduce(n[i], false, fixture, tc.live)
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Errorf("%s:\npdb:\n  %s\nndb:\n  %s\n(pdb's output:\n%s)\n(ndb's output:\n%s)", what, strings.Join(want, "\n  "), strings.Join(got, "\n  "), p[i], n[i])
		}
	}
}

// predictingBackend hides the trace backend's own breakpoint logic, as a
// model engine's backend has none: the session then weighs conditions and
// clears temporary breakpoints at the stops a continue returns.
type predictingBackend struct{ b *debugger.TraceBackend }

func (p predictingBackend) Start(ctx context.Context) (debugger.Stop, error) { return p.b.Start(ctx) }
func (p predictingBackend) Next(ctx context.Context, h []debugger.Step, c debugger.Command) (debugger.Stop, error) {
	return p.b.Next(ctx, h, c)
}
func (p predictingBackend) Source() string { return p.b.Source() }

func TestConditionsWithoutPdbLogic(t *testing.T) {
	tracerOnce.Do(func() { tracerInst, tracerErr = tracer.New(tracer.Options{Python: "python3"}) })
	if tracerErr != nil {
		t.Skipf("no tracer: %v", tracerErr)
	}
	src, err := tracer.ReadSource(filepath.Join("testdata", pdbFixture))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tracerInst.Trace(context.Background(), tracer.Program{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := debugger.NewSession(ctx, predictingBackend{debugger.NewTraceBackend(tr)})
	if err != nil {
		t.Fatal(err)
	}
	term := New(s, Options{Name: pdbFixture})
	for _, c := range []struct{ cmd, want string }{
		{"b square", "*** function breakpoints need the real engine"},
		{"tbreak 9, x == 2", "Breakpoint 1 at pdbcmds.py:9"},
		{"b 2, n > 2", "Breakpoint 2 at pdbcmds.py:2"},
		{"b 3, result.pop() > 0", "*** condition \"result.pop() > 0\": " + debugger.ConditionHelp + "; Python expressions are evaluated only where the real engine runs the program live"},
		{"c", "> 9 x=2"},
		{"b", "Num Type         Disp Enb   Where\n2   breakpoint   keep yes   at pdbcmds.py:2\n\tstop only if n > 2\n\tbreakpoint already hit 1 time"},
		{"c", "> 2 n=3"},
		{"c", "exit"},
	} {
		res, err := term.Exec(ctx, c.cmd)
		var got string
		switch {
		case err != nil:
			got = "*** " + err.Error()
		case res.Moved && res.Stop.IsExit():
			got = "exit"
		case res.Moved:
			v := "x"
			if res.Stop.Lineno == 2 {
				v = "n"
			}
			val, _ := res.Stop.Locals.Get(v)
			got = fmt.Sprintf("> %d %s=%s", res.Stop.Lineno, v, val)
		default:
			got = res.Message
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.cmd, got, c.want)
		}
	}
}

func TestFunctionRange(t *testing.T) {
	ix := pysource.New("import x\n\n@deco\n@deco2(1)\ndef f(a):\n    '''doc'''\n    def g():\n        return 1\n\n    # tail\n    return g()\n# after\n\nclass C:\n    def m(self):\n        pass\nv = [i for i in x]\n")
	for _, c := range []struct {
		fn          string
		line        int
		first, last int
	}{
		{"f", 3, 3, 11}, {"f", 6, 3, 11}, {"f", 11, 3, 11}, {"g", 8, 7, 8}, {"g", 7, 7, 8}, {"m", 16, 15, 16},
		{"<module>", 17, 1, 17}, {"<listcomp>", 17, 17, 17},
	} {
		first, last := functionRange(ix, debugger.Stop{State: tracer.State{Function: c.fn, Lineno: c.line}})
		if first != c.first || last != c.last {
			t.Errorf("%s at line %d: %d-%d, want %d-%d", c.fn, c.line, first, last, c.first, c.last)
		}
	}
}

// TestRestart: restart (run) goes back to the first stop on the real engine
// and on a model engine (predictedBackend), drops the history, keeps the
// breakpoints and the displays, and the run from there is the same.
func TestRestart(t *testing.T) {
	for _, engine := range []string{"real", "model"} {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			s := newSession(t, "f([1, 2])")
			if engine == "model" {
				var err error
				if s, err = debugger.NewSession(ctx, &predictedBackend{Backend: s.Backend()}); err != nil {
					t.Fatal(err)
				}
			}
			first := s.Current()
			term := New(s, Options{Name: "prog.py"})
			restarted := "Restarting prog.py: back to its first stop; the history before it is dropped (breakpoints and displays are kept)"
			for _, c := range []struct{ cmd, want string }{
				{"b 10", "Breakpoint 1 at prog.py:10"},
				{"c", "> 10 acc=0"},
				{"display acc", "display acc: 0"},
				{"c", "> 10 acc=1 | display acc: 1  [old: 0]"},
				{"restart", restarted + " | > 16 start"},
				{"restart 1 2", "*** restart takes no arguments here: the run's arguments are those ndb debug was given (arguments need the real engine's live session)"},
				{"b", "Num Type         Disp Enb   Where\n1   breakpoint   keep yes   at prog.py:10\n\tbreakpoint already hit 2 times"},
				{"c", "> 10 acc=0 | display acc: 0  [old: 1]"},
				{"display", "Currently displaying:\nacc: 0"},
				{"s", "--Call-- add"},
				{"run", restarted + " | > 16 start"},
				{"rs", "exit inv_exit_entry"},
				{"run", restarted + " | > 16 start"},
				{"", restarted + " | > 16 start"}, // an empty line repeats it, as in pdb
			} {
				res, err := term.Exec(ctx, c.cmd)
				var parts []string
				switch {
				case err != nil:
					parts = append(parts, "*** "+err.Error())
				case res.Moved:
					parts = append(parts, res.Notes...)
					st := res.Stop
					switch {
					case st.IsExit():
						parts = append(parts, "exit "+st.Exit)
					case st.Event == tracer.EventCall && st.Function != "main":
						parts = append(parts, "--Call-- "+st.Function)
					case st.Lineno == first.Lineno && st.Event == first.Event && st.Function == first.Function:
						parts = append(parts, "> 16 start")
						if len(s.History()) != 1 || st.Predicted != first.Predicted || !reflect.DeepEqual(st, first) {
							t.Errorf("%s: %d steps of history (want 1), stop %+v, want the first %+v", c.cmd, len(s.History()), st, first)
						}
					default:
						v, _ := st.Locals.Get("acc")
						parts = append(parts, fmt.Sprintf("> %d acc=%s", st.Lineno, v))
					}
					if st.Predicted != (engine == "model") {
						t.Errorf("%s: predicted=%v on the %s engine", c.cmd, st.Predicted, engine)
					}
					parts = append(parts, res.Displays...)
				default:
					parts = append(parts, res.Message)
				}
				if got := strings.Join(parts, " | "); got != c.want {
					t.Errorf("%q: %q, want %q", c.cmd, got, c.want)
				}
			}
		})
	}
}

// TestFunctionRangeAsInspect: longlist's range is inspect.getsourcelines'
// (3.11, checked by hand with python3.11): a line that continues a
// statement at column 0 is in the body, comments after the body indented
// as deep as it are in it, a class body's frame shows its class. The
// indentation reading before the index ended f at line 6 and showed a
// class body's line alone.
func TestFunctionRangeAsInspect(t *testing.T) {
	ix := pysource.New("import functools\ndef deco(f): return f\n\n@deco\ndef f(x):\n    y = (1,\n2)\n    return x\n    # trailing\n  # less indented\n        # more\nx = 3\nclass A:\n    z = 1\n\n    # end of A\n")
	for _, c := range []struct {
		fn          string
		line        int
		first, last int
	}{{"f", 4, 4, 11}, {"f", 7, 4, 11}, {"deco", 2, 2, 2}, {"A", 13, 13, 16}, {"A", 14, 13, 16}} {
		first, last := functionRange(ix, debugger.Stop{State: tracer.State{Function: c.fn, Lineno: c.line}})
		if first != c.first || last != c.last {
			t.Errorf("%s at line %d: %d-%d, want %d-%d", c.fn, c.line, first, last, c.first, c.last)
		}
	}
}

// TestFunctionsByName: b FUNC's lookups read the index: a def inside a
// string or a comment is no function (the regular expressions before took
// `def ghost(` in a docstring), an async def is not what pdb's
// find_function finds, an indented def is not a top-level one.
func TestFunctionsByName(t *testing.T) {
	src := "DOC = '''\ndef ghost():\n'''\n# def phantom():\nasync def co():\n    pass\nif True:\n    def inner():\n        pass\ndef real(\n        x):\n    return x\n"
	ix := pysource.New(src)
	for name, want := range map[string]int{"ghost": 0, "phantom": 0, "co": 0, "inner": 0, "real": 10} {
		if got := pdbFindFunction(ix, name); got != want {
			t.Errorf("pdbFindFunction(%q) = %d, want %d", name, got, want)
		}
	}
	if got := topLevelFunctions(src); !reflect.DeepEqual(got, []string{"co", "real"}) {
		t.Errorf("topLevelFunctions = %q, want co, real", got)
	}
}
