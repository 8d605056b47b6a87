package repl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"ndb/tracer"
)

// openPTY returns a pseudo-terminal's two ends: master (what the user's
// keyboard writes to and the screen reads from) and the terminal itself,
// in its ordinary line mode.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// screen is the terminal's output as Run writes it, waited on by tests.
type screen struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until text appears n times on the screen.
func (s *screen) waitFor(t *testing.T, text string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(s.String(), text) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%q not %d times on the screen:\n%s", text, n, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// scriptProgram writes src as prog.py of a folder of its own: a program
// run as `python prog.py` runs.
func scriptProgram(t *testing.T, src string, c *tracer.Context) tracer.Program {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prog.py")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return tracer.Program{Path: path, Source: src, Context: c}
}

// TestTerminalProgramInput: on a terminal, the program reads what the user
// types while a command runs, as under pdb: input() after its prompt,
// then the breakpoint after it stops, and p shows the line read; Ctrl-D
// ends the program's stdin; the commands typed at the prompt stay commands.
func TestTerminalProgramInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		src   string
		steps []string // typed after the screen shows the text before them: "WAIT|TYPED"
		want  []string // on the screen at the end
	}{
		{"input", "name = input('name? ')\ngreeting = 'hi ' + name\nprint(greeting)\n",
			[]string{"(ndb) |b 3\n", "(ndb) |c\n", "name? |Ada\n", "(ndb) |p name\n", "(ndb) |p greeting\n", "(ndb) |c\n", "hi Ada\n|"},
			[]string{"name? > prog.py(3)<module>()", "(ndb) 'Ada'\n", "(ndb) 'hi Ada'\n", "--Exit-- the program finished"}},
		{"ctrl-d", "import sys\ndata = sys.stdin.read()\nn = len(data)\n",
			[]string{"(ndb) |b 3\n", "(ndb) |c\n", "|two\nlines\n", "|\x04", "(ndb) |p data\n"},
			[]string{"> prog.py(3)<module>()", "(ndb) 'two\\nlines\\n'\n"}},
		{"ctrl-d at input", "try:\n    input()\nexcept EOFError:\n    print('eof')\nx = 1\n",
			[]string{"(ndb) |b 5\n", "(ndb) |c\n", "|\x04", "(ndb) |n\n", "(ndb) |p x\n"},
			[]string{"eof\n> prog.py(5)<module>()", "(ndb) 1\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			master, tty := openPTY(t)
			go io.Copy(io.Discard, master) // the terminal's echo of what is typed
			in := tracer.NewInput()
			s := newLiveSession(t, scriptProgram(t, tc.src, &tracer.Context{Input: in}), tracer.Limits{Timeout: time.Minute})
			term := New(s, Options{Name: "prog.py", Input: in})
			var out screen
			done := make(chan error, 1)
			go func() { done <- term.Run(context.Background(), tty, &out, false) }()
			seen := map[string]int{}
			for _, st := range tc.steps {
				wait, typed, _ := strings.Cut(st, "|")
				if wait != "" {
					seen[wait]++
					out.waitFor(t, wait, seen[wait])
				}
				if wait == "" {
					time.Sleep(200 * time.Millisecond) // the program reads on while the command runs
				}
				if _, err := master.WriteString(typed); err != nil {
					t.Fatal(err)
				}
			}
			for _, w := range tc.want {
				out.waitFor(t, w, 1)
			}
			master.WriteString("q\n")
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no end after q:\n%s", out.String())
			}
		})
	}
}

// TestStdinFileStaysForBatch: without Input the program reads its own
// stdin (ndb debug --stdin FILE) and the batch mode's stdin holds only
// commands, as before.
func TestStdinFileStaysForBatch(t *testing.T) {
	src := "name = input('name? ')\ngreeting = 'hi ' + name\nprint(greeting)\n"
	s := newLiveSession(t, scriptProgram(t, src, &tracer.Context{Stdin: []byte("Ada\n")}), tracer.Limits{Timeout: time.Minute})
	var out strings.Builder
	if err := Batch(context.Background(), New(s, Options{Name: "prog.py"}), strings.NewReader("b 3\nc\np name\n"), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines, got:\n%s", out.String())
	}
	var stop struct {
		Lineno int
		Output string
	}
	var p struct{ Value string }
	if err := json.Unmarshal([]byte(lines[2]), &stop); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[3]), &p); err != nil {
		t.Fatal(err)
	}
	if stop.Lineno != 3 || stop.Output != "name? " || p.Value != "'Ada'" {
		t.Errorf("c: line %d output %q; p name: %q\n%s", stop.Lineno, stop.Output, p.Value, out.String())
	}
}

// TestReadlineProgramInput: the same with readline at the prompt (ndb
// debug on a terminal): readline has the terminal in raw mode only while
// it reads a command, so while c runs the program reads the line as the
// kernel edits it, and the next prompt reads commands again.
func TestReadlineProgramInput(t *testing.T) {
	master, tty := openPTY(t)
	var scr screen
	go io.Copy(&scr, master) // the screen: prompts, echo, output
	in := tracer.NewInput()
	src := "name = input('name? ')\ngreeting = 'hi ' + name\nprint(greeting)\n"
	s := newLiveSession(t, scriptProgram(t, src, &tracer.Context{Input: in}), tracer.Limits{Timeout: time.Minute})
	term := New(s, Options{Name: "prog.py", Input: in})
	done := make(chan error, 1)
	go func() { done <- term.Run(context.Background(), tty, tty, true) }()
	// each step waits for text only its command's answer shows (the
	// listing holds "name? ", the locals line "'Ada'" and "hi Ada")
	for _, st := range []struct {
		wait  string
		n     int
		typed string
	}{{"(ndb) ", 1, "b 3\r"}, {"Breakpoint", 1, "c\r"}, {"name? ", 2, "Ada\n"}, {"> prog.py(3)", 1, "p name\r"}, {"\n'Ada'", 1, "c\r"}, {"\nhi Ada", 1, "q\r"}} {
		wait, typed := st.wait, st.typed
		scr.waitFor(t, wait, st.n)
		time.Sleep(50 * time.Millisecond) // readline is reading (raw mode) or the command runs
		if _, err := master.WriteString(typed); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no end after q:\n%s", scr.String())
	}
	// the kernel echoed the program's line after its prompt; p printed it alone
	if got := scr.String(); strings.Contains(got, "NameError") || !strings.Contains(got, "name? Ada") || !strings.Contains(got, "\n'Ada'") {
		t.Errorf("screen:\n%s", scr.String())
	}
}

// TestProgramInputOnlyOnTerminal: lines go to the program only from a
// terminal; from a pipe or a script the command reader reads ahead, so
// the program's stdin is left alone (ndb debug sets Input only then).
func TestProgramInputOnlyOnTerminal(t *testing.T) {
	_, tty := openPTY(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	in := tracer.NewInput()
	for _, tc := range []struct {
		name string
		r    io.Reader
		w    io.WriteCloser
		want bool
	}{
		{"terminal", tty, in, true},
		{"no input", tty, nil, false},
		{"pipe", pr, in, false},
		{"script", strings.NewReader("c\n"), in, false},
	} {
		if got := newProgramInput(tc.r, tc.w) != nil; got != tc.want {
			t.Errorf("%s: forwarding %v, want %v", tc.name, got, tc.want)
		}
	}
}
