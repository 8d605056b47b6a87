package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"ndb/debugger"
	"ndb/engine"
	"ndb/format"
	"ndb/internal/pysource"
	"ndb/tracer"
)

// CruxItem is one CruxEval problem: a function f, an input (argument text)
// and its output (a literal).
type CruxItem struct {
	ID     string `json:"id"`
	Code   string `json:"code"`
	Input  string `json:"input"`
	Output string `json:"output"`
}

// CruxFunc is the name of the function every CruxEval item defines.
const CruxFunc = "f"

// LoadCruxEval reads cruxeval.jsonl (one item per line).
func LoadCruxEval(path string) ([]CruxItem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var items []CruxItem
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var it CruxItem
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			return nil, fmt.Errorf("eval: %s:%d: %w", path, n, err)
		}
		if it.Code == "" || strings.TrimSpace(it.Output) == "" { // an empty input is f()
			return nil, fmt.Errorf("eval: %s:%d: item %q lacks code or output", path, n, it.ID)
		}
		if it.ID == "" {
			it.ID = fmt.Sprintf("line_%d", n)
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("eval: %s holds no items", path)
	}
	return items, nil
}

// Tasks and output actions of a CruxEval run.
const (
	TaskOutput = "output"
	TaskInput  = "input"
)

// CruxOptions configure RunCruxEval.
type CruxOptions struct {
	Task   string          // TaskOutput or TaskInput
	Action debugger.Action // output: StepReturn (default) or Breakpoint; input: InvStepCall
	// Engine predicts (any engine: real, model, openai, cwm).
	Engine engine.Engine
	// Predictor, when the engine has one (model, openai), enables k
	// candidates for test-time scaling (input task).
	Predictor engine.Predictor
	// Real traces the programs for the true context states (the call of f
	// with its arguments, its return state). May be Engine itself.
	Real *engine.RealEngine
	// Scorer runs the checks.
	Scorer *Scorer
	// K > 1 samples K candidates per item (temperature 0.6, top-p 0.95) and
	// chooses one by majority vote and by forward self-consistency.
	K    int
	Seed uint64
	// Progress is called after each item (may be nil).
	Progress func()
}

// CruxResult is one item's outcome.
type CruxResult struct {
	ID      string  `json:"id"`
	Answer  string  `json:"answer"`                  // the prediction: a repr (output) or argument text (input)
	Pass    bool    `json:"pass"`                    // assert f(INPUT) == OUTPUT holds with the answer
	Exact   bool    `json:"exact"`                   // the answer is the data set's value
	Literal bool    `json:"literal"`                 // the answer is made of Python literals
	Error   string  `json:"error,omitempty"`         // why there is no answer, or why the check failed
	Stop    string  `json:"stop,omitempty"`          // what the engine's last stop was (event and line)
	Src     string  `json:"bp_src,omitempty"`        // breakpoint: the line set
	Leaked  bool    `json:"bp_from_trace,omitempty"` // breakpoint: f has several return statements (or none): the line is the one the real run returned from
	Seconds float64 `json:"seconds"`
	// Test-time scaling (K > 1).
	Candidates   []string `json:"candidates,omitempty"`
	CandPass     []bool   `json:"candidates_pass,omitempty"`
	MajorityPass bool     `json:"majority_pass,omitempty"`
	SCPass       bool     `json:"sc_pass,omitempty"`
	SCChosen     *int     `json:"sc_chosen,omitempty"` // index of the self-consistent candidate; -1 if none was consistent
}

// CruxReport sums a run up.
type CruxReport struct {
	Task       string       `json:"task"`
	Action     string       `json:"action"`
	Engine     string       `json:"engine"`
	N          int          `json:"n"`
	PassAt1    float64      `json:"pass@1"`      // percent
	ExactMatch float64      `json:"exact_match"` // percent
	Literal    float64      `json:"literal"`     // percent of answers that are literals
	Errors     int          `json:"errors"`      // items without an answer
	Leaked     int          `json:"bp_from_trace,omitempty"`
	K          int          `json:"k,omitempty"`
	PassAtK    float64      `json:"pass@k,omitempty"`
	Majority   float64      `json:"majority@k,omitempty"`
	SelfCons   float64      `json:"self_consistency@k,omitempty"`
	Seconds    float64      `json:"seconds"`
	Results    []CruxResult `json:"-"`
}

