package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/engine"
	"ndb/engine/enginetest"
	"ndb/format"
	"ndb/tracer"
)

// truthPredictor answers every prompt with the true next frame:
// enginetest.Oracle (the prompt's place in the program's real trace, the
// asked action's target) of the prompt's program. A model that always
// predicted this would follow every session as far as the engine's rules
// allow.
type truthPredictor struct {
	oracles map[string]*enginetest.Oracle // by traced source
	calls   int
}

func (p *truthPredictor) Predict(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
	p.calls++
	src, err := format.HeaderSource(prompt)
	if err != nil {
		return nil, err
	}
	o := p.oracles[src]
	if o == nil {
		return nil, errors.New("truth: no trace for this program")
	}
	return o.Predict(ctx, prompt, k, d)
}

// perturbed answers like truth, but on one prompt in three (by hash) it
// changes the frame's first local, or its value: a model that is right on
// most single steps, as a real one is.
type perturbed struct{ truth *truthPredictor }

func (p perturbed) Predict(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
	out, err := p.truth.Predict(ctx, prompt, k, d)
	if err != nil {
		return nil, err
	}
	h := fnv.New32a()
	h.Write([]byte(prompt))
	if h.Sum32()%3 != 0 {
		return out, nil
	}
	f, err := format.ParseFrame(out[0])
	if err != nil {
		return nil, err
	}
	switch {
	case f.Kind.IsExit():
	case len(f.Locals) > 0:
		f.Locals = append(tracer.Locals(nil), f.Locals...)
		f.Locals[0].Value = "-999"
	case !f.Kind.HasLocals():
		f.Arg = "-999"
	}
	return []string{format.FrameText(f)}, nil
}

// sessionFixture traces the fixture programs and returns them with a truth
// predictor over their traces.
func sessionFixture(t *testing.T, real *engine.RealEngine) ([]NamedProgram, *truthPredictor) {
	t.Helper()
	progs := fixturePrograms(t)
	truth := &truthPredictor{oracles: map[string]*enginetest.Oracle{}}
	for _, p := range progs {
		tr, err := real.Trace(context.Background(), p.Program)
		if err != nil {
			t.Fatal(err)
		}
		truth.oracles[tr.Source] = enginetest.NewOracle(tr)
	}
	return progs, truth
}

