package synth

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"ndb/internal/paths"
	"ndb/tracer"
)

func TestDeterministic(t *testing.T) {
	for i := range 300 {
		a, b := Generate(7, i, 4), Generate(7, i, 4)
		if len(a) != len(b) {
			t.Fatalf("program %d: %d vs %d calls", i, len(a), len(b))
		}
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("program %d call %d differs between runs:\n%+v\n%+v", i, j, a[j], b[j])
			}
		}
		// calls form a prefix: asking for more does not change the first ones
		more := Generate(7, i, 7)
		for j := range a {
			if more[j] != a[j] {
				t.Fatalf("program %d: call %d changed with k: %q vs %q", i, j, a[j].Call, more[j].Call)
			}
		}
	}
}

func TestShape(t *testing.T) {
	callRE := regexp.MustCompile(`^f\(.*\)$`)
	short := 0
	for i := range 2000 {
		ps := Generate(3, i, 4)
		if len(ps) < 4 {
			short++
		}
		if len(ps) == 0 {
			t.Fatalf("program %d: no calls", i)
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if p.Path != fmt.Sprintf("synth/3/%d", i) {
				t.Fatalf("path %q", p.Path)
			}
			if p.Source != ps[0].Source {
				t.Fatalf("program %d: calls do not share the source", i)
			}
			if !callRE.MatchString(p.Call) || seen[p.Call] {
				t.Fatalf("program %d: bad or repeated call %q", i, p.Call)
			}
			seen[p.Call] = true
		}
		if !strings.Contains(ps[0].Source, "def f(") {
			t.Fatalf("program %d has no f:\n%s", i, ps[0].Source)
		}
		// Features.ExceptLines name the first line of each except body
		lines := strings.Split(ps[0].Source, "\n")
		f := Inspect(3, i)
		for _, l := range f.ExceptLines {
			if l < 2 || l > len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[l-2]), "except") {
				t.Fatalf("program %d: except line %d is not after an except clause:\n%s", i, l, ps[0].Source)
			}
		}
		if got, want := len(f.ExceptLines), strings.Count(ps[0].Source, "except"); got != want {
			t.Fatalf("program %d: %d except lines recorded, %d in the source", i, got, want)
		}
	}
	// only a function of one tiny input space may come back short
	if short > 20 {
		t.Errorf("%d of 2000 programs have fewer than 4 distinct calls", short)
	}
	t.Logf("programs with fewer than 4 distinct calls: %d/2000", short)
}

func TestDistinct(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 5000
	}
	if m, err := strconv.Atoi(os.Getenv("SYNTH_DISTINCT")); err == nil && m > 0 { // e.g. 1000000, on demand
		n = m
	}
	seen := make(map[[32]byte]bool, n)
	for i := range n {
		seen[sha256.Sum256([]byte(DefaultKnobs.program(11, i).source))] = true
	}
	frac := float64(len(seen)) / float64(n)
	t.Logf("distinct sources: %d/%d (%.4f)", len(seen), n, frac)
	if frac < 0.995 {
		t.Errorf("only %.4f of %d programs are distinct", frac, n)
	}
	// another seed is another stream
	same := 0
	for i := range 500 {
		if DefaultKnobs.program(11, i).source == DefaultKnobs.program(12, i).source {
			same++
		}
	}
	if same > 2 {
		t.Errorf("seeds 11 and 12 agree on %d of 500 programs", same)
	}
}

// rate is a feature's measured frequency and the interval it must fall in.
type rate struct {
	name   string
	count  int
	lo, hi float64
}

func TestFeatureRates(t *testing.T) {
	const n = 5000
	kn := DefaultKnobs
	// helper kinds are drawn exclusively, so each rate is its knob
	rates := []*rate{
		{name: "helper", lo: kn.PHelper - 0.03, hi: kn.PHelper + 0.03},
		{name: "recursive helper", lo: kn.PRecHelper - 0.02, hi: kn.PRecHelper + 0.02},
		{name: "recursive f", lo: kn.PRecF - 0.015, hi: kn.PRecF + 0.015},
		{name: "for", lo: kn.PLoop, hi: 0.9},
		{name: "while", lo: kn.PWhile, hi: 0.4},
		{name: "try", lo: kn.PTry, hi: 0.6},
		{name: "if", lo: 0.5, hi: 1},
		{name: "raise", lo: 0.05, hi: 0.3},
		{name: "comprehension", lo: 0.3, hi: 0.95},
		{name: "early return", lo: 0.2, hi: 0.8},
		{name: "slice", lo: 0.2, hi: 0.9},
		{name: "break/continue", lo: 0.03, hi: 0.5},
	}
	params := map[int]int{}
	for i := range n {
		f := DefaultKnobs.program(5, i).features
		for j, on := range []bool{f.Helper, f.RecHelper, f.RecF, f.For, f.While, f.Try, f.If, f.Raise, f.Comprehension, f.EarlyReturn, f.Slice, f.BreakContinue} {
			if on {
				rates[j].count++
			}
		}
		params[f.Params]++
	}
	for _, r := range rates {
		got := float64(r.count) / n
		t.Logf("%-16s %.3f", r.name, got)
		if got < r.lo || got > r.hi {
			t.Errorf("%s: rate %.3f outside [%.3f, %.3f]", r.name, got, r.lo, r.hi)
		}
	}
	t.Logf("parameters: %v", params)
	for p := 1; p <= 3; p++ {
		if params[p] < n/20 {
			t.Errorf("only %d programs with %d parameters", params[p], p)
		}
	}
}