// cruxCase is an item with its true context states.
type cruxCase struct {
	item   CruxItem
	call   string
	hist   []debugger.Step // output task: main's call, main's line, f's call
	ret    debugger.Stop   // f's return state
	bpSrc  string
	leaked bool
}

// RunCruxEval predicts every item with opts.Engine, scores the answers and
// sums them up. Item-level failures (the engine errs, the answer is no
// literal) count as failures; only harness failures return an error.
func RunCruxEval(ctx context.Context, items []CruxItem, opts CruxOptions) (*CruxReport, error) {
	if opts.Engine == nil || opts.Real == nil || opts.Scorer == nil {
		return nil, errors.New("eval: cruxeval needs an engine, a real engine and a scorer")
	}
	switch opts.Task {
	case TaskOutput:
		if opts.Action == "" {
			opts.Action = debugger.StepReturn
		}
		if opts.Action != debugger.StepReturn && opts.Action != debugger.Breakpoint {
			return nil, fmt.Errorf("eval: output prediction is by step_return or breakpoint, not %q", opts.Action)
		}
	case TaskInput:
		if opts.Action == "" {
			opts.Action = debugger.InvStepCall
		}
		if opts.Action != debugger.InvStepCall {
			return nil, fmt.Errorf("eval: input prediction is by inv_step_call, not %q", opts.Action)
		}
	default:
		return nil, fmt.Errorf("eval: unknown task %q (want output or input)", opts.Task)
	}
	start := time.Now()
	rep := &CruxReport{Task: opts.Task, Action: string(opts.Action), Engine: opts.Engine.Name(), N: len(items), K: opts.K}
	results := make([]CruxResult, len(items))
	var jobs []ScoreJob
	type itemJobs struct {
		greedy int   // index in jobs of the greedy answer's check, -1 if none
		cands  []int // the candidates' checks
	}
	jobOf := make([]itemJobs, len(items))
	for i, it := range items {
		t0 := time.Now()
		res := &results[i]
		res.ID = it.ID
		jobOf[i].greedy = -1
		c, err := prepareCase(ctx, opts.Real, it)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.Error = "context: " + err.Error()
		} else {
			res.Src, res.Leaked = c.bpSrc, c.leaked && opts.Action == debugger.Breakpoint
			job, stop, err := predictCase(ctx, opts, c)
			res.Stop = stop
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				res.Error = err.Error()
			} else {
				jobOf[i].greedy = len(jobs)
				jobs = append(jobs, job)
			}
			if opts.K > 1 && opts.Task == TaskInput && opts.Predictor != nil {
				cands, sc, err := sampleInputs(ctx, opts, c, uint64(i))
				if err != nil && ctx.Err() != nil {
					return nil, ctx.Err()
				}
				res.SCChosen = &sc
				for _, cj := range cands {
					jobOf[i].cands = append(jobOf[i].cands, len(jobs))
					jobs = append(jobs, cj)
				}
			}
		}
		res.Seconds = time.Since(t0).Seconds()
		if opts.Progress != nil {
			opts.Progress()
		}
	}
	scores, err := opts.Scorer.Score(ctx, jobs)
	if err != nil {
		return nil, err
	}
	var pass, exact, literal, passK, maj, sc int
	for i := range results {
		res := &results[i]
		idx := jobOf[i]
		if idx.greedy >= 0 {
			s := scores[idx.greedy]
			res.Answer, res.Pass, res.Exact, res.Literal = s.Answer, s.Pass, s.Exact, s.Literal
			if s.Error != "" && res.Error == "" {
				res.Error = s.Error
			}
		}
		if idx.greedy < 0 {
			rep.Errors++
		}
		if res.Leaked {
			rep.Leaked++
		}
		if len(idx.cands) > 0 {
			var keys []string
			for _, j := range idx.cands {
				res.Candidates = append(res.Candidates, scores[j].Answer)
				res.CandPass = append(res.CandPass, scores[j].Pass)
				keys = append(keys, candidateKey(jobs[j]))
			}
			for _, p := range res.CandPass {
				if p {
					passK++
					break
				}
			}
			m := majority(keys)
			res.MajorityPass = res.CandPass[m]
			choice := -1
			if res.SCChosen != nil {
				choice = *res.SCChosen
			}
			if choice < 0 || choice >= len(keys) {
				choice = m
			}
			res.SCPass = res.CandPass[choice]
			if res.MajorityPass {
				maj++
			}
			if res.SCPass {
				sc++
			}
		}
		if res.Pass {
			pass++
		}
		if res.Exact {
			exact++
		}
		if res.Literal {
			literal++
		}
	}
	pct := func(n int) float64 {
		if len(items) == 0 {
			return 0
		}
		return 100 * float64(n) / float64(len(items))
	}
	rep.PassAt1, rep.ExactMatch, rep.Literal = pct(pass), pct(exact), pct(literal)
	if opts.K > 1 && opts.Task == TaskInput && opts.Predictor != nil {
		rep.PassAtK, rep.Majority, rep.SelfCons = pct(passK), pct(maj), pct(sc)
	} else {
		rep.K = 0
	}
	rep.Results = results
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// prepareCase traces f(INPUT) for real and picks the true context states.
func prepareCase(ctx context.Context, real *engine.RealEngine, it CruxItem) (*cruxCase, error) {
	call := CruxFunc + "(" + strings.TrimSpace(it.Input) + ")"
	if strings.ContainsAny(call, "\r\n") {
		call = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(call)
	}
	tr, err := real.Trace(ctx, tracer.Program{Source: it.Code, Call: call})
	if err != nil {
		return nil, err
	}
	if tr.Exit.Kind != tracer.ExitNormal {
		return nil, fmt.Errorf("the real run ended %s (%s%s)", tr.Exit.Kind, tr.Exit.Error, tr.Exit.Reason)
	}
	tree := debugger.NewTree(tr)
	c := &cruxCase{item: it, call: call}
	p := debugger.Initial(tr)
	c.hist = []debugger.Step{{Stop: debugger.StopAt(tree, p)}}
	for range 2 {
		cmd := debugger.Command{Action: debugger.StepInto}
		p = tree.Apply(p, cmd)
		c.hist = append(c.hist, debugger.Step{Command: cmd, Stop: debugger.StopAt(tree, p)})
	}
	fc := c.hist[2].Stop
	if fc.Event != tracer.EventCall || fc.Function != CruxFunc || fc.Depth != 1 {
		return nil, fmt.Errorf("two step_into from main's call reach %s %s, not the call of %s", fc.Event, fc.Function, CruxFunc)
	}
	rp := tree.Apply(p, debugger.Command{Action: debugger.StepReturn})
	c.ret = debugger.StopAt(tree, rp)
	if c.ret.Event != tracer.EventReturn || c.ret.Function != CruxFunc || c.ret.Depth != 1 {
		return nil, fmt.Errorf("step_return from the call of %s reaches %s %s, not its return", CruxFunc, c.ret.Event, c.ret.Function)
	}
	// The breakpoint line: f's only return statement; with several (or
	// none), the one the real run returned from.
	rets := returnLines(tr.Source, fc.Lineno)
	if len(rets) == 1 {
		c.bpSrc = rets[0]
	} else {
		c.bpSrc, c.leaked = c.ret.Src, true
	}
	return c, nil
}

