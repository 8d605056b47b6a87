package dataset

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ndb/format"
	"ndb/tracer"
)

// fakeTracer makes a deterministic trace from a program without Python: main
// calls f, whose loop runs a number of times taken from the call text. It
// lets the pipeline tests run anywhere and fast; TestGenRealTracer covers
// the real one.
type fakeTracer struct{ delay time.Duration }

func (f fakeTracer) Close() error { return nil }

func (f fakeTracer) Trace(ctx context.Context, p tracer.Program) (*tracer.Trace, error) {
	time.Sleep(f.delay)
	src := tracer.WrapCall(p.Source, p.Call)
	n := len(p.Call)%5 + 1
	st := []tracer.State{
		{Event: "call", Src: "def main():", Function: "main", Frame: 1},
		{Event: "line", Src: "    return " + p.Call, Function: "main", Frame: 1},
		{Event: "call", Src: "def f(x):", Function: "f", Depth: 1, Frame: 2, Locals: vars("x", strconv.Quote(p.Call))},
	}
	for i := 0; i < n; i++ {
		st = append(st,
			tracer.State{Event: "line", Src: "    for i in range(n):", Function: "f", Depth: 1, Frame: 2,
				Locals: vars("x", strconv.Quote(p.Call), "i", strconv.Itoa(i-1))},
			tracer.State{Event: "line", Src: "        total += i", Function: "f", Depth: 1, Frame: 2,
				Locals: vars("x", strconv.Quote(p.Call), "i", strconv.Itoa(i))})
	}
	st = append(st, tracer.State{Event: "return", Src: "    return total", Function: "f", Depth: 1, Frame: 2, Arg: strconv.Itoa(n)},
		tracer.State{Event: "return", Src: "    return " + p.Call, Function: "main", Frame: 1, Arg: strconv.Itoa(n)})
	return &tracer.Trace{Source: src, Call: p.Call, States: st, Exit: tracer.Exit{Kind: tracer.ExitNormal}}, nil
}

func vars(kv ...string) tracer.Locals {
	var l tracer.Locals
	for i := 0; i+1 < len(kv); i += 2 {
		l = append(l, tracer.Var{Name: kv[i], Value: kv[i+1]})
	}
	return l
}

func fakeSource(n int) *listSource {
	s := &listSource{name: "fake"}
	for i := 0; i < n; i++ {
		s.add(nil, Item{ID: fmt.Sprintf("fake/%d", i), Program: tracer.Program{
			Source: "def f(x):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n",
			Call:   fmt.Sprintf("f(%d)", i*37)}})
	}
	return s
}

func fakeJob(out string, workers int, delay time.Duration) *Job {
	return &Job{Source: fakeSource(50), N: 1000, Seed: 7, PerTrace: 4, ShardUnits: 25, Out: out, Workers: workers,
		NewTracer: func() (Tracer, error) { return fakeTracer{delay: delay}, nil }}
}

// readShards returns every shard file of dir by name.
func readShards(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	matches, _ := filepath.Glob(filepath.Join(dir, "shard-*"))
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(m)] = string(b)
	}
	return out
}

func sameShards(t *testing.T, a, b map[string]string, what string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d files vs %d", what, len(a), len(b))
	}
	for name, data := range a {
		if name[len(name)-5:] == ".json" {
			continue // stats hold timings
		}
		if b[name] != data {
			t.Fatalf("%s: %s differs", what, name)
		}
	}
}

func TestGenDeterministicAcrossWorkers(t *testing.T) {
	d1, d3 := t.TempDir(), t.TempDir()
	s1, err := Run(context.Background(), fakeJob(d1, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), fakeJob(d3, 3, 0)); err != nil {
		t.Fatal(err)
	}
	sameShards(t, readShards(t, d1), readShards(t, d3), "1 vs 3 workers")
	if s1.Trajectories != 1000 || s1.Shards != 10 {
		t.Fatalf("summary: %+v", s1)
	}
	// Every line parses and its text is a valid trajectory.
	for name, data := range readShards(t, d1) {
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
			var rec Record
			if err := jsonUnmarshal(line, &rec); err != nil {
				t.Fatal(err)
			}
			if _, err := format.ParseTrajectory(rec.Text); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	// A different seed gives different data.
	d2 := t.TempDir()
	j := fakeJob(d2, 2, 0)
	j.Seed = 8
	Run(context.Background(), j)
	if readShards(t, d2)[ShardName(0)] == readShards(t, d1)[ShardName(0)] {
		t.Fatal("seed does not change the output")
	}
	// Rerunning into the same folder is a no-op resume; other arguments are refused.
	if _, err := Run(context.Background(), fakeJob(d1, 2, 0)); err != nil {
		t.Fatal(err)
	}
	j = fakeJob(d1, 2, 0)
	j.N = 999
	if _, err := Run(context.Background(), j); err == nil {
		t.Fatal("a different job in the same folder was accepted")
	}
}

func TestGenShardsDisjoint(t *testing.T) {
	whole := t.TempDir()
	if _, err := Run(context.Background(), fakeJob(whole, 2, 0)); err != nil {
		t.Fatal(err)
	}
	split := t.TempDir()
	seen := map[string]int{}
	for i := 0; i < 3; i++ {
		j := fakeJob(split, 1, 0)
		j.Shard, j.Shards = i, 3
		dir := filepath.Join(t.TempDir())
		j.Out = dir
		if _, err := Run(context.Background(), j); err != nil {
			t.Fatal(err)
		}
		for name, data := range readShards(t, dir) {
			if strings.HasSuffix(name, ".jsonl") {
				seen[name]++
				os.WriteFile(filepath.Join(split, name), []byte(data), 0o644)
			}
		}
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("%s written by %d machines", name, n)
		}
	}
	w := readShards(t, whole)
	for name, data := range readShards(t, split) {
		if w[name] != data {
			t.Fatalf("%s differs between the split and the whole job", name)
		}
	}
	if len(seen) != 10 {
		t.Fatalf("split job wrote %d shards, want 10", len(seen))
	}
}

