package eval

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"ndb/debugger"
	"ndb/engine"
	"ndb/engine/enginetest"
	"ndb/tracer"
)

// scriptedCommand is one command of a fixed session: a name of
// SessionCommands, and for b+c the breakpoint's line.
type scriptedCommand struct {
	name string
	line int
}

// pdbStop is where pdb stopped: line and function, or the program's end.
type pdbStop struct {
	line int
	fn   string
	end  bool
}

func (s pdbStop) String() string {
	if s.end {
		return "end"
	}
	return fmt.Sprintf("%s:%d", s.fn, s.line)
}

var pdbStopLine = regexp.MustCompile(`^(?:\(Pdb\) )*> .*\((\d+)\)(.*)\(\)`)

// pdbSession runs the commands in `python3 -m pdb FILE` and returns the
// stop after each one (a b+c is `b LINE` then `c`).
func pdbSession(t *testing.T, python, file string, script []scriptedCommand) []pdbStop {
	t.Helper()
	var in strings.Builder
	for _, c := range script {
		if c.line > 0 {
			fmt.Fprintf(&in, "b %d\n", c.line)
		}
		fmt.Fprintln(&in, strings.TrimPrefix(c.name, "b+"))
	}
	in.WriteString("q\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "pdb", filepath.Base(file))
	cmd.Dir = filepath.Dir(file)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pdb: %v\n%s", err, out)
	}
	var stops []pdbStop
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "The program finished") {
			return append(stops[1:], pdbStop{end: true}) // the restart's stop is not the session's
		}
		if m := pdbStopLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			stops = append(stops, pdbStop{line: n, fn: m[2]})
		}
	}
	return stops[1:] // the first is the start
}

// TestSessionBreakpointsStayAsInPdb: a session's breakpoints stay set, as
// in pdb, so a later n, r, unt or c stops at one it reaches. On programs
// where that matters (n over a call into a breakpoint, r with a breakpoint
// in the way, c back to an earlier breakpoint) the real side's stops are
// python3 -m pdb's, and the real engine and the model engine (its
// predictions the true ones, rolled out under pdb's rules) follow every
// stop. Before, each breakpoint served only its own continue.
func TestSessionBreakpointsStayAsInPdb(t *testing.T) {
	python, err := tracer.ResolvePython("python3")
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	cases := []struct {
		name   string
		src    string
		script []scriptedCommand
	}{
		{"loop", `def square(x):
    y = x * x
    return y


total = 0
for i in range(3):
    total += square(i)
print(total)
`, []scriptedCommand{{"b+c", 2}, {"b+c", 8}, {"n", 0}, {"c", 0}, {"n", 0}, {"r", 0}, {"unt", 0}, {"c", 0}}},
		{"nested calls", `def inner(v):
    return v + 1


def outer(n):
    a = inner(n)
    b = inner(a)
    return b


print(outer(1))
print(outer(5))
`, []scriptedCommand{{"b+c", 6}, {"b+c", 2}, {"r", 0}, {"c", 0}, {"r", 0}, {"n", 0}, {"r", 0}, {"c", 0}, {"n", 0}, {"s", 0}, {"c", 0}}},
	}
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "prog.py")
			if err := os.WriteFile(file, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			want := pdbSession(t, python, file, c.script)
			if len(want) != len(c.script) {
				t.Fatalf("pdb gave %d stops for %d commands: %v", len(want), len(c.script), want)
			}
			np := NamedProgram{ID: c.name, Program: tracer.Program{Source: c.src}}
			tr, err := real.Trace(ctx, np.Program)
			if err != nil {
				t.Fatal(err)
			}
			truth := &truthPredictor{oracles: map[string]*enginetest.Oracle{tr.Source: enginetest.NewOracle(tr)}}
			for _, e := range []engine.Engine{real, engine.NewNeuralEngine(engine.Model, truth, engine.Draw{}, false)} {
				k := 0
				draw := func(rs *debugger.Session) (string, debugger.Command, int) {
					sc := c.script[min(k, len(c.script)-1)]
					k++
					return sc.name, debugger.Moves[strings.TrimPrefix(sc.name, "b+")], sc.line
				}
				res, err := runSession(ctx, SessionOptions{Stops: len(c.script), KeepBreaks: true, Real: real, Engine: e}, np, tr, draw)
				if err != nil {
					t.Fatal(err)
				}
				var got []pdbStop
				for _, st := range res.realStops {
					if st.IsExit() {
						got = append(got, pdbStop{end: true})
					} else {
						got = append(got, pdbStop{line: st.Lineno, fn: st.Function})
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: the session stops at %v, pdb at %v", e.Name(), got, want)
				}
				if res.Wrong >= 0 || res.Compared != len(c.script) {
					t.Errorf("%s: wrong at command %d of %v (%s): %s, real %s", e.Name(), res.Wrong, res.Commands, res.Field, res.Pred, res.Real)
				}
			}
		})
	}
}