// returnLines are the texts of the lines of the return statements of the
// function whose call event is on line callLine (1-based: its def line, or
// its first decorator's) of source, read by the source index: a nested
// def's returns and the text of strings and comments are not its.
func returnLines(source string, callLine int) []string {
	px := pysource.New(source)
	var fn *pysource.Scope
	for _, s := range px.Opens(callLine) {
		if s.Kind == pysource.Function {
			fn = s
			break
		}
	}
	if fn == nil {
		return nil
	}
	var out []string
	for _, n := range px.Returns(fn) {
		if l := px.Line(n); len(out) == 0 || out[len(out)-1] != l {
			out = append(out, l)
		}
	}
	return out
}

// openFor opens the engine's backend for c. Model engines get the code
// alone for input prediction: the wrapper's call would show the answer.
func openFor(ctx context.Context, e engine.Engine, c *cruxCase, task string) (debugger.Backend, error) {
	p := tracer.Program{Source: c.item.Code, Call: c.call}
	if task == TaskInput && e.Name() != engine.Real {
		p.Call = ""
	}
	return e.Open(ctx, p)
}

// predictCase asks the engine for the answer and returns its check.
func predictCase(ctx context.Context, opts CruxOptions, c *cruxCase) (ScoreJob, string, error) {
	job := ScoreJob{ID: c.item.ID, Code: c.item.Code, Func: CruxFunc, Task: opts.Task, Input: c.item.Input, Output: c.item.Output}
	b, err := openFor(ctx, opts.Engine, c, opts.Task)
	if err != nil {
		return job, "", err
	}
	if opts.Task == TaskInput {
		st, err := b.Next(ctx, []debugger.Step{{Stop: c.ret}}, debugger.Command{Action: debugger.InvStepCall})
		if err != nil {
			return job, "", err
		}
		if st.Event != tracer.EventCall {
			return job, describeStop(st), fmt.Errorf("inv_step_call reached %s, not a call", describeStop(st))
		}
		for _, v := range st.Locals {
			job.Args = append(job.Args, [2]string{v.Name, v.Value})
		}
		return job, describeStop(st), nil
	}
	if _, ok := b.(*engine.CWM); ok {
		return predictBySession(ctx, opts, c, b, job)
	}
	hist := append([]debugger.Step(nil), c.hist...)
	cmd := debugger.Command{Action: debugger.StepReturn}
	if opts.Action == debugger.Breakpoint {
		cmd = debugger.Command{Action: debugger.Breakpoint, Src: c.bpSrc}
	}
	st, err := b.Next(ctx, hist, cmd)
	if err != nil {
		return job, "", err
	}
	if opts.Action == debugger.Breakpoint {
		// The breakpoint stops before the return statement runs: one
		// step_return more gives its value. In a recursive f it may stop in
		// a deeper call first: continue to the breakpoint until the stop is
		// in the outer call (at most a few times).
		depth := c.hist[2].Stop.Depth
		for range 6 {
			var next debugger.Command
			switch {
			case st.IsExit() || st.Depth < depth || st.Event != tracer.EventLine && st.Event != tracer.EventReturn:
			case st.Depth > depth: // inside a deeper (recursive) call
				next = debugger.Command{Action: debugger.Breakpoint, Src: c.bpSrc}
			case st.Event == tracer.EventLine && cmd.Action == debugger.Breakpoint:
				next = debugger.Command{Action: debugger.StepReturn}
			}
			if next.Action == "" {
				break
			}
			hist = append(hist, debugger.Step{Command: cmd, Stop: st})
			cmd = next
			if st, err = b.Next(ctx, hist, cmd); err != nil {
				return job, "", err
			}
		}
	}
	if st.Event != tracer.EventReturn {
		return job, describeStop(st), fmt.Errorf("%s reached %s, not a return", opts.Action, describeStop(st))
	}
	job.Pred = st.Arg
	return job, describeStop(st), nil
}

