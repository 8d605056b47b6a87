package debugger

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"ndb/tracer"
)

// The pdb conformance test: for every fixture program and many seeded
// random command sequences, the stops of ndb's trace-backed session must be
// the stops of CPython's own pdb (testdata/pdbrecord.py) on the same
// interpreter.

// fixture is a program of testdata/progs: a script, or a call of a function.
// A file in a subfolder (sibling/main.py) runs in its program context: the
// tracer gets a tracer.Context (its folder is the working directory and
// sys.path[0]) and pdb runs it from that folder, as `cd sibling; python3 -m
// pdb main.py`, so `import helper` of a sibling file works. Only scripts: the
// call form runs in a scratch folder, where the sibling is not importable.
type fixture struct {
	file string
	call string
}

func (fx fixture) inContext() bool { return strings.Contains(fx.file, "/") }

// name is the fixture's subtest name: its file, and its call if any.
func (fx fixture) name() string {
	if fx.call != "" {
		return fx.file + ":" + fx.call
	}
	return fx.file
}

// read returns the fixture's absolute path and its source.
func (fx fixture) read(t *testing.T) (string, []byte) {
	t.Helper()
	file, err := filepath.Abs(filepath.Join("testdata", "progs", fx.file))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, src
}

var conformanceFixtures = []fixture{
	{"gen.py", ""},
	{"exc.py", ""},
	{"withcm.py", ""},
	{"module.py", ""},
	{"recur.py", "f(5)"},
	{"closures.py", `f("the quick brown fox jumps", 3)`},
	{"nested.py", "f([3, 1, 2])"},
	{"gen.py", "consume()"},
	{"exc.py", "safe([5, 1, 7])"},
	{"withcm.py", "work(2)"},
	{"genresume.py", ""},
	{"misc.py", "f(3)"},
	{"misc.py", ""},
	{"gen2.py", ""},
	{"gen2.py", "run()"},
	{"genresume.py", "drive()"},
	{"asynccomp.py", ""},
	{"asynccomp.py", "run(3)"},
	{"genclose.py", ""},
	{"genclose.py", "run()"},
	{"doctestcall.py", ""},
	{"doctestcall.py", "run()"},
	{"sibling/main.py", ""},
	{"sibling/callback.py", ""},
}

// targetedCommands are hand-made sequences for paths random ones rarely
// take, keyed by fixture name.
var targetedCommands = map[string][][]string{
	// A generator resumed from a frame pdb does not trace (pull runs
	// under `n`): after the generator's --Return--, `s` restores the
	// caller's trace function (bpo-13183) and stops in pull, `n` does not.
	"genresume.py:drive()": {
		{"s", "s", "n", "n", "s", "n", "n", "s", "s", "s", "s"},
		{"s", "s", "n", "n", "s", "n", "n", "s", "n", "s", "s"},
		{"s", "s", "n", "n", "s", "n", "n", "s", "r", "s", "s"},
		{"s", "s", "n", "n", "s", "n", "n", "s", "unt", "s", "s"},
	},
	// double called from code run by exec, eval and doctest: pdb's f_back
	// at its --Return-- is the string's frame, not run's, so `r` there
	// runs on to the next breakpoint and `s` does not trace run again.
	"doctestcall.py:run()": {
		{"b 12", "c", "c", "c", "r", "r", "r"},
		{"b 12", "c", "r", "r", "r", "s", "s"},
		{"b 12", "c", "c", "c", "n", "s", "s"},
		{"b 11", "c", "c", "c", "c", "n", "n", "s", "s", "s"},
	},
	// A program function called back by the sibling module (helper.apply):
	// `s`, `n` and `unt` at its --Return-- stop in run, as in pdb (step
	// mode after a return stop); `r` there runs on to the next breakpoint
	// (the caller is a sibling frame: the call state's CallerUntraced).
	"sibling/callback.py": {
		{"b 6", "c", "n", "s", "s", "s", "s"},
		{"b 6", "c", "n", "n", "n", "n"},
		{"b 6", "c", "n", "unt", "unt", "s", "s"},
		{"b 11", "c", "s", "s", "s", "s", "s", "n"},
		{"b 6", "c", "r", "r"},
	},
	// Steps over lines that run the sibling's code (functions, a class's
	// methods, a generator, an exception raised in it).
	"sibling/main.py": {
		{"b 8", "c", "s", "s", "s", "s", "s", "s"},
		{"b 25", "c", "s", "s", "s", "r", "s", "s", "s"},
		{"b 19", "c", "n", "n", "n", "n", "n", "n", "n"},
	},
}

// pdbStopRec is one stop as the recorder writes it.
type pdbStopRec struct {
	Event    string `json:"event"`
	Lineno   int    `json:"lineno,omitempty"`
	Function string `json:"function,omitempty"`
	Arg      string `json:"arg,omitempty"`
}

func (s pdbStopRec) String() string {
	if s.Event == "exit" {
		return "exit"
	}
	r := fmt.Sprintf("%s %s:%d", s.Event, s.Function, s.Lineno)
	if s.Arg != "" {
		r += " -> " + s.Arg
	}
	return r
}