// TestSessionTruthAndPerturbed: with a predictor that writes the true
// frames, every session of the fixture programs is right through its 10
// stops (the measure's own check: the model engine's placing of frames and
// the command mix agree with the real engine); with one frame in three
// perturbed, the sessions diverge, measurably and reproducibly.
func TestSessionTruthAndPerturbed(t *testing.T) {
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	progs, truth := sessionFixture(t, real)
	ctx := context.Background()
	sets := []SourcePrograms{{Source: "a", Programs: progs[:2]}, {Source: "b", Programs: progs[2:]}}
	n := 24
	if testing.Short() {
		n = 8
	}
	run := func(p engine.Predictor) (*SessionReport, string) {
		var dump bytes.Buffer
		rep, err := RunSessions(ctx, sets, SessionOptions{Sessions: n, Stops: 10, Seed: 5, Real: real,
			Engine: engine.NewNeuralEngine(engine.Model, p, engine.Draw{}, false), Dump: &dump})
		if err != nil {
			t.Fatal(err)
		}
		return rep, dump.String()
	}
	rep, dump := run(truth)
	if truth.calls == 0 {
		t.Fatal("the predictor was never asked")
	}
	o := rep.Overall
	if o.Sessions != 2*n || len(rep.Sources) != 2 || rep.Sources["a"].Sessions != n || rep.Sources["b"].Programs != 2 {
		t.Fatalf("sessions %d, sources %v", o.Sessions, rep.Sources)
	}
	for _, k := range DefaultSessionKs {
		if o.Frac(k) != 1 {
			t.Errorf("truth: first %d right in %.3f of the sessions, want 1", k, o.Frac(k))
		}
	}
	if len(o.FirstWrong) != 0 || o.MeanRightBefore() != frac(o.Length, o.Sessions) || o.Compared != o.Length {
		t.Errorf("truth: first wrong %v, right before %.2f, length %d, compared %d\n%s", o.FirstWrong, o.MeanRightBefore(), o.Length, o.Compared, dump)
	}
	for _, c := range SessionCommands {
		if v := o.ByCommand[c.Name]; v == nil || v[0] == 0 {
			t.Errorf("command %s never drawn (%v)", c.Name, o.ByCommand)
		}
	}
	if o.MeanRightBefore() < 5 {
		t.Errorf("sessions too short to measure: %.2f stops", o.MeanRightBefore())
	}
	// the dump names each b LINE's line, so that a session can be replayed
	breaks := 0
	for _, l := range strings.Split(strings.TrimSpace(dump), "\n") {
		var r SessionResult
		if err := json.Unmarshal([]byte(l), &r); err != nil || len(r.Lines) != len(r.Commands) {
			t.Fatalf("dumped session %q: %v, lines %v for commands %v", l, err, r.Lines, r.Commands)
		}
		for i, c := range r.Commands {
			if brk := strings.HasPrefix(c, "b+"); brk != (r.Lines[i] > 0) {
				t.Fatalf("dumped command %s with line %d", c, r.Lines[i])
			}
			breaks += min(r.Lines[i], 1)
		}
	}
	if breaks == 0 {
		t.Error("no b LINE dumped")
	}

	rep2, dump2 := run(perturbed{truth})
	p := rep2.Overall
	if p.Frac(10) > 0.8 || p.MeanRightBefore() >= o.MeanRightBefore()-1 || p.FirstWrong["locals"]+p.FirstWrong["value"] == 0 {
		t.Errorf("perturbed: first 10 right %.3f, stops before the first wrong %.2f (truth %.2f), fields %v",
			p.Frac(10), p.MeanRightBefore(), o.MeanRightBefore(), p.FirstWrong)
	}
	if p.Frac(1) < p.Frac(3) || p.Frac(3) < p.Frac(5) || p.Frac(5) < p.Frac(10) {
		t.Errorf("not monotone in k: %v", p.AllRight)
	}
	// the same seed gives the same sessions
	if _, again := run(perturbed{truth}); again != dump2 {
		t.Error("two runs with one seed differ")
	}
	// every compared command's answer time is kept, per command
	timed := 0
	for _, ts := range p.Latencies {
		timed += len(ts)
	}
	if timed != p.Compared || p.LatencyQuantile("", 0.5) <= 0 || p.LatencyQuantile("", 0.5) > p.LatencyQuantile("", 0.95) ||
		p.LatencyQuantile("", 0.95) > p.LatencyQuantile("", 1) || p.LatencyQuantile("s", 1) > p.LatencyQuantile("", 1) {
		t.Errorf("answer times: %d of %d compared, p50 %g p95 %g max %g", timed, p.Compared, p.LatencyQuantile("", 0.5), p.LatencyQuantile("", 0.95), p.LatencyQuantile("", 1))
	}
	md := rep2.Markdown()
	for _, want := range []string{"| a |", "| b |", "**all**", "first 10 right", "| s |", "p95 s"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	js := rep2.JSON()
	if _, ok := js["by_source"].(map[string]any)["a"]; !ok || js["all_right@10"] != p.Frac(10) {
		t.Errorf("json %v", js)
	}
	t.Logf("truth: %d sessions, %.2f stops; perturbed: %.1f%% / %.1f%% / %.1f%% / %.1f%% right at 1/3/5/10, %.2f stops before the first wrong",
		o.Sessions, o.MeanRightBefore(), 100*p.Frac(1), 100*p.Frac(3), 100*p.Frac(5), 100*p.Frac(10), p.MeanRightBefore())
}

func TestLatencyQuantile(t *testing.T) {
	s := newSessionScore()
	s.Latencies["s"] = []float64{0.4, 0.1, 0.3}
	s.Latencies["n"] = []float64{0.2, 1.0}
	for _, c := range []struct {
		cmd  string
		q    float64
		want float64
	}{{"", 0, 0.1}, {"", 0.5, 0.3}, {"", 0.95, 1.0}, {"", 1, 1.0}, {"s", 0.5, 0.3}, {"n", 0.5, 0.2}, {"r", 0.5, 0}} {
		if got := s.LatencyQuantile(c.cmd, c.q); got != c.want {
			t.Errorf("LatencyQuantile(%q, %g) = %g, want %g", c.cmd, c.q, got, c.want)
		}
	}
}

// TestSessionRealEngine: the real engine measured against itself is right
// everywhere (the harness's check for every engine's front door).
func TestSessionRealEngine(t *testing.T) {
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	rep, err := RunSessions(context.Background(), []SourcePrograms{{Source: "fixture", Programs: fixturePrograms(t)}},
		SessionOptions{Sessions: 12, Seed: 2, Real: real, Engine: real})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Overall.Frac(10) != 1 || rep.Sources != nil || rep.Engine != engine.Real {
		t.Errorf("real engine: %+v", rep.Overall)
	}
}

func TestSameStop(t *testing.T) {
	vars := func(kv ...string) tracer.Locals {
		var l tracer.Locals
		for i := 0; i+1 < len(kv); i += 2 {
			l = append(l, tracer.Var{Name: kv[i], Value: kv[i+1]})
		}
		return l
	}
	line := debugger.Stop{State: tracer.State{Event: tracer.EventLine, Lineno: 3, Function: "f", Depth: 1, Src: "    y = x",
		Locals: vars("x", "1", "y", "2")}}
	ret := debugger.Stop{State: tracer.State{Event: tracer.EventReturn, Lineno: 4, Function: "f", Depth: 1, Src: "    return y",
		Arg: "2", Locals: vars("x", "1")}}
	exit := debugger.Stop{State: tracer.State{Event: debugger.EventExit}, Exit: tracer.ExitNormal, Index: -1}
	with := func(s debugger.Stop, edit func(*debugger.Stop)) debugger.Stop {
		s.Locals = append(tracer.Locals(nil), s.Locals...)
		edit(&s)
		return s
	}
	cases := []struct {
		name       string
		pred, real debugger.Stop
		field      string // "" when right
	}{
		{"same", line, line, ""},
		{"locals in another order", with(line, func(s *debugger.Stop) { s.Locals = vars("y", "2", "x", "1") }), line, ""},
		{"a value", with(line, func(s *debugger.Stop) { s.Locals[1].Value = "3" }), line, "locals"},
		{"a missing local", with(line, func(s *debugger.Stop) { s.Locals = s.Locals[:1] }), line, "locals"},
		{"same text, other line number", with(line, func(s *debugger.Stop) { s.Lineno = 7 }), line, ""},
		{"other line", with(line, func(s *debugger.Stop) { s.Src = "    x = y" }), line, "line"},
		{"other depth (placing, not state)", with(line, func(s *debugger.Stop) { s.Depth = 2 }), line, ""},
		{"call for line", with(line, func(s *debugger.Stop) { s.Event = tracer.EventCall }), line, "event"},
		{"return", ret, ret, ""},
		{"return locals are not compared", with(ret, func(s *debugger.Stop) { s.Locals = nil }), ret, ""},
		{"returned value", with(ret, func(s *debugger.Stop) { s.Arg = "3" }), ret, "value"},
		{"exit", exit, exit, ""},
		{"exit for line", exit, line, "exit"},
		{"other exit", with(exit, func(s *debugger.Stop) { s.Exit = tracer.ExitError }), exit, "exit"},
	}
	for _, c := range cases {
		ok, field := SameStop(c.pred, c.real, false)
		if ok != (c.field == "") || !ok && field != c.field {
			t.Errorf("%s: %v %q, want %q", c.name, ok, field, c.field)
		}
	}
	if SamePlace(with(line, func(s *debugger.Stop) { s.Depth = 2 }), line) || !SamePlace(line, line) {
		t.Error("SamePlace")
	}
}

// TestDrawCommand: no reverse command at the first stop, every command
// drawn in time, breakpoints on lines that take one.
func TestDrawCommand(t *testing.T) {
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	tr, err := real.Trace(context.Background(), fixturePrograms(t)[0].Program)
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(context.Background(), debugger.NewTraceBackend(tr))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	lines := sessionLines(tr)
	for range 200 {
		name, cmd, brk := drawCommand(r, s, lines)
		if cmd.Reverse() || isReverseName(name) {
			t.Fatalf("reverse command %s at the first stop", name)
		}
		if (name == "b+c") != (brk > 0) {
			t.Fatalf("%s with breakpoint %d", name, brk)
		}
	}
	if _, err := s.Do(context.Background(), debugger.Command{Action: debugger.StepInto}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 2000 {
		name, _, brk := drawCommand(r, s, lines)
		seen[name] = true
		if brk > 0 && debugger.CheckBreakLine(tr.Source, brk) != "" {
			t.Fatalf("breakpoint on line %d: %s", brk, debugger.CheckBreakLine(tr.Source, brk))
		}
	}
	if len(seen) != len(SessionCommands) {
		t.Errorf("drawn %v", seen)
	}
}

// offStart is an engine whose first stop is one line off the real one.
type offStart struct{ real *engine.RealEngine }

func (e offStart) Name() string { return "off-start" }
func (e offStart) Close() error { return nil }
func (e offStart) Open(ctx context.Context, p engine.Program) (debugger.Backend, error) {
	b, err := e.real.Open(ctx, p)
	return offStartBackend{b}, err
}

type offStartBackend struct{ debugger.Backend }

func (b offStartBackend) Start(ctx context.Context) (debugger.Stop, error) {
	st, err := b.Backend.Start(ctx)
	st.Src += "  # elsewhere"
	return st, err
}

// TestSessionStartWrong: a session whose first stop (before any command)
// already differs counts as wrong at once, and still gets its length from
// the real side.
func TestSessionStartWrong(t *testing.T) {
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	rep, err := RunSessions(context.Background(), []SourcePrograms{{Source: "fixture", Programs: fixturePrograms(t)}},
		SessionOptions{Sessions: 6, Seed: 2, Real: real, Engine: offStart{real}})
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Overall
	if o.StartWrong != 6 || o.Frac(1) != 0 || o.FirstWrong["line"] != 6 || o.RightBefore != 0 || o.Length == 0 || o.Compared != 0 {
		t.Errorf("%+v", o)
	}
}
