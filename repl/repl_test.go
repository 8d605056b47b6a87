package repl

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chzyer/readline"

	"ndb/debugger"
	"ndb/tracer"
)

var update = flag.Bool("update", false, "rewrite golden files and the command table of docs/debugger.md")

var (
	tracerOnce sync.Once
	tracerInst *tracer.Tracer
	tracerErr  error
)

func newSession(t *testing.T, call string) *debugger.Session {
	t.Helper()
	tracerOnce.Do(func() { tracerInst, tracerErr = tracer.New(tracer.Options{Python: "python3"}) })
	if tracerErr != nil {
		t.Skipf("no tracer: %v", tracerErr)
	}
	src, err := tracer.ReadSource("testdata/prog.py")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tracerInst.Trace(context.Background(), tracer.Program{Source: src, Call: call})
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(context.Background(), debugger.NewTraceBackend(tr))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./repl -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test ./repl -update rewrites it)\ngot:\n%s", name, path, got)
	}
}

var batchCases = []struct {
	name, call string
	commands   []string
}{
	{"batch_steps", "f([1, 2])", []string{"s", "s", "n", "n", "s", "p total", "r", "w", "a", "unt", "n", "n", "n", "n", "n", "s", "s"}},
	{"batch_breaks", "f([1, 2])", []string{"b 2", "b 3", "b", "c", "c", "cl 2", "c", "rs", "rn", "rr", "rc", "rc", "rc", "s", "cl", "c", "s", "rs"}},
	{"batch_errors", "f([4, 5])", []string{"b 8", "b 99", "b x", "cl 5", "unt 1", "p nope", "jump 3", "s extra", "l", "l", "l 1, 3", "c", "p acc"}},
	{"batch_restart", "f([1, 2])", []string{"b 10", "c", "c", "p acc", "restart", "c", "p acc", "rs", "run", "restart now", "rs", "cl", "c", "restart", "s"}},
}

// TestBatch runs the batch mode's code path in-process against golden files.
func TestBatch(t *testing.T) {
	for _, tc := range batchCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, tc.call)
			var out bytes.Buffer
			in := strings.NewReader(strings.Join(tc.commands, "\n") + "\n\n")
			if err := Batch(context.Background(), New(s, Options{Name: "prog.py"}), in, &out); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != len(tc.commands)+1 {
				t.Fatalf("%d lines for %d commands:\n%s", len(lines), len(tc.commands), out.String())
			}
			for i, l := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("line %d is not JSON: %s", i, l)
				}
				_, moved := m["event"]
				_, bad := m["error"]
				if moved && bad {
					t.Errorf("line %d has both event and error: %s", i, l)
				}
				if ev, _ := m["event"].(string); moved && ev != "exit" {
					for _, k := range []string{"lineno", "function", "depth", "src", "locals"} {
						if _, ok := m[k]; !ok {
							t.Errorf("line %d lacks %q: %s", i, k, l)
						}
					}
				}
			}
			golden(t, tc.name, out.Bytes())
		})
	}
}

func TestBatchQuit(t *testing.T) {
	s := newSession(t, "f([1])")
	var out bytes.Buffer
	if err := Batch(context.Background(), New(s, Options{}), strings.NewReader("s\nq\ns\n"), &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Errorf("want 3 lines (start, s, quit), got:\n%s", out.String())
	}
}

// TestTerminal runs the interactive loop over a plain reader.
func TestTerminal(t *testing.T) {
	s := newSession(t, "f([1, 2])")
	var out bytes.Buffer
	in := strings.NewReader("s\ns\nn\n\nn\ns\nb 3\nc\nw\nrs\nrr\nh\nh b\nbogus\nq\n")
	if err := New(s, Options{Name: "prog.py"}).Run(context.Background(), in, &out, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "terminal", out.Bytes())
}

