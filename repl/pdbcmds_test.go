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

var pdbCmdCases = []struct {
	name     string
	commands []string
}{
	{"up_down", []string{"b square", "c", "w", "u", "p acc", "a", "w", "u", "p values", "d", "d", "d", "p n", "u 2", "d 5", "d", "u", "u", "ll", "l"}},
	{"longlist", []string{"ll", "b 20", "c", "ll", "l", "u", "ll", "s", "s", "ll"}},
	{"list_frames", []string{"b 2", "c", "l", "l", "u", "l", "d", "l 1, 3"}},
	{"tbreak_cond", []string{"tbreak 9, x == 2", "b 2, n >= 3", "b", "c", "p x", "p i", "c", "p n", "c", "p n", "b"}},
	{"tbreak_plain", []string{"tbreak 2", "c", "c"}},
	{"tbreak_step", []string{"b 25", "c", "s", "n", "n", "tbreak 9", "n", "n", "n", "c", "p x", "c"}},
	{"cond_error", []string{"b 9, nope == 1", "tbreak 2, nope", "c", "c", "c", "p n", "c", "p n"}},
	{"cond_forms", []string{"b 9, not acc", "b 3, result != 1", "c", "p acc", "c", "p result", "c", "p result", "c"}},
	{"break_func", []string{"b square", "b shout", "b", "c", "p n", "c", "p n", "c", "p n", "c"}},
	{"break_func_first_line", []string{"b 25", "c", "s", "s", "b total", "c", "p x", "c"}},
	{"break_file", []string{"b pdbcmds.py:9", "b other.py:3", "b nosuch", "b 9.5", "c", "p x"}},
	{"break_func_defined", []string{"n", "n", "n", "n", "n", "b shout", "b total", "b square", "c", "c", "c"}},
	// issue 20: p NAME, a and display at --Return-- stops read the frame's locals there
	{"return_locals", []string{"b 3", "c", "display result", "n", "p result", "p n", "a", "c", "n", "p result", "p n", "u", "p acc", "d", "p result", "undisplay", "r", "p acc", "p i"}},
	{"retval", []string{"b 3", "c", "retval", "n", "retval", "rv", "u", "retval", "d", "rv", "r", "rv"}},
	{"display", []string{"display acc", "display i", "n", "n", "n", "b 25", "c", "s", "display acc", "display", "n", "n", "n", "display x", "n", "undisplay acc", "n", "n", "n", "undisplay nope", "display", "undisplay", "display", "r", "n"}},
	{"restart", []string{"b 9", "tbreak 2", "c", "c", "p x", "restart", "c", "p x", "n", "run", "b", "c", "l", "s"}},
	{"display_frames", []string{"b 2", "c", "display result", "u", "display acc", "display", "d", "display", "n", "c", "c", "u", "undisplay", "d", "n"}},
}

var (
	pdbHeader   = regexp.MustCompile(`^([> ]) \S*?` + regexp.QuoteMeta(pdbFixture) + `\((\d+)\)(\S+)$`)
	pdbListing  = regexp.MustCompile(`^\s*(\d+)\s+(B?)(->|>>)?\s*\t(.*)$`)
	ndbListing  = regexp.MustCompile(`^\s*(\d+) (B| ) (->|  ) ?(.*)$`)
	pdbBreakSet = regexp.MustCompile(`^Breakpoint \d+ at \S*:(\d+)$`)
	ndbBreakSet = regexp.MustCompile(`^(?:Temporary b|B)reakpoint at line (\d+)$`)
	pdbDeleted  = regexp.MustCompile(`^Deleted breakpoint \d+ at \S*:(\d+)$`)
	ndbDeleted  = regexp.MustCompile(`^Deleted breakpoint at line (\d+)$`)
)

