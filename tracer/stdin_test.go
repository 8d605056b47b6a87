package tracer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// stdinProgram writes src to a file of its own and returns it with a
// Context (Input, Stdin as given).
func stdinProgram(t *testing.T, src string, c *Context) Program {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prog.py")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Program{Path: path, Source: src, Context: c}
}

// outputWatch collects a live run's streamed output and lets a test wait
// until it contains a text (the program's prompt).
type outputWatch struct {
	mu  sync.Mutex
	b   strings.Builder
	got chan struct{}
}

func newOutputWatch() *outputWatch { return &outputWatch{got: make(chan struct{}, 1)} }

func (w *outputWatch) write(s string) {
	w.mu.Lock()
	w.b.WriteString(s)
	w.mu.Unlock()
	select {
	case w.got <- struct{}{}:
	default:
	}
}

func (w *outputWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *outputWatch) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(w.String(), text) {
		select {
		case <-w.got:
		case <-deadline:
			t.Fatalf("no %q in the program's output %q", text, w.String())
		}
	}
}

// TestLiveInput: a live run with Context.Input reads what is written to
// it while it runs, as input() at a terminal does: after its prompt, line
// by line, EOF at Close; what it does not read does not block the run.
func TestLiveInput(t *testing.T) {
	const twoNames = "a = input('first? ')\nb = input('second? ')\nprint('hi', a, b)\n"
	for _, tc := range []struct {
		name   string
		src    string
		feed   func(t *testing.T, in *Input, w *outputWatch)
		stdout string
		exit   string // Exit.Kind
		errHas string // in Exit.Error
		// twoStep: the program starts by fork, unshare, fork (where the
		// one-step clone is not available): its middle process must not
		// hold the pipe's write end, or EOF never comes
		twoStep bool
	}{
		{"line", "name = input('name? ')\nprint('hi', name)\n", func(t *testing.T, in *Input, w *outputWatch) {
			w.waitFor(t, "name? ")
			if _, err := in.Write([]byte("Ada\n")); err != nil {
				t.Fatal(err)
			}
		}, "name? hi Ada\n", ExitNormal, "", false},
		{"two lines in one write", twoNames, func(t *testing.T, in *Input, w *outputWatch) {
			w.waitFor(t, "first? ")
			in.Write([]byte("Ada\nGrace\n"))
		}, "first? second? hi Ada Grace\n", ExitNormal, "", false},
		{"line by line", twoNames, func(t *testing.T, in *Input, w *outputWatch) {
			w.waitFor(t, "first? ")
			in.Write([]byte("Ada\n"))
			w.waitFor(t, "second? ")
			in.Write([]byte("Grace\n"))
		}, "first? second? hi Ada Grace\n", ExitNormal, "", false},
		{"eof", "name = input('name? ')\n", func(t *testing.T, in *Input, w *outputWatch) {
			w.waitFor(t, "name? ")
			if err := in.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := in.Write([]byte("late\n")); !errors.Is(err, ErrInputClosed) {
				t.Errorf("Write after Close: %v, want ErrInputClosed", err)
			}
		}, "name? ", ExitError, "EOFError", false},
		{"eof, two-step start", "import sys\nprint(repr(sys.stdin.read()))\n", func(t *testing.T, in *Input, w *outputWatch) {
			in.Write([]byte("x"))
			in.Close()
		}, "'x'\n", ExitNormal, "", true},
		{"sys.stdin.read to eof", "import sys\nprint(repr(sys.stdin.read()))\n", func(t *testing.T, in *Input, w *outputWatch) {
			in.Write([]byte("x\ny"))
			in.Close()
		}, "'x\\ny'\n", ExitNormal, "", false},
		{"not read", "print('done')\n", func(t *testing.T, in *Input, w *outputWatch) {
			// more than the pipe and the worker's 1 MiB hold: dropped, not blocking
			in.Write(bytes.Repeat([]byte("z"), 3<<20))
		}, "done\n", ExitNormal, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := liveTracer(t)
			if tc.twoStep {
				var err error
				if tt, err = New(Options{Python: os.Getenv("NDB_PYTHON"), noFastClone: true}); err != nil {
					t.Fatal(err)
				}
				defer tt.Close()
			}
			in := NewInput()
			p := stdinProgram(t, tc.src, &Context{Input: in})
			w := newOutputWatch()
			r, err := tt.Start(context.Background(), p, Limits{}, w.write)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			done := make(chan error, 1)
			go func() { done <- r.Resume(context.Background(), Pause{Depth: -1}) }()
			tc.feed(t, in, w)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			tr := r.Trace()
			if !r.Ended() || tr.Exit.Kind != tc.exit || !strings.Contains(tr.Exit.Error, tc.errHas) {
				t.Fatalf("ended %v, exit %+v; want %s with %q", r.Ended(), tr.Exit, tc.exit, tc.errHas)
			}
			if tr.Stdout != tc.stdout || w.String() != tc.stdout {
				t.Errorf("stdout %q (streamed %q), want %q", tr.Stdout, w.String(), tc.stdout)
			}
		})
	}
}