func TestColorMarksChangesAndLine(t *testing.T) {
	s := newSession(t, "f([1, 2])")
	term := New(s, Options{Name: "prog.py", Color: true})
	ctx := context.Background()
	for _, c := range []string{"s", "s", "n"} {
		if _, err := term.Exec(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	res, err := term.Exec(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	view := term.RenderStop(res.Stop)
	if !strings.Contains(view, ansiReverse) || !strings.Contains(view, ansiYellow+ansiBold+"acc = 0") {
		t.Errorf("no highlighting:\n%q", view)
	}
}

func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Commands {
		if c.Help == "" || c.run == nil {
			t.Errorf("%s: no help or handler", c.Name)
		}
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if seen[n] {
				t.Errorf("name %q used twice", n)
			}
			seen[n] = true
			if got, ok := Lookup(n); !ok || got.Name != c.Name {
				t.Errorf("Lookup(%q) = %v", n, got)
			}
		}
	}
	// Every command the issue asks for is there.
	for _, n := range strings.Fields("s step n next r return c continue unt until b break cl clear l list p pp a args w where h help rs rn rr rc restart run") {
		if !seen[n] {
			t.Errorf("missing command %q", n)
		}
	}
}

const docsBegin, docsEnd = "<!-- commands:begin -->\n", "<!-- commands:end -->"

// TestDocsCommandTable fails when docs/debugger.md's command table is not
// the terminal's own (go test ./repl -update rewrites it).
func TestDocsCommandTable(t *testing.T) {
	path := filepath.Join("..", "docs", "debugger.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, docsBegin), strings.Index(s, docsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q ... %q markers", path, docsBegin, docsEnd)
	}
	fresh := s[:i+len(docsBegin)] + HelpTable() + s[j:]
	if fresh == s {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(fresh), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the command table is stale (go test ./repl -update)", path)
}

// handTrace is a small trace built by hand, for tests that need no Python.
func handTrace() *tracer.Trace {
	src := "def g(x):\n    return x + 1\n\ndef main():\n    y = g(1)\n    return y\n"
	lines := debugger.SourceLines(src)
	st := func(ev string, line int, fn string, depth, frame int, arg string, locals ...string) tracer.State {
		var l tracer.Locals
		for i := 0; i+1 < len(locals); i += 2 {
			l = append(l, tracer.Var{Name: locals[i], Value: locals[i+1]})
		}
		return tracer.State{Event: ev, Lineno: line, Function: fn, Depth: depth, Frame: frame, Src: lines[line-1], Arg: arg, Locals: l}
	}
	return &tracer.Trace{Source: src, Call: "g(1)", Exit: tracer.Exit{Kind: tracer.ExitNormal}, States: []tracer.State{
		st("call", 4, "main", 0, 1, ""),
		st("line", 5, "main", 0, 1, ""),
		st("call", 1, "g", 1, 2, "", "x", "1"),
		st("line", 2, "g", 1, 2, "", "x", "1"),
		st("return", 2, "g", 1, 2, "2"),
		st("line", 6, "main", 0, 1, "", "y", "2"),
		st("return", 6, "main", 0, 1, "2"),
	}}
}

// FuzzExec: no command line makes the terminal panic, and batch mode
// answers every command line with exactly one JSON line.
func FuzzExec(f *testing.F) {
	for _, s := range []string{"s", "n 3", "b 2", "b -1", "cl", "l 3, 1", "l 99", "p x", "unt 5", "rc", "rs", "h b", "pp", "restart", "run 1", "\x00", "b 99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n\r") {
			return
		}
		ctx := context.Background()
		s, err := debugger.NewSession(ctx, debugger.NewTraceBackend(handTrace()))
		if err != nil {
			t.Fatal(err)
		}
		term := New(s, Options{})
		for range 3 {
			if res, err := term.Exec(ctx, line); err == nil && res.Moved {
				_ = term.RenderStop(res.Stop)
			}
		}
		var out bytes.Buffer
		if err := Batch(ctx, New(s, Options{}), strings.NewReader(line+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		want := 2
		if strings.TrimSpace(line) == "" {
			want = 1
		}
		if n := strings.Count(out.String(), "\n"); n != want {
			t.Fatalf("%q: %d lines: %s", line, n, out.String())
		}
	})
}

func TestExtraCommands(t *testing.T) {
	s := newSession(t, "")
	var seen []string
	extra := &Extra{
		Help: []ExtraHelp{{Name: "back", Help: "Undo the last step."}},
		Run: func(ctx context.Context, s *debugger.Session, line string) (string, bool, bool, error) {
			seen = append(seen, line)
			if line != "back" {
				return "", false, false, nil
			}
			_, did := s.Back()
			return "undid", did, true, nil
		},
	}
	term := New(s, Options{Extra: extra})
	ctx := context.Background()
	start := s.Current()
	if _, err := term.Exec(ctx, "n"); err != nil {
		t.Fatal(err)
	}
	res, err := term.Exec(ctx, "back")
	if err != nil || !res.Moved || res.Stop.Index != start.Index {
		t.Fatalf("back: moved=%v stop=%+v err=%v, want the start %d", res.Moved, res.Stop, err, start.Index)
	}
	if _, err := term.Exec(ctx, "nosuch"); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("unknown command: err=%v", err)
	}
	help, err := term.Exec(ctx, "help back")
	if err != nil || !strings.Contains(help.Message, "Undo the last step") {
		t.Fatalf("help back: %q %v", help.Message, err)
	}
	if len(seen) != 2 {
		t.Fatalf("extra handler saw %q, want back and nosuch", seen)
	}
}