// checker runs testdata/check.py in one interpreter process for many programs.
type checker struct {
	cmd *exec.Cmd
	in  *json.Encoder
	out *bufio.Scanner
}

type checkReq struct {
	ID          int      `json:"id"`
	Source      string   `json:"source"`
	Calls       []string `json:"calls"`
	ExceptLines []int    `json:"except_lines"`
	Run         bool     `json:"run"`
}

type callResult struct {
	Status    string `json:"status"`
	Exc       string `json:"exc"`
	ExceptHit bool   `json:"except_hit"`
	MaxRec    int    `json:"max_rec"`
	Events    int    `json:"events"`
	Result    string `json:"result"`
}

type checkRes struct {
	ID       int          `json:"id"`
	Compile  *string      `json:"compile"`
	BadCalls []string     `json:"bad_calls"`
	Calls    []callResult `json:"calls"`
}

// python is the real interpreter behind python3 (not the pyenv shim),
// resolved once by the tracer.
func python(t *testing.T) string {
	p, err := tracer.ResolvePython("python3")
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	return p
}

// checkAll sends every request through one interpreter and returns the answers in order.
func checkAll(t *testing.T, reqs []checkReq, env ...string) []checkRes {
	t.Helper()
	cmd := exec.Command(python(t), "testdata/check.py")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		enc := json.NewEncoder(stdin)
		for _, r := range reqs {
			if enc.Encode(r) != nil {
				break
			}
		}
		stdin.Close()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []checkRes
	for sc.Scan() {
		var r checkRes
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("checker output %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("checker: %v", err)
	}
	if len(out) != len(reqs) {
		t.Fatalf("checker answered %d of %d requests", len(out), len(reqs))
	}
	return out
}

// TestCompilesAndRuns compiles many programs with the real interpreter and
// runs a sample of them on their generated inputs, bounded in time and events.
func TestCompilesAndRuns(t *testing.T) {
	nCompile, nRun, k := 10000, 2000, 3
	if testing.Short() {
		nCompile, nRun = 2000, 500
	}
	if n, err := strconv.Atoi(os.Getenv("SYNTH_RUN")); err == nil && n > 0 { // a heavier check on demand
		nCompile, nRun = n, n
	}
	seed := int64(21)
	if s, err := strconv.ParseInt(os.Getenv("SYNTH_SEED"), 10, 64); err == nil {
		seed = s
	}
	reqs := make([]checkReq, nCompile)
	feats := make([]Features, nCompile)
	for i := range reqs {
		p := DefaultKnobs.program(seed, i)
		feats[i] = p.features
		reqs[i] = checkReq{ID: i, Source: p.source, Calls: p.calls(seed, i, k), ExceptLines: p.features.ExceptLines, Run: i < nRun}
	}
	res := checkAll(t, reqs)

	var calls, errs, bounded, tryProgs, tryHit, recProgs, recDeep, events, allRaise int
	excs := map[string]int{}
	for i, r := range res {
		if r.Compile != nil {
			t.Errorf("program %d does not compile: %s\n%s", i, *r.Compile, reqs[i].Source)
			continue
		}
		if len(r.BadCalls) > 0 {
			t.Errorf("program %d: calls that are not f(literals...): %q", i, r.BadCalls)
		}
		if !reqs[i].Run {
			continue
		}
		hit, deep, progErrs := false, false, 0
		for _, c := range r.Calls {
			calls++
			events += c.Events
			switch c.Status {
			case "ok":
			case "error":
				errs++
				excs[c.Exc]++
				progErrs++
				if !expectedExc[c.Exc] { // a typing bug of the generator, not a data error
					t.Errorf("program %d raised %s on %q:\n%s", i, c.Exc, reqs[i].Calls, reqs[i].Source)
				}
				if c.Exc == os.Getenv("SYNTH_SHOW_EXC") {
					t.Logf("program %d raised %s on %q:\n%s", i, c.Exc, reqs[i].Calls, reqs[i].Source)
				}
			default:
				bounded++
				t.Logf("program %d call %s stopped: %s\n%s", i, reqs[i].Calls, c.Status, reqs[i].Source)
			}
			hit = hit || c.ExceptHit
			deep = deep || c.MaxRec >= 2
		}
		if progErrs == len(r.Calls) {
			allRaise++
			if os.Getenv("SYNTH_SHOW_EXC") == "all" {
				t.Logf("program %d raises on every input %q:\n%s", i, reqs[i].Calls, reqs[i].Source)
			}
		}
		if len(feats[i].ExceptLines) > 0 {
			tryProgs++
			if hit {
				tryHit++
			}
		}
		if len(feats[i].RecursiveFuncs) > 0 {
			recProgs++
			if deep {
				recDeep++
			}
		}
	}
	errRate := float64(errs) / float64(calls)
	t.Logf("compiled %d programs; ran %d calls of %d programs", nCompile, calls, nRun)
	t.Logf("raised: %.3f (%v); stopped by a bound: %d; mean events per call %.1f", errRate, excs, bounded, float64(events)/float64(calls))
	t.Logf("programs that raise on every input: %d/%d", allRaise, nRun)
	t.Logf("programs whose except clause ran on some input: %d/%d; recursion deeper than 1: %d/%d", tryHit, tryProgs, recDeep, recProgs)
	if errRate < 0.02 || errRate > 0.30 {
		t.Errorf("error rate %.3f outside [0.02, 0.30]", errRate)
	}
	if float64(bounded) > 0.002*float64(calls) {
		t.Errorf("%d of %d calls hit the time/event bound", bounded, calls)
	}
	if float64(tryHit) < 0.25*float64(tryProgs) {
		t.Errorf("except clauses ran in only %d of %d programs with try", tryHit, tryProgs)
	}
	if float64(recDeep) < 0.6*float64(recProgs) {
		t.Errorf("recursion went deeper than one call in only %d of %d recursive programs", recDeep, recProgs)
	}
}

// expectedExc are the exceptions the grammar means to raise sometimes; any
// other (NameError, TypeError, AttributeError, ...) is a generator bug.
var expectedExc = map[string]bool{"ValueError": true, "KeyError": true, "IndexError": true}

// TestSameResultsAnyHashSeed runs programs under two PYTHONHASHSEEDs: the
// results must agree (no set of str is ever bound or iterated), so traces
// are reproducible byte for byte.
func TestSameResultsAnyHashSeed(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 200
	}
	reqs := make([]checkReq, n)
	for i := range reqs {
		p := DefaultKnobs.program(41, i)
		reqs[i] = checkReq{ID: i, Source: p.source, Calls: p.calls(41, i, 3), Run: true}
	}
	a := checkAll(t, reqs, "PYTHONHASHSEED=1")
	b := checkAll(t, reqs, "PYTHONHASHSEED=2")
	for i := range a {
		for j := range a[i].Calls {
			x, y := a[i].Calls[j], b[i].Calls[j]
			if x.Status != y.Status || x.Result != y.Result || x.Exc != y.Exc || x.Events != y.Events {
				t.Errorf("program %d call %s differs across hash seeds: %+v vs %+v\n%s", i, reqs[i].Calls[j], x, y, reqs[i].Source)
			}
		}
	}
}