// TestGenResumeAfterKill kills a gen process mid-run (SIGKILL), resumes it,
// and compares the result with an uninterrupted run.
func TestGenResumeAfterKill(t *testing.T) {
	if os.Getenv("NDB_GEN_HELPER") != "" {
		return
	}
	killed := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGenHelperProcess$")
	cmd.Env = append(os.Environ(), "NDB_GEN_HELPER="+killed)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(killed, "shard-*.jsonl"))
		if len(m) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("helper wrote no shards")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	before, _ := filepath.Glob(filepath.Join(killed, "shard-*.jsonl"))
	if len(before) >= 10 {
		t.Skip("helper finished before the kill")
	}
	sum, err := Run(context.Background(), fakeJob(killed, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	whole := t.TempDir()
	if _, err := Run(context.Background(), fakeJob(whole, 2, 0)); err != nil {
		t.Fatal(err)
	}
	sameShards(t, readShards(t, whole), readShards(t, killed), "resumed vs uninterrupted")
	if sum.Trajectories != 1000 {
		t.Fatalf("resumed summary counts %d trajectories", sum.Trajectories)
	}
	if tmp, _ := filepath.Glob(filepath.Join(killed, "*.tmp-*")); len(tmp) > 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
}

// TestGenHelperProcess is the process TestGenResumeAfterKill kills.
func TestGenHelperProcess(t *testing.T) {
	dir := os.Getenv("NDB_GEN_HELPER")
	if dir == "" {
		t.Skip("helper for TestGenResumeAfterKill")
	}
	Run(context.Background(), fakeJob(dir, 2, 3*time.Millisecond))
}

func TestExport(t *testing.T) {
	dir := t.TempDir()
	if _, err := Run(context.Background(), fakeJob(dir, 2, 0)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ex.jsonl")
	st, err := Export(dir, out, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Examples != 1000 || st.Trajectories != 1000 {
		t.Fatalf("export: %+v", st)
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, l := range lines[:50] {
		var ex Example
		if err := jsonUnmarshal(l, &ex); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(ex.Prompt, format.TokFrameSep) || !format.FrameComplete(ex.Completion) {
			t.Fatalf("bad example %+v", ex)
		}
		if _, err := format.ParseFrame(ex.Completion); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGenTokenCounts: with a token counter the stats hold tokens per
// direction and action; a counter of characters must reproduce Chars.
func TestGenTokenCounts(t *testing.T) {
	j := fakeJob(t.TempDir(), 2, 0)
	j.CountTokens = func(s string) int { return len(s) }
	s, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tokens) != 2 {
		t.Fatalf("tokens by direction: %v", s.Tokens)
	}
	total := 0
	for d, m := range s.Chars {
		for a, v := range m {
			if s.Tokens[d][a] != v {
				t.Fatalf("%s %s: %d tokens vs %d characters", d, a, s.Tokens[d][a], v)
			}
			total += v
		}
	}
	var b strings.Builder
	s.Write(&b)
	if !strings.Contains(b.String(), "tokens") {
		t.Fatalf("summary does not show tokens:\n%s", b.String())
	}
	// Every character of every trajectory is attributed to some part.
	want := 0
	for name, data := range readShards(t, j.Out) {
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
			var rec Record
			jsonUnmarshal(line, &rec)
			want += len(rec.Text)
		}
	}
	if total != want {
		t.Fatalf("parts hold %d characters, trajectories %d", total, want)
	}
}
