package tracer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var shared struct {
	once sync.Once
	t    *Tracer
	err  error
}

// sharedTracer is one worker for the whole package: it also proves that one
// interpreter traces many programs in a row, hostile ones included.
func sharedTracer(t testing.TB) *Tracer {
	shared.once.Do(func() {
		shared.t, shared.err = New(Options{Python: os.Getenv("NDB_PYTHON")})
	})
	if shared.err != nil {
		t.Fatalf("New: %v", shared.err)
	}
	return shared.t
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.t != nil {
		shared.t.Close()
	}
	closeHostile()
	for _, tr := range ctxTracers.ts {
		tr.Close()
	}
	os.Exit(code)
}

func trace(t *testing.T, p Program, lim Limits) *Trace {
	t.Helper()
	tr, err := sharedTracer(t).TraceLimits(context.Background(), p, lim)
	if err != nil {
		t.Fatalf("Trace: %v", err)
	}
	return tr
}

// fixture reads testdata/events/NAME.py and its optional "# call: EXPR" header.
func fixture(t *testing.T, name string) Program {
	t.Helper()
	path := filepath.Join("testdata", "events", name)
	src, err := ReadSource(path)
	if err != nil {
		t.Fatal(err)
	}
	call := ""
	if first, _, _ := strings.Cut(src, "\n"); strings.HasPrefix(first, "# call: ") {
		call = strings.TrimPrefix(first, "# call: ")
	}
	return Program{Path: path, Source: src, Call: call}
}

type refTrace struct {
	States [][]any `json:"states"`
	Exit   string  `json:"exit"`
}

// runReference traces the fixture with testdata/settrace_ref.py: plain
// sys.settrace and plain repr() on the same interpreter.
func runReference(t *testing.T, p Program) refTrace {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("testdata", "settrace_ref.py"))
	file, _ := filepath.Abs(p.Path)
	args := []string{"-s", script, file}
	if p.Call != "" {
		args = append(args, p.Call)
	}
	cmd := exec.Command(sharedTracer(t).Info().Executable, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PYTHONHASHSEED=0", "LC_ALL=C.UTF-8", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	var ref refTrace
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("reference output: %v", err)
	}
	return ref
}

// TestEventsMatchSettrace compares every state of each fixture with what a
// plain sys.settrace recorder gives on the same interpreter.
func TestEventsMatchSettrace(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("testdata", "events", "*.py"))
	if len(names) == 0 {
		t.Fatal("no fixtures")
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			p := fixture(t, name)
			got := trace(t, p, Limits{})
			ref := runReference(t, p)
			if len(got.States) != len(ref.States) {
				t.Fatalf("%d states, settrace gives %d", len(got.States), len(ref.States))
			}
			for i, r := range ref.States {
				s := got.States[i]
				want := State{Event: r[0].(string), Lineno: int(r[1].(float64)), Function: r[2].(string), Depth: int(r[3].(float64))}
				if r[4] != nil {
					want.Locals = Locals{}
					for _, kv := range r[4].([]any) {
						pair := kv.([]any)
						want.Locals = append(want.Locals, Var{Name: pair[0].(string), Value: pair[1].(string)})
					}
				}
				if r[5] != nil {
					want.Arg = r[5].(string)
				}
				gotCmp := State{Event: s.Event, Lineno: s.Lineno, Function: s.Function, Depth: s.Depth, Locals: s.Locals, Arg: s.Arg}
				if len(gotCmp.Locals) == 0 && len(want.Locals) == 0 {
					gotCmp.Locals, want.Locals = nil, nil
				}
				if !reflect.DeepEqual(gotCmp, want) {
					t.Fatalf("state %d:\n got  %+v\n want %+v", i, gotCmp, want)
				}
			}
			wantExit := Exit{Kind: ExitNormal}
			if ref.Exit != "normal" {
				wantExit = Exit{Kind: ExitError, Error: ref.Exit}
			}
			if got.Exit != wantExit {
				t.Errorf("exit %+v, want %+v", got.Exit, wantExit)
			}
		})
	}
}

type step struct {
	event    string
	lineno   int
	function string
	depth    int
}