// TestInspectAtTheExit: after the program ended, p, a and w all say that
// it is not running (a used to answer "the arguments of this frame are not
// known", as if a frame were there).
func TestInspectAtTheExit(t *testing.T) {
	s := newSession(t, "f([1])")
	term := New(s, Options{})
	if _, err := term.Exec(context.Background(), "c"); err != nil || !s.Current().IsExit() {
		t.Fatalf("c did not reach the exit: %v %+v", err, s.Current())
	}
	for _, cmd := range []string{"p acc", "a", "w"} {
		if _, err := term.Exec(context.Background(), cmd); err == nil || err.Error() != "the program is not running" {
			t.Errorf("%s at the exit: %v, want \"the program is not running\"", cmd, err)
		}
	}
}

// TestOutputAtTheExit: the terminal shows what the real program printed
// once it has ended (it was never shown), and nothing at the entry.
func TestOutputAtTheExit(t *testing.T) {
	trace := &tracer.Trace{Source: "print('hi')\n", Stdout: "hi\n", Exit: tracer.Exit{Kind: tracer.ExitNormal},
		States: []tracer.State{{Event: tracer.EventCall, Function: "<module>", Frame: 1},
			{Event: tracer.EventLine, Lineno: 1, Function: "<module>", Src: "print('hi')", Frame: 1},
			{Event: tracer.EventReturn, Lineno: 1, Function: "<module>", Src: "print('hi')", Arg: "None", Frame: 1}}}
	s, err := debugger.NewSession(context.Background(), debugger.NewTraceBackend(trace))
	if err != nil {
		t.Fatal(err)
	}
	term := New(s, Options{})
	res, err := term.Exec(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	if got := term.RenderStop(res.Stop); got != "--Exit-- the program finished\n--- program output ---\nhi" {
		t.Errorf("exit view %q", got)
	}
	if got := term.RenderStop(debugger.Stop{State: tracer.State{Event: debugger.EventExit}, Exit: debugger.ExitInvEntry}); strings.Contains(got, "hi") {
		t.Errorf("entry view shows the output: %q", got)
	}
}

// TestInterruptKeepsTheSession: Ctrl-C at the prompt cancels the line and
// the session goes on (it used to quit, losing the history); end of input
// still leaves.
func TestInterruptKeepsTheSession(t *testing.T) {
	s := newSession(t, "f([1])")
	term := New(s, Options{})
	inputs := []struct {
		line string
		err  error
	}{{"s", nil}, {"", readline.ErrInterrupt}, {"s", nil}, {"", io.EOF}}
	i := 0
	next := func() (string, error) {
		in := inputs[i]
		i++
		return in.line, in.err
	}
	var out bytes.Buffer
	if err := term.loop(context.Background(), next, &out); err != nil {
		t.Fatal(err)
	}
	if i != len(inputs) || len(s.History()) != 3 || !strings.Contains(out.String(), "--KeyboardInterrupt--") {
		t.Errorf("read %d inputs, %d history entries (want 3), output:\n%s", i, len(s.History()), out.String())
	}
}