var addrRE = regexp.MustCompile(` at 0x[0-9a-fA-F.]+`)

func stopRec(st Stop) pdbStopRec {
	if st.IsExit() {
		return pdbStopRec{Event: "exit"}
	}
	r := pdbStopRec{Event: st.Event, Lineno: st.Lineno, Function: st.Function}
	if st.Event == tracer.EventReturn || st.Event == tracer.EventException {
		r.Arg = addrRE.ReplaceAllString(st.Arg, " at 0x...")
	}
	return r
}

// randomCommands draws a seeded pdb command sequence: s, n, r, unt [N], and
// `b N` (a line of the program) followed by c, plus plain c now and then.
func randomCommands(rng *rand.Rand, source string, hit []int, n int) []string {
	all := BreakpointLines(source)
	var cmds []string
	for len(cmds) < n {
		switch x := rng.Intn(100); {
		case x < 35:
			cmds = append(cmds, "s")
		case x < 60:
			cmds = append(cmds, "n")
		case x < 72:
			cmds = append(cmds, "r")
		case x < 79:
			cmds = append(cmds, "unt")
		case x < 82 && len(hit) > 0:
			cmds = append(cmds, "unt "+strconv.Itoa(hit[rng.Intn(len(hit))]))
		case x < 97:
			line := 0
			if len(hit) > 0 && rng.Intn(4) > 0 {
				line = hit[rng.Intn(len(hit))]
			} else if len(all) > 0 {
				line = all[rng.Intn(len(all))]
			}
			if line > 0 {
				cmds = append(cmds, "b "+strconv.Itoa(line))
			}
			cmds = append(cmds, "c")
		default:
			cmds = append(cmds, "c")
		}
	}
	return cmds
}

// runNdb drives a Session over the trace with pdb's commands and returns
// its stops, ending at the exit or when the commands run out, and the
// command that left each stop but the last.
func runNdb(t *tracer.Trace, cmds []string) ([]pdbStopRec, []string, error) {
	ctx := context.Background()
	s, err := NewSession(ctx, NewTraceBackend(t))
	if err != nil {
		return nil, nil, err
	}
	var moves []string
	stops := []pdbStopRec{stopRec(s.Current())}
	for _, c := range cmds {
		if s.Current().IsExit() {
			break
		}
		cmd, move, err := sessionCommand(s, c)
		if err != nil {
			return nil, nil, err
		}
		if !move {
			continue
		}
		st, err := s.Do(ctx, cmd)
		if err != nil {
			return nil, nil, err
		}
		moves = append(moves, strings.Fields(c)[0])
		stops = append(stops, stopRec(st))
	}
	return stops, moves, nil
}

// sessionCommand reads one of the tests' pdb-like commands (s n r unt [N]
// c, b N; and reverse: bs = inv_step_into, bo = inv_step_over, bc =
// inv_step_call, rc = reverse continue). move is false for b (set on s,
// refused lines ignored as pdb goes on) and for an unt N that pdb refuses
// (N not below the current line).
func sessionCommand(s *Session, c string) (cmd Command, move bool, err error) {
	f := strings.Fields(c)
	switch f[0] {
	case "s":
		cmd = Command{Action: StepInto}
	case "n":
		cmd = Command{Action: StepOver}
	case "unt":
		cmd = Command{Action: StepOver, Until: true}
		if len(f) > 1 {
			cmd.Line, _ = strconv.Atoi(f[1])
			if cmd.Line <= s.Current().Lineno {
				return cmd, false, nil
			}
		}
	case "r":
		cmd = Command{Action: StepReturn}
	case "c":
		cmd = Command{Action: Continue}
	case "rc":
		cmd = Command{Action: Continue, Backward: true}
	case "bs":
		cmd = Command{Action: InvStepInto}
	case "bo":
		cmd = Command{Action: InvStepOver}
	case "bc":
		cmd = Command{Action: InvStepCall}
	case "b":
		line, _ := strconv.Atoi(f[1])
		_ = s.SetBreak(line)
		return cmd, false, nil
	default:
		return cmd, false, fmt.Errorf("bad command %q", c)
	}
	return cmd, true, nil
}

// pythonExe resolves the real interpreter behind python3 (not the shim).
func pythonExe(t testing.TB) string {
	t.Helper()
	p, err := tracer.ResolvePython("python3")
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	return p
}

// pdbRecorder is one running testdata/pdbrecord.py process.
type pdbRecorder struct {
	cmd *exec.Cmd
	in  *json.Encoder
	out *bufio.Scanner
}