func steps(tr *Trace) []step {
	var out []step
	for _, s := range tr.States {
		out = append(out, step{s.Event, s.Lineno, s.Function, s.Depth})
	}
	return out
}

// TestExactSequences pins small traces by hand, independent of the reference.
func TestExactSequences(t *testing.T) {
	cases := []struct {
		name string
		p    Program
		want []step
	}{
		{"call", Program{Source: "def f(a):\n    b = a + 1\n    return b\n", Call: "f(1)"}, []step{
			{"call", 6, "main", 0}, {"line", 7, "main", 0},
			{"call", 1, "f", 1}, {"line", 2, "f", 1}, {"line", 3, "f", 1}, {"return", 3, "f", 1},
			{"return", 7, "main", 0}}},
		{"script", Program{Source: "x = 1\ny = x\n"}, []step{
			{"call", 0, "<module>", 0}, {"line", 1, "<module>", 0}, {"line", 2, "<module>", 0}, {"return", 2, "<module>", 0}}},
		{"exception", Program{Source: "def f():\n    return 1 / 0\n", Call: "f()"}, []step{
			{"call", 5, "main", 0}, {"line", 6, "main", 0},
			{"call", 1, "f", 1}, {"line", 2, "f", 1}, {"exception", 2, "f", 1}, {"return", 2, "f", 1},
			{"exception", 6, "main", 0}, {"return", 6, "main", 0}}},
		{"one-line for", Program{Source: "def f():\n    for i in range(2): pass\n", Call: "f()"}, []step{
			{"call", 5, "main", 0}, {"line", 6, "main", 0},
			{"call", 1, "f", 1}, {"line", 2, "f", 1}, {"line", 2, "f", 1}, {"line", 2, "f", 1}, {"return", 2, "f", 1},
			{"return", 6, "main", 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := trace(t, c.p, Limits{})
			if got := steps(tr); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestCallWrapping(t *testing.T) {
	for _, src := range []string{"def f(x):\n    return x\n", "def f(x):\n    return x", "def f(x):\r\n    return x\r\n"} {
		tr := trace(t, Program{Source: src, Call: ` f("a") `}, Limits{})
		want := "def f(x):\n    return x\n\n\ndef main():\n    return f(\"a\")\n"
		if tr.Source != want {
			t.Errorf("source %q, want %q", tr.Source, want)
		}
		if tr.Exit.Kind != ExitNormal || tr.States[0].Function != "main" || tr.States[0].Event != EventCall || tr.States[0].Depth != 0 {
			t.Errorf("trace does not start at main's call: %+v %+v", tr.States[0], tr.Exit)
		}
		last := tr.States[len(tr.States)-1]
		if last.Event != EventReturn || last.Arg != "'a'" || last.Src != "    return f(\"a\")" {
			t.Errorf("last state %+v", last)
		}
	}
	if _, err := sharedTracer(t).Trace(context.Background(), Program{Source: "x=1", Call: "f(\n1)"}); err == nil {
		t.Error("a multi-line call was accepted")
	}
	tr := trace(t, Program{Source: "def f(x): return x\n", Call: "f(1,"}, Limits{})
	if tr.Exit.Kind != ExitError || tr.Exit.Reason != "syntax error" {
		t.Errorf("bad call: %+v", tr.Exit)
	}
	// A bad call's error names the call, not a line of the wrapper; a
	// statement after the call is no expression.
	for _, call := range []string{"f(1,", "f(1); import os", "x = f(1)"} {
		tr := trace(t, Program{Source: "def f(x): return x\n", Call: call}, Limits{})
		if tr.Exit.Kind != ExitError || tr.Exit.Reason != "syntax error" || !strings.Contains(tr.Exit.Error, "'<call>', 1,") {
			t.Errorf("call %q: %+v, want a SyntaxError in '<call>' line 1", call, tr.Exit)
		}
	}
}

// TestCallProgramMain: a program that defines its own main, called as
// main() (issue 29): the wrapper, also named main, calls the program's
// main (it called itself until RecursionError), which keeps its name; a
// program main bound otherwise than by def, and one that is not called,
// behave as well.
func TestCallProgramMain(t *testing.T) {
	for _, c := range []struct{ src, call, ret string }{
		{"def main():\n    return helper(2)\n\ndef helper(x):\n    return x * 3\n", "main()", "6"},
		{"def helper(x):\n    return x + 1\nmain = helper\n", "main(41)", "42"},
		{"def main():\n    return 1\n\ndef f():\n    return main() + 1\n", "f()", "2"},
		{"remaining = 5\ndef f():\n    return remaining\n", "f()", "5"},
	} {
		tr := trace(t, Program{Source: c.src, Call: c.call}, Limits{MaxEvents: 1000})
		if tr.Exit.Kind != ExitNormal || len(tr.States) < 3 {
			t.Errorf("%q: exit %+v after %d states", c.call, tr.Exit, len(tr.States))
			continue
		}
		first, last := tr.States[0], tr.States[len(tr.States)-1]
		if first.Function != "main" || first.Depth != 0 || first.Src != "def main():" || !strings.HasPrefix(tr.Source, c.src) {
			t.Errorf("%q: first state %+v", c.call, first)
		}
		if last.Event != EventReturn || last.Depth != 0 || last.Arg != c.ret || last.Src != "    return "+c.call {
			t.Errorf("%q: last state %+v, want the wrapper's return of %s", c.call, last, c.ret)
		}
		if tr.States[1].Depth != 0 || tr.States[2].Depth != 1 {
			t.Errorf("%q: the call should enter the program's function at depth 1: %+v", c.call, tr.States[:3])
		}
	}
}

// TestLocalsOrderAndMutation checks f_locals order and that in-place changes
// of a value are changes of the state.
func TestLocalsOrderAndMutation(t *testing.T) {
	tr := trace(t, Program{Source: "def f(b, a):\n    z = [1]\n    y = z\n    z.append(2)\n    y[0] = True\n    del b\n    return a\n", Call: "f(1, 2)"}, Limits{})
	var got []string
	for _, s := range tr.States {
		if s.Function == "f" && s.Event == EventLine {
			b, _ := json.Marshal(s.Locals)
			got = append(got, string(b))
		}
	}
	want := []string{
		`{"b":"1","a":"2"}`,
		`{"b":"1","a":"2","z":"[1]"}`,
		`{"b":"1","a":"2","z":"[1]","y":"[1]"}`,
		`{"b":"1","a":"2","z":"[1, 2]","y":"[1, 2]"}`,
		`{"b":"1","a":"2","z":"[True, 2]","y":"[True, 2]"}`,
		`{"a":"2","z":"[True, 2]","y":"[True, 2]"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("locals:\n got  %q\n want %q", got, want)
	}
}

// TestReprBounds checks bounded reprs against the program's own repr(): each
// value's repr is printed in full; the recorded local must be that text, or
// its first ReprLimit characters and CutMarker.
func TestReprBounds(t *testing.T) {
	const limit = 40
	src := `
class R:
    def __repr__(self):
        return "R<" + "r" * 60 + ">"
rec = [1]
rec.append(rec)
drec = {}
drec["me"] = drec
vals = dict(
    ints=list(range(1000)),
    short=[1, 2.5, None, True],
    strs=["it's", 'say "hi"', "both ' \""] * 20,
    sq="it's " * 30,
    dq='say "x" ' * 30,
    both="' \" " * 30,
    esc="\x00\t\n\u1234\U0001f600" * 20,
    by=b"it's \x00\xff" * 20,
    byb=b"' \"" * 30,
    nested=[[i, [i, "s" * i]] for i in range(30)],
    d={i: [i] * i for i in range(30)},
    st=set(range(50)),
    fs=frozenset(range(50)),
    one=(1,),
    onebig=("x" * 100,),
    empty=[[], {}, set(), frozenset(), (), ""],
    rec=rec,
    drec=drec,
    exc=ValueError("bad " * 20),
    exc2=KeyError(1, 2),
    user=[R(), R()],
    zero=[0.0, -0.0, 1e300, float("nan")],
)
for k, v in vals.items():
    print(k, repr(v))
del k, v
`
	tr := trace(t, Program{Source: src}, Limits{ReprLimit: limit})
	if tr.Exit.Kind != ExitNormal {
		t.Fatalf("exit %+v", tr.Exit)
	}
	var valsRepr string
	for _, s := range tr.States {
		if v, ok := s.Locals.Get("vals"); ok {
			valsRepr = v
		}
	}
	if len(valsRepr) != limit+len(CutMarker) {
		t.Errorf("vals: %q is not cut at %d", valsRepr, limit)
	}
	// Each value separately, through a second program that binds them one by one.
	for _, line := range strings.Split(strings.TrimSuffix(tr.Stdout, "\n"), "\n") {
		name, full, _ := strings.Cut(line, " ")
		want := full
		if r := []rune(full); len(r) > limit {
			want = string(r[:limit]) + CutMarker
		}
		p := Program{Source: src + "\nx = vals[" + fmt.Sprintf("%q", name) + "]\npass\n"}
		tr2 := trace(t, p, Limits{ReprLimit: limit})
		got, ok := tr2.States[len(tr2.States)-2].Locals.Get("x")
		if !ok {
			t.Fatalf("%s: x not recorded", name)
		}
		if got != want {
			t.Errorf("%s:\n got  %q\n want %q", name, got, want)
		}
	}
}

func TestAddressNormalization(t *testing.T) {
	tr := trace(t, Program{Source: "o = object()\nf = lambda: 0\nclass C: pass\nc = C()\npass\n"}, Limits{})
	l := tr.States[len(tr.States)-2].Locals
	want := map[string]string{"o": "<object object at 0x0>", "f": "<function <lambda> at 0x0>",
		"C": "<class '__main__.C'>", "c": "<__main__.C object at 0x0>"}
	for k, v := range want {
		if got, _ := l.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestManyProgramsInARow(t *testing.T) {
	tr := sharedTracer(t)
	for i := 0; i < 200; i++ {
		res, err := tr.Trace(context.Background(), Program{Source: "def f(n):\n    return n * 2\n", Call: fmt.Sprintf("f(%d)", i)})
		if err != nil {
			t.Fatal(err)
		}
		last := res.States[len(res.States)-1]
		if res.Exit.Kind != ExitNormal || last.Arg != fmt.Sprint(i*2) {
			t.Fatalf("program %d: %+v %+v", i, last, res.Exit)
		}
	}
}

func TestGeneratorFrameKeepsID(t *testing.T) {
	tr := trace(t, fixture(t, "generator.py"), Limits{})
	ids := map[int]bool{}
	for _, s := range tr.States {
		if s.Function == "gen" {
			if !s.Gen {
				t.Fatalf("gen state without Gen: %+v", s)
			}
			ids[s.Frame] = true
		}
	}
	// gen(3) is resumed twice and closed, gen(2) runs to the end: two frames.
	if len(ids) != 2 {
		t.Errorf("generator frames %v, want 2 distinct ids", ids)
	}
}

func TestCancel(t *testing.T) {
	tr, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := tr.Trace(ctx, Program{Source: "import itertools\nsum(itertools.count())\n"}); err == nil {
		t.Fatal("a cancelled trace returned no error")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("cancel took too long")
	}
	res, err := tr.Trace(context.Background(), Program{Source: "x = 1\n"})
	if err != nil || res.Exit.Kind != ExitNormal {
		t.Fatalf("after cancel: %v %+v", err, res)
	}
}

// TestTwoTracersInParallel runs two workers at once, as the data pipeline does.
func TestTwoTracersInParallel(t *testing.T) {
	second, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w, tr := range []*Tracer{sharedTracer(t), second} {
		wg.Add(1)
		go func(w int, tr *Tracer) {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				res, err := tr.Trace(context.Background(), Program{Source: "def f(a, b):\n    return a * b\n", Call: fmt.Sprintf("f(%d, %d)", w, i)})
				if err != nil {
					errs <- err
					return
				}
				if got := res.States[len(res.States)-1].Arg; got != fmt.Sprint(w*i) {
					errs <- fmt.Errorf("worker %d program %d returned %s", w, i, got)
					return
				}
			}
		}(w, tr)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestListProbes checks in-place list changes that keep the list's length
// (True, 1.0 and 1 compare equal; so do 0.0 and -0.0) with both list probes:
// the memory view one and the portable one other interpreters get.
func TestListProbes(t *testing.T) {
	portable, err := New(Options{noMemView: true})
	if err != nil {
		t.Fatal(err)
	}
	defer portable.Close()
	if portable.Info().MemView {
		t.Fatal("memory view still on")
	}
	if !sharedTracer(t).Info().MemView {
		t.Log("the memory view probe is not available on this interpreter")
	}
	src := "def f():\n    xs = [1] * 500\n    xs[0] = True\n    xs[0] = 1.0\n    xs[0] = 1\n    xs[499] = 2\n    ys = [0.0]\n    ys[0] = -0.0\n    return xs\n"
	for _, tr := range []*Tracer{sharedTracer(t), portable} {
		res, err := tr.Trace(context.Background(), Program{Source: src, Call: "f()"})
		if err != nil {
			t.Fatal(err)
		}
		var firsts []string
		for _, s := range res.States {
			if s.Function == "f" && s.Event == EventLine {
				if v, ok := s.Locals.Get("xs"); ok {
					firsts = append(firsts, v[:6])
				}
				if v, ok := s.Locals.Get("ys"); ok && s.Lineno == 9 && v != "[-0.0]" {
					t.Errorf("memview %v: ys = %s, want [-0.0]", tr.Info().MemView, v)
				}
			}
		}
		want := []string{"[1, 1,", "[True,", "[1.0, ", "[1, 1,", "[1, 1,", "[1, 1,", "[1, 1,"}
		if !reflect.DeepEqual(firsts, want) {
			t.Errorf("memview %v: xs prefixes %q, want %q", tr.Info().MemView, firsts, want)
		}
	}
}

// TestDeterministicSetRepr: the worker runs with PYTHONHASHSEED=0, so a set
// of strings prints in the same order as in `PYTHONHASHSEED=0 python`.
func TestDeterministicSetRepr(t *testing.T) {
	expr := "{'apple', 'banana', 'cherry', 'date', 'elder'}"
	cmd := exec.Command(sharedTracer(t).Info().Executable, "-c", "print(repr("+expr+"))")
	cmd.Env = []string{"PYTHONHASHSEED=0"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	tr := trace(t, Program{Source: "s = " + expr + "\npass\n"}, Limits{})
	if got, _ := tr.States[len(tr.States)-2].Locals.Get("s"); got != strings.TrimSpace(string(out)) {
		t.Errorf("s = %s, want %s", got, out)
	}
}

// TestDeterministicRandom: random is seeded with 0 in every run.
func TestDeterministicRandom(t *testing.T) {
	for i := 0; i < 2; i++ {
		tr := trace(t, Program{Source: "import random\nx = random.random()\npass\n"}, Limits{})
		if got, _ := tr.States[len(tr.States)-2].Locals.Get("x"); got != "0.8444218515250481" {
			t.Errorf("run %d: random.random() = %s, want the value after random.seed(0)", i, got)
		}
	}
}

// TestCallerUntraced: a call state records whether the frame's direct
// caller (f_back) is a program frame. Calls from exec/eval strings have a
// <string> frame in between and set CallerUntraced; direct calls, calls
// through C functions (map) and the entry frame do not.
func TestCallerUntraced(t *testing.T) {
	src := "def f(x):\n    return x + 1\n\ndef main():\n    f(1)\n    exec(\"f(2)\")\n    eval(\"f(3)\")\n    list(map(f, [4]))\n\nmain()\n"
	tr := trace(t, Program{Source: src}, Limits{})
	var got []bool
	for _, s := range tr.States {
		if s.Event != EventCall {
			continue
		}
		if s.Function != "f" {
			if s.CallerUntraced {
				t.Errorf("%s: CallerUntraced set: %+v", s.Function, s)
			}
			continue
		}
		got = append(got, s.CallerUntraced)
	}
	want := []bool{false, true, true, false}
	if !slices.Equal(got, want) {
		t.Fatalf("f's CallerUntraced = %v, want %v", got, want)
	}
	var b strings.Builder
	if err := WriteJSONLines(&b, tr); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `"caller_untraced":true`); n != 2 {
		t.Errorf("%d caller_untraced fields in the JSON, want 2", n)
	}
	if strings.Contains(b.String(), `"caller_untraced":false`) {
		t.Errorf("caller_untraced false written")
	}
}
