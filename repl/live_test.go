package repl

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ndb/debugger"
	"ndb/tracer"
)

// newLiveSession starts a live session of prog on a tracer of its own
// (a live run holds its tracer); it is closed when the test ends.
func newLiveSession(t *testing.T, prog tracer.Program, lim tracer.Limits) *debugger.Session {
	t.Helper()
	if lim.MaxEvents == 0 {
		lim.MaxEvents = 50_000_000 // engine.LiveMaxEvents: the user decides how long it runs
	}
	tr, err := tracer.New(tracer.Options{Python: "python3", ProgramDir: tracer.ContextDir(prog)})
	if err != nil {
		t.Skipf("no tracer: %v", err)
	}
	ctx := context.Background()
	b, err := debugger.NewLiveBackend(ctx, func(ctx context.Context, out func(string)) (*tracer.Run, error) {
		return tr.Start(ctx, debugger.WithRunArgs(ctx, prog), lim, out) // as the real engine: run ARGS
	}, tr.Close)
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newLiveScriptSession runs testdata/FILE as `python FILE` runs it (its
// file name in tracebacks), live.
func newLiveScriptSession(t *testing.T, file string, lim tracer.Limits) *debugger.Session {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	src, err := tracer.ReadSource(path)
	if err != nil {
		t.Fatal(err)
	}
	return newLiveSession(t, tracer.Program{Path: path, Source: src, Context: &tracer.Context{}}, lim)
}

// exec runs commands on term and returns what each printed, as Run would.
func execAll(t *testing.T, term *Terminal, cmds ...string) []string {
	t.Helper()
	var out []string
	for _, c := range cmds {
		res, err := term.Exec(context.Background(), c)
		switch {
		case err != nil:
			out = append(out, "*** "+err.Error())
		case res.Moved:
			out = append(out, strings.Join(append(res.Notes, term.RenderStop(res.Stop)), "\n"))
		default:
			out = append(out, res.Message)
		}
	}
	return out
}

// TestLiveTimeoutAndInterrupt: continue in an endless loop stops inside
// it, by --timeout (the engine's limit) or by Interrupt from another
// goroutine (what Ctrl-C does), with pdb's note; p then reads the loop's
// counter in the live frame, and the program goes on from there.
func TestLiveTimeoutAndInterrupt(t *testing.T) {
	src := "i = 0\nwhile True:\n    i += 1\n"
	t.Run("timeout", func(t *testing.T) {
		s := newLiveSession(t, tracer.Program{Source: src}, tracer.Limits{Timeout: 500 * time.Millisecond})
		term := New(s, Options{Name: "loop.py", Timeout: 500 * time.Millisecond})
		got := execAll(t, term, "c", "p i > 0", "!i = -5", "n", "p i < 0")
		if !strings.HasPrefix(got[0], "Program interrupted: the command ran for --timeout 500ms without reaching a stop.") ||
			!strings.Contains(got[0], "> loop.py(") || s.Current().Interrupted != "" && s.History()[1].Stop.Interrupted != tracer.PauseTimeout {
			t.Errorf("c: %q (history %+v)", got[0], s.History()[1].Stop)
		}
		if got[1] != "True" || got[4] != "True" {
			t.Errorf("p in the loop: %q", got)
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		s := newLiveSession(t, tracer.Program{Source: src}, tracer.Limits{Timeout: time.Minute})
		term := New(s, Options{Name: "loop.py"})
		go func() {
			time.Sleep(500 * time.Millisecond)
			s.Interrupt()
		}()
		start := time.Now()
		got := execAll(t, term, "c", "p i > 1000")
		if !strings.HasPrefix(got[0], "\nProgram interrupted. (Use 'cont' to resume).\n> loop.py(") || time.Since(start) > 20*time.Second {
			t.Errorf("c: %q after %v", got[0], time.Since(start))
		}
		if got[1] != "True" {
			t.Errorf("p i > 1000: %q", got[1])
		}
	})
	// Ctrl-C itself: SIGINT while the command runs reaches the session.
	t.Run("sigint", func(t *testing.T) {
		keep := make(chan os.Signal, 1) // SIGINT outside the command must not end the test binary
		signal.Notify(keep, os.Interrupt)
		defer signal.Stop(keep)
		s := newLiveSession(t, tracer.Program{Source: src}, tracer.Limits{Timeout: time.Minute})
		sent := make(chan struct{})
		go func() {
			time.Sleep(time.Second)
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			close(sent)
		}()
		var out bytes.Buffer
		if err := New(s, Options{Name: "loop.py"}).Run(context.Background(), strings.NewReader("c\np i > 1000\n"), &out, false); err != nil {
			t.Fatal(err)
		}
		<-sent
		time.Sleep(100 * time.Millisecond) // delivered to keep before it stops
		if !strings.Contains(out.String(), "\nProgram interrupted. (Use 'cont' to resume).\n> loop.py(") || !strings.Contains(out.String(), "(ndb) True\n") {
			t.Errorf("output:\n%s", out.String())
		}
	})
}

// TestLiveOutputStreams: the program's output is printed as it is written,
// before the stop that follows it, and not again at the end; batch mode
// puts it in the "output" field of the line of the command that printed it.
func TestLiveOutputStreams(t *testing.T) {
	src := "print('one')\nx = 1\nprint('two', end='')\nprint('three')\n"
	s := newLiveSession(t, tracer.Program{Source: src}, tracer.Limits{})
	var out bytes.Buffer
	if err := New(s, Options{Name: "out.py"}).Run(context.Background(), strings.NewReader("n\nn\nc\n"), &out, false); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	one, two := strings.Index(got, "(ndb) one\n> out.py(2)<module>()"), strings.Index(got, "(ndb) twothree\n--Exit-- the program finished")
	if one < 0 || two < 0 || strings.Count(got, "one\n") != 1 || strings.Contains(got, "program output") {
		t.Errorf("output:\n%s", got)
	}

	s = newLiveSession(t, tracer.Program{Source: src}, tracer.Limits{})
	out.Reset()
	if err := Batch(context.Background(), New(s, Options{}), strings.NewReader("n\np x\nn\n!print('side')\nc\n"), &out); err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		o, _ := m["output"].(string)
		outputs = append(outputs, o)
	}
	if want := []string{"", "one\n", "", "", "", "twothree\n"}; strings.Join(outputs, "|") != strings.Join(want, "|") {
		t.Errorf("outputs %q, want %q\n%s", outputs, want, out.String())
	}
	if !strings.Contains(out.String(), `{"message":"side"}`) {
		t.Errorf("! print: %s", out.String())
	}
}

// TestLiveRestart: restart runs the program anew: a value set with ! is
// gone, and the output is printed again.
func TestLiveRestart(t *testing.T) {
	src := "x = 1\nprint('ran', x)\ny = 2\n"
	s := newLiveSession(t, tracer.Program{Source: src}, tracer.Limits{})
	var out bytes.Buffer
	in := "n\n!x = 5\nn\nrestart\np x\nn\np x\nn\nrs\np x\n"
	term := New(s, Options{Name: "r.py"})
	if err := term.Run(context.Background(), strings.NewReader(in), &out, false); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"(ndb) ran 5\n> r.py(3)", "(ndb) *** NameError: name 'x' is not defined\n", "(ndb) 1\n", "(ndb) ran 1\n> r.py(3)"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	// rs left the live program behind: p reads recorded locals and says why for an expression
	if res, err := term.Exec(context.Background(), "p x + 1"); err == nil || !strings.Contains(err.Error(), "does not wait at this stop") {
		t.Errorf("p x + 1 in the past: %+v %v", res, err)
	}
	if len(s.History()) != 4 {
		t.Errorf("history after restart: %d steps", len(s.History()))
	}
}

// TestPostMortemReverse: reverse commands still move from the error exit,
// and forward ones from there restart; on a recorded trace (no live
// program) p in post-mortem reads the frame's recorded locals.
func TestPostMortemReverse(t *testing.T) {
	s := newLiveScriptSession(t, "pm.py", tracer.Limits{})
	term := New(s, Options{Name: "pm.py"})
	got := execAll(t, term, "c", "rs", "p k", "p k * 2", "c", "p k * 2", "c")
	if !strings.Contains(got[0], "Uncaught exception. Entering post mortem debugging") || !strings.HasPrefix(got[1], "--Return--\n> pm.py(13)<module>()") {
		t.Errorf("c, rs: %q", got[:2])
	}
	if got[2] != "*** NameError: name \"k\" is not a local here" || !strings.Contains(got[3], "not a local's name, and the program does not wait") {
		t.Errorf("p in the past: %q", got[2:4])
	}
	if !strings.Contains(got[4], "Entering post mortem") || got[5] != "'xx'" {
		t.Errorf("c back to the exit, p: %q", got[4:6])
	}
	if !strings.HasPrefix(got[6], "Post mortem debugger finished. The pm.py will be restarted\n> pm.py(1)<module>()") {
		t.Errorf("c in post-mortem: %q", got[6])
	}
}
