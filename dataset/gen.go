package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"ndb/internal/atomicfile"
	"ndb/tracer"
)

// Tracer is what a gen worker needs from ndb/tracer: one persistent
// interpreter, used by one goroutine.
type Tracer interface {
	Trace(ctx context.Context, p tracer.Program) (*tracer.Trace, error)
	Close() error
}

// Job is one `ndb gen` run.
//
// The work is cut into units: unit u traces one program and samples
// PerTrace trajectories from that trace (the last unit fewer, so that the
// job asks for exactly N). Unit u's program and random stream depend only on
// (Seed, u), so the output does not depend on the number of workers. Shard s
// holds units [s*ShardUnits, (s+1)*ShardUnits) in order; with Shards > 1
// this machine writes the shards s with s % Shards == Shard.
type Job struct {
	Source     Source
	N          int
	Seed       int64
	PerTrace   int // trajectories sampled from one trace
	ShardUnits int // units per shard file
	Out        string
	Shard      int // this machine's index in [0, Shards)
	Shards     int // machines splitting the job; 0 or 1 for one
	Workers    int
	NewTracer  func() (Tracer, error)
	Sampler    SamplerConfig
	Progress   io.Writer // progress bar destination; nil for none
	// CountTokens, when set, counts the tokens of a text (the trained
	// tokenizer), so the stats hold tokens besides characters.
	CountTokens func(text string) int
}

// DefaultPerTrace is how many trajectories a trace yields by default:
// tracing (a fork of a warm interpreter, then settrace) costs about 100
// times more than sampling and writing one trajectory, so several per trace
// keep the job fast, and random policies, directions and entries keep them
// different.
const DefaultPerTrace = 16

// Record is one line of a shard file: one trajectory.
type Record struct {
	ProgramID string   `json:"program_id"`
	Source    string   `json:"source"`
	Unit      int      `json:"unit"`
	Index     int      `json:"index"` // trajectory number within its unit
	Call      string   `json:"call,omitempty"`
	Direction string   `json:"direction"` // forward or inverse
	Policy    string   `json:"policy"`    // A or B
	Entry     string   `json:"entry"`     // function the trajectory starts in
	Deep      bool     `json:"deep,omitempty"`
	Unwrapped bool     `json:"unwrapped,omitempty"` // shown without the main wrapper
	Exit      string   `json:"exit"`                // exit_normal, exit_error, exit_never, inv_exit_entry
	Actions   []string `json:"actions"`
	Forced    int      `json:"forced,omitempty"` // trailing actions that finished an over-budget trajectory
	Chars     int      `json:"chars"`
	Text      string   `json:"text"`
}

// ShardStats is what a shard holds, saved next to it as shard-NNNNN.meta.json.
type ShardStats struct {
	Shard        int                       `json:"shard"`
	Units        int                       `json:"units"`
	Trajectories int                       `json:"trajectories"`
	Skipped      map[string]int            `json:"skipped,omitempty"` // unit skips by reason
	Exits        map[string]int            `json:"exits"`
	Steps        map[string]map[string]int `json:"steps"`            // direction -> action -> count
	Chars        map[string]map[string]int `json:"chars"`            // direction -> action (or "context") -> characters
	Tokens       map[string]map[string]int `json:"tokens,omitempty"` // the same in tokens, when a tokenizer was given
	LengthHist   map[int]int               `json:"length_hist"`      // power-of-two character bucket -> trajectories
	TraceSeconds float64                   `json:"trace_seconds"`    // not deterministic; kept out of the shard itself
}

// Manifest pins a job's arguments in its output folder, so that a resumed
// or parallel run cannot mix different jobs.
type Manifest struct {
	Format     int           `json:"format"`
	Source     string        `json:"source"`
	N          int           `json:"n"`
	Seed       int64         `json:"seed"`
	PerTrace   int           `json:"per_trace"`
	ShardUnits int           `json:"shard_units"`
	Units      int           `json:"units"`
	ShardCount int           `json:"shard_count"`
	Sampler    SamplerConfig `json:"sampler"`
}