// predictBySession drives a backend that only continues its own rollout
// (cwm: CWM's format traces frame by frame from the entry, as CWM's own
// CruxEval baseline does): from the start, step_into twice to f's call,
// then the output action, each stop predicted.
func predictBySession(ctx context.Context, opts CruxOptions, c *cruxCase, b debugger.Backend, job ScoreJob) (ScoreJob, string, error) {
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		return job, "", err
	}
	cmds := []debugger.Command{{Action: debugger.StepInto}, {Action: debugger.StepInto}, {Action: debugger.StepReturn}}
	if opts.Action == debugger.Breakpoint {
		cmds[2] = debugger.Command{Action: debugger.Breakpoint, Src: c.bpSrc}
	}
	var st debugger.Stop
	for i, cmd := range cmds {
		if st, err = s.Do(ctx, cmd); err != nil {
			return job, describeStop(st), err
		}
		if i == 2 && opts.Action == debugger.Breakpoint && st.Event == tracer.EventLine {
			if st, err = s.Do(ctx, debugger.Command{Action: debugger.StepReturn}); err != nil {
				return job, describeStop(st), err
			}
		}
		if st.IsExit() {
			break
		}
	}
	if st.Event != tracer.EventReturn {
		return job, describeStop(st), fmt.Errorf("%s reached %s, not a return", opts.Action, describeStop(st))
	}
	job.Pred = st.Arg
	return job, describeStop(st), nil
}

func describeStop(st debugger.Stop) string {
	if st.IsExit() {
		return "exit " + st.Exit
	}
	return fmt.Sprintf("%s %s:%d", st.Event, st.Function, st.Lineno)
}