// startRecorder starts a recorder in the working directory wd ("": the
// test's). Run with -c, its sys.path[0] is "" (that directory), so programs
// there import their sibling modules, as under `python3 -m pdb FILE` there.
func startRecorder(t testing.TB, python, wd string) *pdbRecorder {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import pdbrecord; pdbrecord.main()", dir)
	cmd.Dir = wd
	cmd.Env = append(os.Environ(), "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	return &pdbRecorder{cmd: cmd, in: json.NewEncoder(stdin), out: sc}
}

func (r *pdbRecorder) record(path string, call bool, cmds []string) ([]pdbStopRec, error) {
	if err := r.in.Encode(map[string]any{"path": path, "call": call, "commands": cmds}); err != nil {
		return nil, err
	}
	if !r.out.Scan() {
		return nil, fmt.Errorf("recorder ended: %v", r.out.Err())
	}
	var res struct {
		Stops []pdbStopRec `json:"stops"`
		Error string       `json:"error"`
	}
	if err := json.Unmarshal(r.out.Bytes(), &res); err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, fmt.Errorf("recorder: %s", res.Error)
	}
	for i := range res.Stops {
		res.Stops[i].Arg = addrRE.ReplaceAllString(res.Stops[i].Arg, " at 0x...")
	}
	return res.Stops, nil
}

func TestPdbConformance(t *testing.T) {
	python := pythonExe(t)
	rec := startRecorder(t, python, "")
	recIn := map[string]*pdbRecorder{} // by folder, for fixtures in context
	top := t                           // recorders live for the whole test
	sequences := 60
	if testing.Short() {
		sequences = 10
	}
	for _, fx := range conformanceFixtures {
		t.Run(fx.name(), func(t *testing.T) {
			file, src := fx.read(t)
			var tr *tracer.Trace
			var path string
			rec := rec
			if fx.inContext() {
				// The program's own file, run from its folder on both sides.
				tr = traceFixtureProgram(t, python, tracer.Program{Path: file, Source: string(src), Context: &tracer.Context{}})
				path = file
				dir := filepath.Dir(file)
				if recIn[dir] == nil {
					recIn[dir] = startRecorder(top, python, dir)
				}
				rec = recIn[dir]
			} else {
				tr = traceFixture(t, python, string(src), fx.call)
				path = filepath.Join(t.TempDir(), "prog.py")
				if err := os.WriteFile(path, []byte(tr.Source), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tr.Exit.Kind != tracer.ExitNormal && fx.inContext() {
				t.Fatalf("fixture in context did not end normally: %+v", tr.Exit)
			}
			if tr.Exit.Kind == tracer.ExitNever {
				t.Fatalf("fixture did not finish: %+v", tr.Exit)
			}
			var hit []int
			seen := map[int]bool{}
			for _, s := range tr.States {
				if s.Event == tracer.EventLine && !seen[s.Lineno] {
					seen[s.Lineno] = true
					hit = append(hit, s.Lineno)
				}
			}
			for seed := range sequences + len(targetedCommands[fx.name()]) {
				rng := rand.New(rand.NewSource(int64(seed)))
				var cmds []string
				switch {
				case seed >= sequences:
					cmds = targetedCommands[fx.name()][seed-sequences]
				case seed == 0: // step through everything
					cmds = repeat("s", len(tr.States)+2)
				case seed == 1:
					cmds = repeat("n", len(tr.States)+2)
				case seed == 2:
					cmds = repeat("r", len(tr.States)+2)
				case seed == 3:
					cmds = repeat("unt", len(tr.States)+2)
				default:
					cmds = randomCommands(rng, tr.Source, hit, 60)
				}
				want, err := rec.record(path, fx.call != "", cmds)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := runNdb(tr, cmds)
				if err != nil {
					t.Fatal(err)
				}
				if d := firstDiff(want, got); d >= 0 {
					t.Errorf("seed %d: stop %d differs\ncommands: %s\n%s", seed, d,
						strings.Join(cmds[:min(len(cmds), commandsUsed(cmds, d)+1)], "; "), sideBySide(want, got, d))
				}
			}
		})
	}
}

func repeat(c string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// commandsUsed is the index of the command that produced stop d.
func commandsUsed(cmds []string, d int) int {
	moves := 0
	for i, c := range cmds {
		if !strings.HasPrefix(c, "b ") {
			moves++
		}
		if moves == d {
			return i
		}
	}
	return len(cmds) - 1
}

func firstDiff(a, b []pdbStopRec) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func sideBySide(want, got []pdbStopRec, d int) string {
	var b strings.Builder
	for i := max(0, d-4); i < min(max(len(want), len(got)), d+3); i++ {
		w, g := "-", "-"
		if i < len(want) {
			w = want[i].String()
		}
		if i < len(got) {
			g = got[i].String()
		}
		mark := "  "
		if i == d {
			mark = "=>"
		}
		fmt.Fprintf(&b, "%s %3d pdb: %-40s ndb: %s\n", mark, i, w, g)
	}
	return b.String()
}

// traceFixtureProgram traces any program (e.g. one with a Context) on the
// worker shared with traceFixture.
func traceFixtureProgram(t testing.TB, python string, prog tracer.Program) *tracer.Trace {
	t.Helper()
	fixtureTracerOnce.Do(func() {
		fixtureTracer, fixtureTracerErr = tracer.New(tracer.Options{Python: python})
	})
	if fixtureTracerErr != nil {
		t.Fatalf("tracer: %v", fixtureTracerErr)
	}
	tr, err := fixtureTracer.Trace(context.Background(), prog)
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	return tr
}