// manifestFormat changes whenever the output of the same arguments changes.
const manifestFormat = 1

// ShardName is the file name of shard s.
func ShardName(s int) string { return fmt.Sprintf("shard-%05d.jsonl", s) }

func metaName(s int) string { return fmt.Sprintf("shard-%05d.meta.json", s) }

func (j *Job) defaults() error {
	if j.N <= 0 {
		return fmt.Errorf("dataset: --n must be positive")
	}
	if j.PerTrace <= 0 {
		j.PerTrace = DefaultPerTrace
	}
	if j.ShardUnits <= 0 {
		j.ShardUnits = 256
	}
	if j.Shards <= 0 {
		j.Shards = 1
	}
	if j.Shard < 0 || j.Shard >= j.Shards {
		return fmt.Errorf("dataset: shard %d/%d out of range", j.Shard, j.Shards)
	}
	if j.Workers <= 0 {
		j.Workers = 1
	}
	if j.Sampler == (SamplerConfig{}) {
		j.Sampler = DefaultSamplerConfig
	}
	if j.Source.Len() == 0 {
		return fmt.Errorf("dataset: source %s has no programs", j.Source.Name())
	}
	return nil
}

func (j *Job) units() int       { return (j.N + j.PerTrace - 1) / j.PerTrace }
func (j *Job) shardCount() int  { return (j.units() + j.ShardUnits - 1) / j.ShardUnits }
func (j *Job) wantIn(u int) int { return min(j.PerTrace, j.N-u*j.PerTrace) }

func (j *Job) manifest() Manifest {
	return Manifest{Format: manifestFormat, Source: j.Source.Name(), N: j.N, Seed: j.Seed, PerTrace: j.PerTrace,
		ShardUnits: j.ShardUnits, Units: j.units(), ShardCount: j.shardCount(), Sampler: j.Sampler}
}

// itemIndex maps unit u to an item of a fixed list: each pass over the list
// is a fresh seeded permutation, so repeated passes see programs in new
// orders with fresh samples.
type permCache struct {
	mu    sync.Mutex
	n     int
	seed  int64
	perms map[int][]int
}

func (p *permCache) index(u int) int {
	if p.n < 0 {
		return u
	}
	epoch := u / p.n
	p.mu.Lock()
	defer p.mu.Unlock()
	perm, ok := p.perms[epoch]
	if !ok {
		perm = rand.New(rand.NewPCG(uint64(p.seed), 0x5eed0000+uint64(epoch))).Perm(p.n)
		p.perms[epoch] = perm
	}
	return perm[u%p.n]
}

// unitResult is the output of one unit.
type unitResult struct {
	unit    int
	lines   [][]byte
	recs    []Record
	skip    string
	seconds float64
}

// Run runs the job: it skips shards already complete in Out (resume),
// writes the others atomically, and returns the summary of every complete
// shard of this machine.
func Run(ctx context.Context, j *Job) (*Summary, error) {
	if err := j.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(j.Out, 0o755); err != nil {
		return nil, err
	}
	if err := writeManifest(j.Out, j.manifest()); err != nil {
		return nil, err
	}
	var todo []int // this machine's shards still to write
	var mine []int
	for s := 0; s < j.shardCount(); s++ {
		if s%j.Shards != j.Shard {
			continue
		}
		mine = append(mine, s)
		removeTemps(j.Out, s)
		if _, err := os.Stat(filepath.Join(j.Out, ShardName(s))); err == nil {
			continue
		}
		todo = append(todo, s)
	}
	total := 0
	for _, s := range todo {
		for u := s * j.ShardUnits; u < min((s+1)*j.ShardUnits, j.units()); u++ {
			total += j.wantIn(u)
		}
	}
	var bar *progressbar.ProgressBar
	if j.Progress != nil && total > 0 {
		bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(j.Progress),
			progressbar.OptionSetDescription("ndb gen "+j.Source.Name()), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("traj"),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetWidth(30))
	}
	if err := j.runShards(ctx, todo, bar); err != nil {
		return nil, err
	}
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(j.Progress)
	}
	return Summarize(j.Out, mine, j.Source.Dropped())
}