// sampleInputs draws opts.K input candidates in one batch and picks the
// first whose forward prediction (greedy step_return from the call with the
// candidate's arguments) gives the output back; -1 when none does.
func sampleInputs(ctx context.Context, opts CruxOptions, c *cruxCase, item uint64) ([]ScoreJob, int, error) {
	src := tracer.NormalizeNewlines(c.item.Code)
	retState := c.ret.State
	fr, err := format.NewBuilder(true).Frame(retState, false, "")
	if err != nil {
		return nil, -1, err
	}
	prompt, err := format.PromptText(src, []format.Frame{fr}, []format.Step{{Action: debugger.InvStepCall}})
	if err != nil {
		return nil, -1, err
	}
	draw := engine.Draw{Temperature: 0.6, TopP: 0.95, Seed: opts.Seed*1_000_003 + item + 1}
	outs, err := opts.Predictor.Predict(ctx, prompt, opts.K, draw)
	if err != nil {
		return nil, -1, err
	}
	var jobs []ScoreJob
	chosen := -1
	consistent := map[string]bool{}
	for i, text := range outs {
		job := ScoreJob{ID: fmt.Sprintf("%s#%d", c.item.ID, i), Code: c.item.Code, Func: CruxFunc, Task: TaskInput,
			Input: c.item.Input, Output: c.item.Output}
		f, err := format.ParsePredicted(text, true)
		if err == nil && f.Kind == format.InvCall {
			for _, v := range format.MergeLocals(nil, f) {
				job.Args = append(job.Args, [2]string{v.Name, v.Value})
			}
		}
		jobs = append(jobs, job)
		if chosen >= 0 || err != nil || f.Kind != format.InvCall {
			continue
		}
		key := candidateKey(job)
		ok, seen := consistent[key]
		if !seen {
			ok = forwardConsistent(ctx, opts.Predictor, c, f, retState.Arg)
			consistent[key] = ok
		}
		if ok {
			chosen = i
		}
	}
	return jobs, chosen, nil
}

// forwardConsistent predicts f(candidate) greedily, by one step_return from
// the call state the candidate describes, and compares it with output.
func forwardConsistent(ctx context.Context, pred engine.Predictor, c *cruxCase, cand format.Frame, output string) bool {
	locals := format.MergeLocals(nil, cand)
	var args []string
	for _, v := range locals {
		args = append(args, v.Value)
	}
	call := CruxFunc + "(" + strings.Join(args, ", ") + ")"
	if strings.ContainsAny(call, "\r\n") || format.ContainsSpecialToken(call) {
		return false
	}
	src := tracer.WrapCall(c.item.Code, call)
	px := pysource.New(src)
	main := engine.CallWrapper(px)
	if main == nil {
		return false
	}
	b := format.NewBuilder(false)
	states := []tracer.State{
		{Event: tracer.EventCall, Function: main.Name, Src: px.Line(main.First), Frame: 1},
		{Event: tracer.EventLine, Function: main.Name, Src: px.Line(main.Body), Frame: 1},
		{Event: tracer.EventCall, Function: CruxFunc, Src: cand.Src, Depth: 1, Frame: 2, Locals: locals},
	}
	var frames []format.Frame
	steps := []format.Step{{Action: debugger.StepInto}, {Action: debugger.StepInto}, {Action: debugger.StepReturn}}
	for i, s := range states {
		via := debugger.Action("")
		if i > 0 {
			via = steps[i-1].Action
		}
		f, err := b.Frame(s, false, via)
		if err != nil {
			return false
		}
		frames = append(frames, f)
	}
	prompt, err := format.PromptText(src, frames, steps)
	if err != nil {
		return false
	}
	outs, err := engine.PredictScored(ctx, pred, prompt, 1, engine.Draw{}) // greedy, as the engine asks
	if err != nil || len(outs) == 0 {
		return false
	}
	f, err := format.ParsePredicted(outs[0].Text, false)
	return err == nil && f.Kind == format.Return && f.Arg == output
}

// candidateKey identifies an input candidate for voting.
func candidateKey(j ScoreJob) string {
	var b strings.Builder
	for _, a := range j.Args {
		b.WriteString(a[0] + "=" + a[1] + "\x00")
	}
	return b.String()
}

// majority is the index of the first candidate of the most frequent key;
// candidates without arguments (unparsable) vote only if nothing else does.
func majority(keys []string) int {
	count := map[string]int{}
	for _, k := range keys {
		if k != "" {
			count[k]++
		}
	}
	best, bestN := 0, 0
	for i, k := range keys {
		if n := count[k]; n > bestN {
			best, bestN = i, n
		}
	}
	return best
}

// SortedActions lists map keys in the SPEC's action order, others after.
func SortedActions[V any](m map[string]V) []string {
	order := map[string]int{}
	for i, a := range append(append([]debugger.Action(nil), debugger.ForwardActions...), debugger.InverseActions...) {
		order[string(a)] = i
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := order[keys[i]]
		oj, jok := order[keys[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		}
		return keys[i] < keys[j]
	})
	return keys
}