// TestLiveInputRestart: the runs started one after another with one Input
// each get an open pipe of their own (pdb's restart: the program reads the
// terminal again), and a whole run ignores Input (its stdin is empty).
func TestLiveInputRestart(t *testing.T) {
	const src = "name = input('name? ')\nprint('hi', name)\n"
	tt := liveTracer(t)
	in := NewInput()
	p := stdinProgram(t, src, &Context{Input: in})
	if _, err := in.Write([]byte("early\n")); !errors.Is(err, ErrInputClosed) {
		t.Errorf("Write before any run: %v, want ErrInputClosed", err)
	}
	for i, name := range []string{"Ada", "Grace"} {
		w := newOutputWatch()
		r, err := tt.Start(context.Background(), p, Limits{}, w.write)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- r.Resume(context.Background(), Pause{Depth: -1}) }()
		w.waitFor(t, "name? ")
		in.Write([]byte(name + "\n"))
		if i == 0 {
			in.Close() // the next run's pipe is open all the same
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := r.Trace().Stdout; got != "name? hi "+name+"\n" {
			t.Errorf("run %d: stdout %q", i, got)
		}
		r.Close()
	}
	whole, err := tt.Trace(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Exit.Kind != ExitError || !strings.Contains(whole.Exit.Error, "EOFError") {
		t.Errorf("a whole run with Input: exit %+v, want EOFError (empty stdin)", whole.Exit)
	}
}

// TestLiveStdinFile: without Input a live run reads Context.Stdin (ndb
// debug --stdin FILE), and both at once is an error.
func TestLiveStdinFile(t *testing.T) {
	const src = "import sys\nprint(repr(sys.stdin.read()))\n"
	tt := liveTracer(t)
	r, err := tt.Start(context.Background(), stdinProgram(t, src, &Context{Stdin: []byte("from\nfile")}), Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Resume(context.Background(), Pause{Depth: -1}); err != nil {
		t.Fatal(err)
	}
	if got := r.Trace().Stdout; got != "'from\\nfile'\n" {
		t.Errorf("stdout %q", got)
	}
	r.Close()
	_, err = tt.Start(context.Background(), stdinProgram(t, src, &Context{Stdin: []byte("x"), Input: NewInput()}), Limits{}, nil)
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("Stdin and Input: %v, want an error", err)
	}
}

// A Tracer whose last program's folder was removed (a temporary one) runs
// other programs on: a worker started again binds it no more.
func TestProgramFolderGone(t *testing.T) {
	tt := liveTracer(t)
	dir, err := os.MkdirTemp("", "ndb-gone")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "prog.py")
	if err := os.WriteFile(path, []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tr, err := tt.Trace(context.Background(), Program{Path: path, Source: "print(1)\n", Context: &Context{}}); err != nil || tr.Stdout != "1\n" {
		t.Fatalf("in its folder: %v", err)
	}
	os.RemoveAll(dir)
	tt.kill() // as a cancelled run does: the next run starts a worker
	if tr, err := tt.Trace(context.Background(), Program{Source: "print(2)\n"}); err != nil || tr.Stdout != "2\n" {
		t.Fatalf("after its folder went: %v", err)
	}
}