func (j *Job) runShards(ctx context.Context, todo []int, bar *progressbar.ProgressBar) error {
	if len(todo) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	perm := &permCache{n: j.Source.Len(), seed: j.Seed, perms: map[int][]int{}}
	units := make(chan int)
	results := make(chan unitResult, 4*j.Workers)
	errs := make(chan error, j.Workers+1)
	var wg sync.WaitGroup
	for w := 0; w < j.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := j.NewTracer()
			if err != nil {
				errs <- fmt.Errorf("dataset: start tracer: %w", err)
				cancel()
				return
			}
			defer func() { tr.Close() }()
			for u := range units {
				res := j.doUnit(ctx, &tr, perm, u)
				select {
				case results <- res:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(units)
		for _, s := range todo {
			for u := s * j.ShardUnits; u < min((s+1)*j.ShardUnits, j.units()); u++ {
				select {
				case units <- u:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	pending := map[int]map[int]unitResult{} // shard -> unit -> result
	for res := range results {
		s := res.unit / j.ShardUnits
		if pending[s] == nil {
			pending[s] = map[int]unitResult{}
		}
		pending[s][res.unit] = res
		if bar != nil {
			bar.Add(j.wantIn(res.unit))
		}
		first, last := s*j.ShardUnits, min((s+1)*j.ShardUnits, j.units())
		if len(pending[s]) == last-first {
			if err := j.writeShard(s, first, last, pending[s]); err != nil {
				cancel()
				return err
			}
			delete(pending, s)
		}
	}
	select {
	case err := <-errs:
		return err
	default:
	}
	if len(pending) > 0 || ctx.Err() != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("dataset: %d shards left unfinished", len(pending))
	}
	return nil
}

// doUnit traces unit u's program and samples its trajectories. A tracer that
// fails is replaced once and the unit retried, so that a crashed worker does
// not change the output.
func (j *Job) doUnit(ctx context.Context, tr *Tracer, perm *permCache, u int) unitResult {
	res := unitResult{unit: u}
	it, skip := j.Source.Item(perm.index(u))
	if skip != "" {
		res.skip = skip
		return res
	}
	start := time.Now()
	t, err := (*tr).Trace(ctx, it.Program)
	if err != nil && ctx.Err() == nil {
		(*tr).Close()
		if fresh, err2 := j.NewTracer(); err2 == nil {
			*tr = fresh
			t, err = fresh.Trace(ctx, it.Program)
		}
	}
	res.seconds = time.Since(start).Seconds()
	if err != nil || len(t.States) == 0 {
		res.skip = "trace-error"
		return res
	}
	if f, ok := j.Source.(TraceFilter); ok {
		if why := f.DropTrace(it, t); why != "" {
			res.skip = why
			return res
		}
	}
	r := rand.New(rand.NewPCG(uint64(j.Seed), uint64(u)))
	for k := 0; k < j.wantIn(u); k++ {
		s, err := SampleTrajectory(r, t, j.Sampler)
		if err != nil {
			res.skip = "format-error" // e.g. a special token inside the program
			res.lines, res.recs = nil, nil
			return res
		}
		rec := Record{ProgramID: it.ID, Source: j.Source.Name(), Unit: u, Index: k, Call: it.Program.Call,
			Direction: s.Direction(), Policy: s.Policy, Entry: s.Entry, Deep: s.Deep, Unwrapped: s.Unwrapped,
			Exit: string(s.Trajectory.Frames[len(s.Trajectory.Frames)-1].Kind), Actions: s.Actions(),
			Forced: s.Forced, Chars: len(s.Text), Text: s.Text}
		line, err := marshalLine(rec)
		if err != nil {
			res.skip = "format-error"
			res.lines, res.recs = nil, nil
			return res
		}
		res.lines = append(res.lines, line)
		res.recs = append(res.recs, rec)
	}
	return res
}

// marshalLine writes a record as one JSON line without HTML escaping.
func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeShard writes the stats, then the shard, each to a temporary file
// renamed into place: the shard's rename is the commit, so a complete
// shard file always has its stats and never a partial line.
func (j *Job) writeShard(s, first, last int, res map[int]unitResult) error {
	st := ShardStats{Shard: s, Units: last - first, Skipped: map[string]int{}, Exits: map[string]int{},
		Steps: map[string]map[string]int{}, Chars: map[string]map[string]int{}, LengthHist: map[int]int{}}
	var data bytes.Buffer
	for u := first; u < last; u++ {
		r := res[u]
		st.TraceSeconds += r.seconds
		if r.skip != "" {
			st.Skipped[r.skip]++
		}
		for i, line := range r.lines {
			data.Write(line)
			st.add(r.recs[i], j.CountTokens)
		}
	}
	meta, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(j.Out, metaName(s)), meta); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(j.Out, ShardName(s)), data.Bytes())
}

func (st *ShardStats) add(r Record, countTokens func(string) int) {
	st.Trajectories++
	st.Exits[r.Exit]++
	if st.Steps[r.Direction] == nil {
		st.Steps[r.Direction] = map[string]int{}
		st.Chars[r.Direction] = map[string]int{}
	}
	for _, a := range r.Actions {
		st.Steps[r.Direction][a]++
	}
	for part, text := range textByAction(r.Text) {
		st.Chars[r.Direction][part] += len(text)
		if countTokens != nil {
			if st.Tokens == nil {
				st.Tokens = map[string]map[string]int{}
			}
			if st.Tokens[r.Direction] == nil {
				st.Tokens[r.Direction] = map[string]int{}
			}
			st.Tokens[r.Direction][part] += countTokens(text)
		}
	}
	st.LengthHist[1<<bits.Len(uint(r.Chars))]++
}

// textByAction splits a trajectory's text among the actions: each action
// owns its own text (from its <|action_sep|>) and the frame it leads to; the
// source and the initial frame are "context". Special tokens are atomic, so
// counting tokens piece by piece gives the total of the whole text.
func textByAction(text string) map[string]string {
	out := map[string]string{}
	parts := strings.Split(text, "<|action_sep|>")
	out["context"] += parts[0]
	for _, p := range parts[1:] {
		name := "?"
		if strings.HasPrefix(p, "<|") {
			if e := strings.Index(p, "|>"); e > 0 {
				name = p[2:e]
			}
		}
		out[name] += "<|action_sep|>" + p
	}
	return out
}

// writeAtomic writes data to a temporary file in the same folder, syncs it
// and renames it to path.
func writeAtomic(path string, data []byte) error { return atomicfile.WriteFile(path, data) }

// removeTemps deletes what a killed run left of shard s.
func removeTemps(dir string, s int) {
	for _, name := range []string{ShardName(s), metaName(s)} {
		matches, _ := filepath.Glob(filepath.Join(dir, atomicfile.TempPattern(name)))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

func writeManifest(dir string, m Manifest) error {
	path := filepath.Join(dir, "manifest.json")
	if b, err := os.ReadFile(path); err == nil {
		var old Manifest
		if err := json.Unmarshal(b, &old); err != nil {
			return fmt.Errorf("dataset: %s: %w", path, err)
		}
		if !reflect.DeepEqual(old, m) {
			return fmt.Errorf("dataset: %s holds a different job (%+v); use another --out", dir, old)
		}
		return nil
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, b)
}

// Summary adds up the shard stats of a job.
type Summary struct {
	Shards        int
	DroppedAtLoad int // CruxEval duplicates removed from a fixed list
	ShardStats
}

// Summarize reads the stats of the given shards (all complete shards when
// shards is nil).
func Summarize(dir string, shards []int, droppedAtLoad int) (*Summary, error) {
	if shards == nil {
		matches, _ := filepath.Glob(filepath.Join(dir, "shard-*.jsonl"))
		for _, m := range matches {
			var s int
			if _, err := fmt.Sscanf(filepath.Base(m), "shard-%05d.jsonl", &s); err == nil {
				shards = append(shards, s)
			}
		}
		sort.Ints(shards)
	}
	sum := &Summary{DroppedAtLoad: droppedAtLoad, ShardStats: ShardStats{Skipped: map[string]int{},
		Exits: map[string]int{}, Steps: map[string]map[string]int{}, Chars: map[string]map[string]int{},
		LengthHist: map[int]int{}}}
	for _, s := range shards {
		if _, err := os.Stat(filepath.Join(dir, ShardName(s))); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, metaName(s)))
		if err != nil {
			return nil, fmt.Errorf("dataset: shard %d has no stats: %w", s, err)
		}
		var st ShardStats
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("dataset: %s: %w", metaName(s), err)
		}
		sum.Shards++
		sum.Units += st.Units
		sum.Trajectories += st.Trajectories
		sum.TraceSeconds += st.TraceSeconds
		for k, v := range st.Skipped {
			sum.Skipped[k] += v
		}
		for k, v := range st.Exits {
			sum.Exits[k] += v
		}
		for k, v := range st.LengthHist {
			sum.LengthHist[k] += v
		}
		for d, m := range st.Steps {
			if sum.Steps[d] == nil {
				sum.Steps[d] = map[string]int{}
				sum.Chars[d] = map[string]int{}
			}
			for a, v := range m {
				sum.Steps[d][a] += v
			}
			for a, v := range st.Chars[d] {
				sum.Chars[d][a] += v
			}
			for a, v := range st.Tokens[d] {
				if sum.Tokens == nil {
					sum.Tokens = map[string]map[string]int{}
				}
				if sum.Tokens[d] == nil {
					sum.Tokens[d] = map[string]int{}
				}
				sum.Tokens[d][a] += v
			}
		}
	}
	return sum, nil
}

// Write prints the summary for people. Sizes are characters, and tokens
// when the job had a tokenizer (CountTokens).
func (s *Summary) Write(w io.Writer) {
	fmt.Fprintf(w, "shards %d, units %d, trajectories %d\n", s.Shards, s.Units, s.Trajectories)
	fmt.Fprintf(w, "dropped as CruxEval duplicates: %d at load, %d while generating\n", s.DroppedAtLoad, s.Skipped[SkipCruxEval])
	if len(s.Skipped) > 0 {
		fmt.Fprintf(w, "skipped units: %s\n", fmtCounts(s.Skipped))
	}
	fmt.Fprintf(w, "exits: %s\n", fmtCounts(s.Exits))
	for _, d := range slices.Sorted(maps.Keys(s.Steps)) {
		total := 0
		for _, v := range s.Chars[d] {
			total += v
		}
		tokens := 0
		for _, v := range s.Tokens[d] {
			tokens += v
		}
		if s.Tokens != nil {
			fmt.Fprintf(w, "%s: %d characters, %d tokens\n", d, total, tokens)
		} else {
			fmt.Fprintf(w, "%s: %d characters (no --tokenizer: no token counts)\n", d, total)
		}
		for _, a := range slices.Sorted(maps.Keys(s.Chars[d])) {
			fmt.Fprintf(w, "  %-14s steps %8d  characters %10d", a, s.Steps[d][a], s.Chars[d][a])
			if s.Tokens != nil {
				fmt.Fprintf(w, "  tokens %9d", s.Tokens[d][a])
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w, "trajectory length (characters):")
	var buckets []int
	for k := range s.LengthHist {
		buckets = append(buckets, k)
	}
	sort.Ints(buckets)
	for _, k := range buckets {
		fmt.Fprintf(w, "  < %7d  %d\n", k, s.LengthHist[k])
	}
}

func fmtCounts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
