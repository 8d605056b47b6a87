package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"ndb/dataset"
	"ndb/debugger"
	"ndb/engine"
	"ndb/format"
	"ndb/tracer"
)

// Whole-session accuracy (`ndb eval session`, docs/eval.md): seeded random
// pdb command sequences on held-out programs, each command run on the real
// engine's session and on the measured engine's session side by side,
// through debugger.Session (the API every front end drives). A session is
// followed until its first wrong stop: up to there both sessions hold the
// same history, so the measured engine always answers from a right context.

// SessionCommands are the commands a session draws from, with their draw
// weights (per 100 when every one is allowed): pdb's s, n, r, unt, c, and
// `b LINE` + c; the reverse commands rs (inv_step_into), rn (inv_step_over),
// rr (inv_step_call), and `b LINE` + rc (reverse continue).
var SessionCommands = []struct {
	Name   string
	Weight int
}{{"s", 30}, {"n", 25}, {"r", 10}, {"unt", 7}, {"c", 3}, {"b+c", 12}, {"rs", 5}, {"rn", 4}, {"rr", 2}, {"b+rc", 2}}

// DefaultSessionKs are the prefix lengths the report gives.
var DefaultSessionKs = []int{1, 3, 5, 10}

// SessionOptions configure RunSessions.
type SessionOptions struct {
	Sessions int    // sessions per source (default 30)
	Stops    int    // commands per session (default 10)
	Ks       []int  // prefix lengths reported (default 1, 3, 5, 10)
	Seed     uint64 // programs and commands derive from it
	// Real traces the programs; the real side of every session answers
	// from that trace (debugger.TraceBackend, what the real engine's
	// whole-run backend is).
	Real *engine.RealEngine
	// Engine is the engine measured (model, openai, real, ...).
	Engine   engine.Engine
	Progress func(done, total int)
	// Dump, when set, receives one JSON line per session: program,
	// commands, the first wrong stop (predicted and real) if any.
	Dump io.Writer
	// KeepBreaks keeps each `b LINE` set for the rest of the session, as
	// pdb does. Off, a `b LINE` serves its one command, like tbreak: the
	// format's step actions know no breakpoints, and a model engine
	// answers a step with breakpoints set by predicted steps (up to
	// Neural.MaxRollout predictions a command: an hour and more for 120
	// sessions on 2 cores, against 4 minutes).
	KeepBreaks bool
}

func (o *SessionOptions) defaults() {
	if o.Sessions <= 0 {
		o.Sessions = 30
	}
	if o.Stops <= 0 {
		o.Stops = 10
	}
	if len(o.Ks) == 0 {
		o.Ks = DefaultSessionKs
	}
}

// SessionScore tallies the sessions of one source (or all of them).
type SessionScore struct {
	Sessions int `json:"sessions"`
	Programs int `json:"programs"` // distinct programs the sessions ran
	// AllRight[k]: sessions whose first k stops were all right. A session
	// whose program ended (real exit) after fewer than k stops, all right,
	// counts as right for k: the model followed the whole run.
	AllRight map[int]int `json:"all_right"`
	// Reached[k]: sessions of at least k stops (the real program had not
	// ended); ReachedRight[k]: those whose first k stops were all right.
	Reached      map[int]int `json:"reached"`
	ReachedRight map[int]int `json:"reached_right"`
	// RightBefore sums, over sessions, the stops before the first wrong
	// one (a session without one counts its length).
	RightBefore int `json:"right_before"`
	Length      int `json:"length"`   // stops the sessions had, summed (up to Stops each, fewer when the program ended)
	Compared    int `json:"compared"` // stops compared (up to and including the first wrong one)
	// Misplaced counts right stops the engine placed at another line
	// number, function or depth than the real one (SamePlace).
	Misplaced int `json:"misplaced"`
	// SpecDiffers counts the `b LINE` + c (with no other breakpoint set)
	// whose pdb stop is not the SPEC breakpoint action's
	// (SessionResult.SpecDiffers).
	SpecDiffers  int `json:"spec_differs"`
	SpecCompared int `json:"spec_compared"` // the `b LINE` + c with no other breakpoint set
	StartWrong   int `json:"start_wrong"`   // sessions whose first stop (before any command) already differed
	// FirstWrong counts the first wrong stops by the field that differed
	// (exit, event, line, locals, value; error: the engine failed) and by the command
	// that led there.
	FirstWrong    map[string]int `json:"first_wrong_field"`
	FirstWrongCmd map[string]int `json:"first_wrong_command"`
	// ByCommand: per command, the stops compared and the right ones (each
	// answered from a right history).
	ByCommand map[string]*[2]int `json:"by_command"`
	// Latencies are, per command, the measured engine's answer times of
	// the commands compared, in seconds (LatencyQuantile).
	Latencies map[string][]float64 `json:"-"`
	programs  map[string]bool
}