// normalize collapses all whitespace, so layout differences do not hide a copy.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestNotCruxEval checks a sample against the 800 CruxEval functions
// (evaluation data: read only to make sure none is emitted).
func TestNotCruxEval(t *testing.T) {
	dir, err := paths.DataDir("")
	if err != nil {
		t.Skip(err)
	}
	f, err := os.Open(filepath.Join(dir, "cruxeval.jsonl"))
	if err != nil {
		t.Skipf("no CruxEval data: %v", err)
	}
	defer f.Close()
	crux := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var rec struct {
			Code string `json:"code"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		crux[normalize(rec.Code)] = true
	}
	if len(crux) < 700 {
		t.Fatalf("read only %d CruxEval functions", len(crux))
	}
	n := 20000
	if testing.Short() {
		n = 3000
	}
	matches := 0
	for i := range n {
		src := DefaultKnobs.program(31, i).source
		fOnly := src[strings.Index(src, "def f("):]
		if crux[normalize(src)] || crux[normalize(fOnly)] {
			matches++
			t.Errorf("program %d equals a CruxEval function:\n%s", i, src)
		}
	}
	t.Logf("%d of %d programs equal a CruxEval function", matches, n)
}

func BenchmarkGenerate(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		Generate(1, i, 4)
	}
}

func FuzzGenerate(f *testing.F) {
	f.Add(int64(0), 0)
	f.Add(int64(-5), 123456789)
	f.Fuzz(func(t *testing.T, seed int64, i int) {
		ps := Generate(seed, i, 3)
		if len(ps) == 0 || !strings.HasPrefix(ps[len(ps)-1].Call, "f(") {
			t.Fatalf("bad calls %+v", ps)
		}
		if again := Generate(seed, i, 3); again[0] != ps[0] {
			t.Fatal("not deterministic")
		}
	})
}