// reduce turns one command's output into the lines pdb and ndb share.
func reduce(chunk string, pdb bool) []string {
	if pdb && strings.Contains(chunk, "The program finished and will be restarted") ||
		!pdb && strings.Contains(chunk, "--Exit-- the program finished") {
		return []string{"EXIT"} // pdb restarts; ndb stays at the exit (no command follows one here)
	}
	var out []string
	context := false // ndb: the source lines a stop shows under its header
	for _, l := range strings.Split(chunk, "\n") {
		if m := pdbHeader.FindStringSubmatch(strings.TrimRight(l, " ")); m != nil {
			out = append(out, fmt.Sprintf("%s %s(%s)%s", m[1], pdbFixture, m[2], m[3]))
			context = !pdb
			continue
		}
		listing, set, del := ndbListing, ndbBreakSet, ndbDeleted
		if pdb {
			listing, set, del = pdbListing, pdbBreakSet, pdbDeleted
		}
		if m := listing.FindStringSubmatch(l); m != nil {
			if context {
				continue
			}
			out = append(out, fmt.Sprintf("%s%s%s %s", m[1], strings.TrimSpace(m[2]), strings.TrimSpace(m[3]), strings.TrimRight(m[4], " ")))
			continue
		}
		if m := set.FindStringSubmatch(l); m != nil {
			out = append(out, "break "+m[1])
			continue
		}
		if m := del.FindStringSubmatch(l); m != nil {
			out = append(out, "deleted "+m[1])
			continue
		}
		l = strings.TrimRight(l, " ")
		if pdb && strings.HasPrefix(l, "Restarting ") && strings.HasSuffix(l, " with arguments:") ||
			!pdb && strings.HasPrefix(l, "Restarting "+pdbFixture+": ") {
			out = append(out, "RESTART")
			continue
		}
		switch {
		case pdb && l == "\t": // pdb's restart: the arguments, none here
		case l == "", strings.HasPrefix(l, "-> "), strings.HasPrefix(l, "locals: "):
		case strings.HasPrefix(l, "*** "):
			out = append(out, "***")
		case pdb && (strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "Num Type") || strings.HasPrefix(l, "\tstop only if") ||
			strings.HasPrefix(l, "\tbreakpoint already hit") || regexp.MustCompile(`^\d+\s+breakpoint`).MatchString(l)):
			// frames outside the program (bdb, <string>), pdb's breakpoint table
		case !pdb && (strings.HasPrefix(l, "breakpoint at line ") || strings.HasPrefix(l, "\tstop only if") || l == "no breakpoints"):
			// ndb's breakpoint list
		default:
			out = append(out, l)
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
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Join(tc.commands, "\n") + "\nq\n"
			cmd := exec.Command(python, "-m", "pdb", pdbFixture)
			cmd.Dir = "testdata"
			cmd.Stdin = strings.NewReader(in)
			pdbOut, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("python3 -m pdb: %v\n%s", err, pdbOut)
			}
			s := newScriptSession(t, pdbFixture)
			var ndbOut bytes.Buffer
			if err := New(s, Options{Name: pdbFixture}).Run(context.Background(), strings.NewReader(in), &ndbOut, false); err != nil {
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
				want, got := reduce(p[i], true), reduce(n[i], false)
				if strings.Join(want, "\n") != strings.Join(got, "\n") {
					t.Errorf("%s:\npdb:\n  %s\nndb:\n  %s\n(pdb's output:\n%s)", what, strings.Join(want, "\n  "), strings.Join(got, "\n  "), p[i])
				}
			}
		})
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
		{"tbreak 9, x == 2", "Temporary breakpoint at line 9"},
		{"b 2, n > 2", "Breakpoint at line 2"},
		{"c", "> 9 x=2"},
		{"b", "breakpoint at line 2: result = n * n\n\tstop only if n > 2"},
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
	lines := debugger.SourceLines("import x\n\n@deco\n@deco2(1)\ndef f(a):\n    '''doc'''\n    def g():\n        return 1\n\n    # tail\n    return g()\n# after\n\nclass C:\n    def m(self):\n        pass\nv = [i for i in x]\n")
	for _, c := range []struct {
		fn          string
		line        int
		first, last int
	}{
		{"f", 3, 3, 11}, {"f", 6, 3, 11}, {"f", 11, 3, 11}, {"g", 8, 7, 8}, {"g", 7, 7, 8}, {"m", 16, 15, 16},
		{"<module>", 17, 1, 17}, {"<listcomp>", 17, 17, 17},
	} {
		first, last := functionRange(lines, debugger.Stop{State: tracer.State{Function: c.fn, Lineno: c.line}})
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
				{"b 10", "Breakpoint at line 10"},
				{"c", "> 10 acc=0"},
				{"display acc", "display acc: 0"},
				{"c", "> 10 acc=1 | display acc: 1  [old: 0]"},
				{"restart", restarted + " | > 16 start"},
				{"restart 1 2", "*** restart takes no arguments: the run's arguments are those ndb debug was given"},
				{"b", "breakpoint at line 10: acc = add(acc, x)"},
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