func newSessionScore() *SessionScore {
	return &SessionScore{AllRight: map[int]int{}, Reached: map[int]int{}, ReachedRight: map[int]int{}, FirstWrong: map[string]int{}, FirstWrongCmd: map[string]int{},
		ByCommand: map[string]*[2]int{}, Latencies: map[string][]float64{}, programs: map[string]bool{}}
}

// Frac is the fraction of sessions whose first k stops were all right.
func (s *SessionScore) Frac(k int) float64 { return frac(s.AllRight[k], s.Sessions) }

// FracReached is the fraction of the sessions of at least k stops whose
// first k stops were all right, and how many sessions had k stops.
func (s *SessionScore) FracReached(k int) (float64, int) {
	return frac(s.ReachedRight[k], s.Reached[k]), s.Reached[k]
}

// LatencyQuantile is the q-quantile (0 to 1, nearest rank) of the
// measured engine's answer times to command ("": every command), in
// seconds; 0 with none.
func (s *SessionScore) LatencyQuantile(command string, q float64) float64 {
	var xs []float64
	for c, ts := range s.Latencies {
		if command == "" || c == command {
			xs = append(xs, ts...)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[max(0, min(len(xs)-1, int(math.Ceil(q*float64(len(xs))))-1))]
}

// MeanRightBefore is the mean number of stops before the first wrong one.
func (s *SessionScore) MeanRightBefore() float64 {
	if s.Sessions == 0 {
		return 0
	}
	return float64(s.RightBefore) / float64(s.Sessions)
}

func (s *SessionScore) add(r SessionResult, ks []int) {
	s.Sessions++
	s.programs[r.Program] = true
	s.Programs = len(s.programs)
	s.Length += r.Length
	s.RightBefore += r.RightBefore
	for _, k := range ks {
		if r.RightBefore >= k || r.Wrong < 0 {
			s.AllRight[k]++
		}
		if r.Length >= k {
			s.Reached[k]++
			if r.RightBefore >= k {
				s.ReachedRight[k]++
			}
		}
	}
	for i, c := range r.Commands {
		if i > r.Compared-1 {
			break
		}
		bc := s.ByCommand[c]
		if bc == nil {
			bc = &[2]int{}
			s.ByCommand[c] = bc
		}
		bc[0]++
		if i != r.Wrong {
			bc[1]++
		}
	}
	for i, sec := range r.Seconds {
		if i < len(r.Commands) {
			s.Latencies[r.Commands[i]] = append(s.Latencies[r.Commands[i]], sec)
		}
	}
	s.Compared += r.Compared
	s.Misplaced += r.Misplaced
	s.SpecDiffers += r.SpecDiffers
	s.SpecCompared += r.SpecCompared
	if r.Wrong >= 0 {
		s.FirstWrong[r.Field]++
		if r.Wrong < len(r.Commands) {
			s.FirstWrongCmd[r.Commands[r.Wrong]]++
		} else {
			s.StartWrong++
		}
	}
}

// SessionResult is one session.
type SessionResult struct {
	Source   string   `json:"source"`
	Program  string   `json:"program"`
	Commands []string `json:"commands"` // the commands run, in order (up to the first wrong stop)
	// Lines are the breakpoint lines of b+c and b+rc, one per command (0
	// for the others), so that a dumped session can be replayed by hand.
	Lines []int `json:"lines,omitempty"`
	// Length is the stops the session has (Stops, or fewer when the real
	// program ended); Compared the stops compared; RightBefore the stops
	// before the first wrong one (Length when none).
	Length      int `json:"length"`
	Compared    int `json:"compared"`
	RightBefore int `json:"right_before"`
	// Wrong is the index in Commands of the command whose stop was wrong,
	// len(Commands) when the start already differed, -1 when none was.
	Wrong     int `json:"wrong"`
	Misplaced int `json:"misplaced,omitempty"` // right stops placed elsewhere (SamePlace)
	// SpecDiffers counts the compared `b LINE` + c (with no other
	// breakpoint set) whose pdb stop is not the SPEC breakpoint action's
	// (specBreak): a model trained on the SPEC's action answers those
	// differently from pdb.
	SpecDiffers  int    `json:"spec_differs,omitempty"`
	SpecCompared int    `json:"spec_compared,omitempty"` // the `b LINE` + c with no other breakpoint set
	Field        string `json:"field,omitempty"`         // what differed first (see SessionScore.FirstWrong)
	Pred         string `json:"pred,omitempty"`          // the wrong stop, and the real one
	Real         string `json:"real,omitempty"`
	Error        string `json:"error,omitempty"` // the measured engine's error, when it failed
	// Seconds are the measured engine's answer times, one per command
	// compared (not dumped: a dump replays a run exactly).
	Seconds []float64 `json:"-"`

	realStops []debugger.Stop // the real session's stops, one per command compared
}

// SessionReport is the result of RunSessions.
type SessionReport struct {
	Engine  string
	Stops   int
	Ks      []int
	Overall *SessionScore
	// Sources: each source's score when several were measured.
	Sources map[string]*SessionScore
	// Skipped counts programs left out: their trace failed, the source's
	// trace rule dropped it, or the engine could not open them.
	Skipped map[string]int
	Seconds float64
}

// RunSessions runs opts.Sessions sessions on each source's programs
// (a seeded permutation of them, again when there are fewer programs than
// sessions) and scores them.
func RunSessions(ctx context.Context, sets []SourcePrograms, opts SessionOptions) (*SessionReport, error) {
	opts.defaults()
	if opts.Real == nil || opts.Engine == nil {
		return nil, errors.New("eval: session needs the real engine and the engine to measure")
	}
	start := time.Now()
	rep := &SessionReport{Engine: opts.Engine.Name(), Stops: opts.Stops, Ks: opts.Ks, Overall: newSessionScore(),
		Skipped: map[string]int{}}
	if len(sets) > 1 {
		rep.Sources = map[string]*SessionScore{}
	}
	total, done := opts.Sessions*len(sets), 0
	for si, set := range sets {
		if len(set.Programs) == 0 {
			return nil, fmt.Errorf("eval: source %s has no program", set.Source)
		}
		score := newSessionScore()
		if rep.Sources != nil {
			rep.Sources[set.Source] = score
		}
		traces := map[int]*tracer.Trace{}
		bad := map[int]bool{}
		n := 0
		for pass := 0; n < opts.Sessions; pass++ {
			order := rand.New(rand.NewPCG(opts.Seed, uint64(si)<<32|uint64(pass))).Perm(len(set.Programs))
			progress := false
			for _, pi := range order {
				if n >= opts.Sessions {
					break
				}
				if bad[pi] {
					continue
				}
				np := set.Programs[pi]
				tr := traces[pi]
				if tr == nil {
					var why string
					tr, why = traceFor(ctx, opts.Real, np, set.Filter)
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					if why != "" {
						bad[pi] = true
						rep.Skipped[why]++
						continue
					}
					traces[pi] = tr
				}
				r := rand.New(rand.NewPCG(opts.Seed^0x5e5510, uint64(si)<<48|uint64(n)))
				lines := sessionLines(tr)
				res, err := runSession(ctx, opts, np, tr, func(rs *debugger.Session) (string, debugger.Command, int) {
					return drawCommand(r, rs, lines)
				})
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					bad[pi] = true
					rep.Skipped["open: "+firstLine(err.Error())]++
					continue
				}
				res.Source = set.Source
				score.add(res, opts.Ks)
				if rep.Sources != nil {
					rep.Overall.add(res, opts.Ks)
				}
				if opts.Dump != nil {
					b, _ := json.Marshal(res)
					if _, err := opts.Dump.Write(append(b, '\n')); err != nil {
						return nil, err
					}
				}
				n++
				done++
				progress = true
				if opts.Progress != nil {
					opts.Progress(done, total)
				}
			}
			if !progress {
				break // every program failed
			}
		}
		if rep.Sources == nil {
			rep.Overall = score
		}
	}
	if rep.Overall.Sessions == 0 {
		return nil, errors.New("eval: no session could run (did every program fail to trace?)")
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// traceFor traces a program with the real engine and applies the source's
// trace rule; why is the reason it cannot be used, "" when it can.
func traceFor(ctx context.Context, real *engine.RealEngine, np NamedProgram, filter dataset.TraceFilter) (*tracer.Trace, string) {
	tr, err := real.Trace(ctx, np.Program)
	switch {
	case err != nil:
		return nil, "trace-error"
	case len(tr.States) == 0:
		return nil, "no-states"
	case filter != nil:
		if why := filter.DropTrace(dataset.Item{ID: np.ID, Program: np.Program}, tr); why != "" {
			return nil, why
		}
	}
	return tr, ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// commandDraw gives a session's next command from the real session's
// stop: its name (SessionCommands), the command, and the line of the
// breakpoint a `b LINE` + c or rc sets first (0: none).
type commandDraw func(rs *debugger.Session) (name string, cmd debugger.Command, brk int)

// runSession drives one session: a real session over the trace and the
// measured engine's session, the same commands (from draw) on both, until
// the first wrong stop, the real program's end or opts.Stops commands.
func runSession(ctx context.Context, opts SessionOptions, np NamedProgram, tr *tracer.Trace, draw commandDraw) (SessionResult, error) {
	res := SessionResult{Program: np.ID, Wrong: -1}
	tb := debugger.NewTraceBackend(tr)
	rs, err := debugger.NewSession(ctx, tb)
	if err != nil {
		return res, err
	}
	mb, err := opts.Engine.Open(ctx, np.Program)
	if err != nil {
		return res, err
	}
	if c, ok := mb.(io.Closer); ok {
		defer c.Close()
	}
	ms, err := debugger.NewSession(ctx, mb)
	if err != nil {
		return res, err
	}
	// do runs one command. With KeepBreaks a `b LINE` stays set, as in
	// pdb: later commands (n, r, unt, c, rc) stop there too when they
	// reach it, on every engine (a model engine rolls such a command out
	// by predicted steps under pdb's rules, debugger.Rollout), and a
	// breakpoint whose command the session refused is taken back, so both
	// sides keep the same ones. Without, it serves its one command.
	do := func(s *debugger.Session, cmd debugger.Command, brk int) (debugger.Stop, error) {
		if !opts.KeepBreaks {
			s.ClearBreaks()
			defer s.ClearBreaks()
		}
		if brk <= 0 {
			return s.Do(ctx, cmd)
		}
		had := slices.Contains(s.Breaks(), brk)
		if err := s.SetBreak(brk); err != nil {
			return s.Current(), err
		}
		st, err := s.Do(ctx, cmd)
		if err != nil && !had {
			s.ClearBreak(brk)
		}
		return st, err
	}
	if ok, field := SameStop(ms.Current(), rs.Current(), false); !ok {
		res.Wrong, res.Field = 0, field
		res.Pred, res.Real = stopDetail(ms.Current()), stopDetail(rs.Current())
	}
	for refused := 0; res.Wrong < 0 && len(res.Commands) < opts.Stops && refused < maxRefused; {
		cur := rs.Current()
		if cur.IsExit() && cur.Exit != debugger.ExitInvEntry {
			break // the program ended: the model cannot go back from there
		}
		name, cmd, brk := draw(rs)
		spec := specBreak(rs, tb, brk, cmd)
		want, rerr := do(rs, cmd, brk)
		if rerr != nil {
			refused++ // pdb refuses it here (a breakpoint line it rejects): draw another
			continue
		}
		res.Commands = append(res.Commands, name)
		res.Lines = append(res.Lines, brk)
		res.Compared++
		res.realStops = append(res.realStops, want)
		if spec != nil {
			res.SpecCompared++
			if ok, _ := SameStop(*spec, want, false); !ok {
				res.SpecDiffers++
			}
		}
		asked := time.Now()
		got, merr := do(ms, cmd, brk)
		res.Seconds = append(res.Seconds, time.Since(asked).Seconds())
		if merr != nil {
			res.Wrong, res.Field, res.Error = len(res.Commands)-1, "error", firstLine(merr.Error())
			res.Real = stopDetail(want)
			break
		}
		if ok, field := SameStop(got, want, cmd.Reverse()); !ok {
			res.Wrong, res.Field = len(res.Commands)-1, field
			res.Pred, res.Real = stopDetail(got), stopDetail(want)
			break
		}
		if !SamePlace(got, want) {
			res.Misplaced++
		}
	}
	// the session's length: the commands it would have run before the
	// program's end (runs on, on the real side only, after a wrong stop)
	res.Length = len(res.Commands)
	if res.Wrong >= 0 {
		res.RightBefore = res.Wrong
		for refused := 0; res.Length < opts.Stops && refused < maxRefused; {
			if cur := rs.Current(); cur.IsExit() && cur.Exit != debugger.ExitInvEntry {
				break
			}
			_, cmd, brk := draw(rs)
			if _, err := do(rs, cmd, brk); err != nil {
				refused++
			} else {
				res.Length++
			}
		}
	} else {
		res.RightBefore = res.Length
	}
	return res, nil
}

// specBreak is, for a `b LINE` + c with no other breakpoint set, the stop
// of the SPEC's breakpoint action at the real session's stop (the first
// state of any event on the line's text), which is what the model engine
// asks the model for; nil for other commands (with several breakpoints the
// model engine rolls the continue out by steps). pdb's continue stops at
// the line's next line event.
func specBreak(rs *debugger.Session, tb *debugger.TraceBackend, brk int, cmd debugger.Command) *debugger.Stop {
	if brk == 0 || cmd.Backward || cmd.Action != debugger.Continue {
		return nil
	}
	if set := rs.Breaks(); len(set) > 1 || len(set) == 1 && set[0] != brk {
		return nil
	}
	p, ok := tb.PosOf(rs.Current())
	if !ok {
		return nil
	}
	st := tb.StopAt(tb.Tree().Apply(p, debugger.Command{Action: debugger.Breakpoint, Src: rs.Line(brk), Line: brk}))
	return &st
}

// maxRefused bounds the commands drawn again because the real session
// refused one.
const maxRefused = 50

// sessionLines are the trace's line events: their lines in order of the
// states (the breakpoints a user sets are lines the run reaches).
func sessionLines(tr *tracer.Trace) []int {
	out := make([]int, len(tr.States))
	for i, s := range tr.States {
		if s.Event == tracer.EventLine {
			out[i] = s.Lineno
		}
	}
	return out
}

// drawCommand draws the next command from the real session's stop: only
// forward commands before the start (inv_exit_entry) and at the first stop;
// a breakpoint for c on a line the run still reaches (3 in 4; else any
// line that takes one), for rc on a line it has passed.
func drawCommand(r *rand.Rand, rs *debugger.Session, lines []int) (string, debugger.Command, int) {
	cur := rs.Current()
	back := !cur.IsExit() && len(rs.History()) > 1
	total := 0
	for _, c := range SessionCommands {
		if back || !isReverseName(c.Name) {
			total += c.Weight
		}
	}
	x := r.IntN(total)
	name := ""
	for _, c := range SessionCommands {
		if !back && isReverseName(c.Name) {
			continue
		}
		if x < c.Weight {
			name = c.Name
			break
		}
		x -= c.Weight
	}
	brk := 0
	pick := func(from, to int) int {
		var cands []int
		for i := max(from, 0); i < min(to, len(lines)); i++ {
			if lines[i] > 0 {
				cands = append(cands, lines[i])
			}
		}
		if len(cands) > 0 && r.IntN(4) > 0 {
			return cands[r.IntN(len(cands))]
		}
		all := debugger.BreakpointLines(rs.Source())
		if len(all) == 0 {
			return 0
		}
		return all[r.IntN(len(all))]
	}
	idx := cur.Index
	if cur.IsExit() { // inv_exit_entry: everything is ahead
		idx = -1
	}
	cmd := debugger.Moves[strings.TrimPrefix(name, "b+")]
	switch name {
	case "b+c":
		brk = pick(idx+1, len(lines))
	case "b+rc":
		brk = pick(0, idx)
	}
	return name, cmd, brk
}

func isReverseName(n string) bool { return n == "rs" || n == "rn" || n == "rr" || n == "b+rc" }

// SameStop reports whether a predicted stop is the real one, and if not
// the first field that differs: "exit" (one is an exit and the other not,
// or another exit), "event" (the frame kind), "line" (the source line's
// text), "locals" (every local of the frame, by name and value; return and
// exception frames have none), "value" (the return value or exception).
// That is next-state's exact match (CompareFrames) on the frames showing
// both stops with all their locals, the predicted locals put in the real
// order first (a model's elided frames cannot say where a new name sits in
// f_locals, and the order is no fact of the program's state). The line
// number, function and depth are the engine's placing of the frame, not
// the model's prediction: SamePlace compares them.
func SameStop(pred, real debugger.Stop, inverse bool) (bool, string) {
	if pred.IsExit() || real.IsExit() {
		if pred.IsExit() && real.IsExit() && pred.Exit == real.Exit {
			return true, ""
		}
		return false, "exit"
	}
	pred.Locals = inOrderOf(pred.Locals, real.Locals)
	pf, perr := fullFrame(pred, inverse)
	rf, rerr := fullFrame(real, inverse)
	if perr != nil || rerr != nil {
		return false, "event" // a stop no frame of this direction shows
	}
	m := CompareFrames(pf, rf)
	switch {
	case !m.Fields[FieldEvt]:
		return false, "event"
	case !m.Fields[FieldSrc]:
		return false, "line"
	case rf.Kind.HasLocals() && !m.Fields[FieldLocals]:
		return false, "locals"
	case !rf.Kind.HasLocals() && !m.Fields[FieldArg]:
		return false, "value"
	}
	return m.Exact, "event" // the fields make the frame: Exact holds here
}

// SamePlace reports whether two stops sit at the same line number, in the
// same function at the same call depth.
func SamePlace(a, b debugger.Stop) bool {
	return a.IsExit() == b.IsExit() && a.Lineno == b.Lineno && a.Function == b.Function && a.Depth == b.Depth
}

// fullFrame is the frame showing st with all its locals.
func fullFrame(st debugger.Stop, inverse bool) (format.Frame, error) {
	return format.NewBuilder(inverse).Stop(st, "")
}

// inOrderOf returns pred's locals in the order of ref's names when both
// hold the same names; otherwise pred unchanged.
func inOrderOf(pred, ref tracer.Locals) tracer.Locals {
	if len(pred) != len(ref) {
		return pred
	}
	out := make(tracer.Locals, 0, len(ref))
	for _, v := range ref {
		p, ok := pred.Get(v.Name)
		if !ok {
			return pred
		}
		out = append(out, tracer.Var{Name: v.Name, Value: p})
	}
	return out
}

// stopDetail is describeStop with the depth, value and locals: a stop in
// the session dump.
func stopDetail(st debugger.Stop) string {
	if st.IsExit() {
		return describeStop(st)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s depth %d", describeStop(st), st.Depth)
	if st.Arg != "" {
		fmt.Fprintf(&b, " -> %s", st.Arg)
	}
	if len(st.Locals) > 0 {
		var kv []string
		for _, v := range st.Locals {
			kv = append(kv, v.Name+"="+v.Value)
		}
		fmt.Fprintf(&b, " {%s}", strings.Join(kv, ", "))
	}
	return b.String()
}

// JSON is the summary line of `ndb eval session --json`.
func (r *SessionReport) JSON() map[string]any {
	out := r.Overall.JSON(r.Ks)
	out["engine"], out["stops"], out["seconds"] = r.Engine, r.Stops, r.Seconds
	if len(r.Skipped) > 0 {
		out["skipped_programs"] = r.Skipped
	}
	if len(r.Sources) > 0 {
		bs := map[string]any{}
		for name, s := range r.Sources {
			bs[name] = s.JSON(r.Ks)
		}
		out["by_source"] = bs
	}
	return out
}

// JSON is one score: "all_right@k" fractions, the mean stops before the
// first wrong one, and the tallies.
func (s *SessionScore) JSON(ks []int) map[string]any {
	out := map[string]any{"sessions": s.Sessions, "programs": s.Programs, "mean_right_before": s.MeanRightBefore(),
		"mean_length": frac(s.Length, s.Sessions), "compared": s.Compared, "start_wrong": s.StartWrong, "misplaced": s.Misplaced,
		"spec_differs": s.SpecDiffers, "spec_compared": s.SpecCompared,
		"first_wrong_field": s.FirstWrong, "first_wrong_command": s.FirstWrongCmd,
		"latency_s": map[string]float64{"p50": s.LatencyQuantile("", 0.5), "p95": s.LatencyQuantile("", 0.95), "max": s.LatencyQuantile("", 1)}}
	for _, k := range ks {
		out[fmt.Sprintf("all_right@%d", k)] = s.Frac(k)
		f, n := s.FracReached(k)
		out[fmt.Sprintf("reached@%d", k)] = n
		out[fmt.Sprintf("all_right_of_reached@%d", k)] = f
	}
	bc := map[string]any{}
	for c, v := range s.ByCommand {
		bc[c] = map[string]any{"n": v[0], "right": v[1], "acc": frac(v[1], v[0]), "p50_s": s.LatencyQuantile(c, 0.5), "p95_s": s.LatencyQuantile(c, 0.95)}
	}
	out["by_command"] = bc
	return out
}

// Markdown is the report's table: per source (and overall), the sessions
// whose first k stops were all right (a session that ended sooner, all
// right, counts), the same for the largest k among the sessions that had k
// stops, the mean stops before the first wrong one; then each command's
// stop accuracy and the first wrong fields.
func (r *SessionReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Whole sessions, engine %s: sessions of up to %d commands, %d sessions, %.0f s\n\n", r.Engine, r.Stops, r.Overall.Sessions, r.Seconds)
	b.WriteString("| source | sessions | programs |")
	sep := "| --- | --- | --- |"
	for _, k := range r.Ks {
		fmt.Fprintf(&b, " first %d right |", k)
		sep += " --- |"
	}
	kMax := r.Ks[len(r.Ks)-1]
	fmt.Fprintf(&b, " first %d right, of the sessions with %d stops | stops before the first wrong one | mean length |\n", kMax, kMax)
	b.WriteString(sep + " --- | --- | --- |\n")
	row := func(name string, s *SessionScore) {
		fmt.Fprintf(&b, "| %s | %d | %d |", name, s.Sessions, s.Programs)
		for _, k := range r.Ks {
			fmt.Fprintf(&b, " %.1f |", 100*s.Frac(k))
		}
		f, n := s.FracReached(kMax)
		fmt.Fprintf(&b, " %.1f of %d | %.2f | %.2f |\n", 100*f, n, s.MeanRightBefore(), frac(s.Length, s.Sessions))
	}
	var names []string
	for n := range r.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		row(n, r.Sources[n])
	}
	row("**all**", r.Overall)
	b.WriteString("\nStop accuracy per command (% right, each answered from a right history; n) and the engine's answer time (median and 95th percentile, seconds):\n\n| command | n | right | p50 s | p95 s |\n| --- | --- | --- | --- | --- |\n")
	for _, c := range SessionCommands {
		if v := r.Overall.ByCommand[c.Name]; v != nil {
			fmt.Fprintf(&b, "| %s | %d | %.1f | %.3f | %.3f |\n", c.Name, v[0], 100*frac(v[1], v[0]), r.Overall.LatencyQuantile(c.Name, 0.5), r.Overall.LatencyQuantile(c.Name, 0.95))
		}
	}
	fmt.Fprintf(&b, "| **all** | %d | | %.3f | %.3f |\n", r.Overall.Compared, r.Overall.LatencyQuantile("", 0.5), r.Overall.LatencyQuantile("", 0.95))
	b.WriteString("\nFirst wrong stop by field: ")
	var fs []string
	for _, f := range []string{"exit", "event", "line", "locals", "value", "error"} {
		if n := r.Overall.FirstWrong[f]; n > 0 {
			fs = append(fs, fmt.Sprintf("%s %d", f, n))
		}
	}
	if len(fs) == 0 {
		fs = []string{"none"}
	}
	b.WriteString(strings.Join(fs, ", ") + "\n")
	if r.Overall.Misplaced > 0 {
		fmt.Fprintf(&b, "\nRight stops the engine placed at another line number, function or depth: %d of %d\n", r.Overall.Misplaced, r.Overall.Compared)
	}
	if r.Overall.SpecCompared > 0 {
		fmt.Fprintf(&b, "\n`b LINE` + c with no other breakpoint set where pdb's stop is not the SPEC breakpoint action's (what the model engine asks): %d of %d\n", r.Overall.SpecDiffers, r.Overall.SpecCompared)
	}
	if len(r.Skipped) > 0 {
		var ks []string
		for k := range r.Skipped {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		var parts []string
		for _, k := range ks {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.Skipped[k]))
		}
		fmt.Fprintf(&b, "\nPrograms left out: %s\n", strings.Join(parts, ", "))
	}
	return b.String()
}
