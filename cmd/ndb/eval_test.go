package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ndb/engine"
	"ndb/model/infer"
)

// TestEvalMeasuresTheUsersEngine: ndb eval's model engine is the one ndb
// debug gets, from the same registry: the same model, reranking unsure
// greedy frames and answering with scores; --max-tokens and --rerank-k
// change only those knobs. Before, eval built its own predictor, which did
// neither (a different decoding path than users get).
func TestEvalMeasuresTheUsersEngine(t *testing.T) {
	if !engine.HaveDefaultModel() {
		t.Skip("no default model")
	}
	reg, err := debugRegistry(debugProgram{Python: "python3"})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	de, err := reg.Get(engine.Model, "")
	if err != nil {
		t.Fatal(err)
	}
	users, ok := engine.FormatPredictor(de).(engine.InferPredictor)
	if !ok || users.Rerank == nil {
		t.Fatalf("ndb debug's model predictor %#v", engine.FormatPredictor(de))
	}

	for _, k := range []int{infer.DefaultRerank.K, 0} {
		f := evalFlags{engine: "model", workers: 1, maxTokens: 64}
		f.python, f.rerankK, f.rerankBelow, f.rerankBy = "python3", k, infer.DefaultRerank.Below, "agreement"
		eng, err := f.engines()
		if err != nil {
			t.Fatal(err)
		}
		ip, ok := eng.pred.(engine.InferPredictor)
		_, scored := eng.pred.(engine.ScoredPredictor)
		want := *users.Rerank
		want.K = k
		switch {
		case !ok || !scored:
			t.Errorf("--rerank-k %d: eval's predictor %T is not the model engine's scored one", k, eng.pred)
		case ip.P != users.P || ip.Rerank == nil || *ip.Rerank != want || ip.MaxTokens != 64:
			t.Errorf("--rerank-k %d: eval's predictor %+v (rerank %+v), want ndb debug's model with rerank %+v and 64 tokens", k, ip, ip.Rerank, want)
		}
		if eng.engine.Name() != engine.Model || eng.real != eng.reg.Real() {
			t.Errorf("--rerank-k %d: engine %s, real engine not the registry's", k, eng.engine.Name())
		}
		eng.Close()
	}
	for _, bad := range []engineFlags{{rerankK: -1}, {rerankBelow: 1.5}, {rerankBy: "vote"}, {jumpSteps: -1}, {jumpBelow: 2}, {jumpTime: -time.Second}} {
		if _, err := (&evalFlags{engine: "model", engineFlags: bad}).engines(); err == nil {
			t.Errorf("engine flags %+v must be refused", bad)
		}
	}
}

// TestEvalCommandsPrelude: the prelude the eval subcommands share
// (evalFlags.open) checks the flags before it creates the --dump file, and
// a next-state run with every output (--dump, --report, --json) on the real
// engine writes them all.
func TestEvalCommandsPrelude(t *testing.T) {
	for _, c := range []string{"next-state", "session", "cruxeval"} {
		resetAll(t, []string{"eval", c}) // flags persist from earlier in-process runs
	}
	progs := filepath.Join("..", "..", "eval", "testdata", "progs")
	dir := t.TempDir()
	crux := filepath.Join(dir, "crux.jsonl")
	if err := os.WriteFile(crux, []byte(`{"id": "sample_0", "code": "def f(x):\n    return x + 1", "input": "1", "output": "2"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "next-state", "--engine", "real", "--k", "1"}, "--programs DIR or --source"},
		{[]string{"eval", "next-state", "--engine", "real", "--programs", progs, "--k", "1"}, "--k is the number of samples"},
		{[]string{"eval", "session", "--engine", "real", "--programs", progs, "--stops", "0"}, "must be positive"},
		{[]string{"eval", "next-state", "--engine", "real", "--programs", filepath.Join(dir, "none")}, "not a folder of .py scripts"},
		{[]string{"eval", "session", "--engine", "nosuch", "--programs", progs}, "nosuch"},
		{[]string{"eval", "cruxeval", "--engine", "cwm", "--task", "input", "--cruxeval", crux}, "cannot predict inputs"},
	} {
		dump := filepath.Join(dir, "dump.jsonl")
		args := c.args
		if args[1] != "cruxeval" {
			args = append(slices.Clone(args), "--dump", dump)
		}
		_, err := runNDB(t, append(args, "--quiet")...)
		resetAll(t, args[:2])
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
		// a bad flag costs nothing; a bad engine is found after the dump is opened (then left empty)
		if st, err := os.Stat(dump); err == nil && (c.want != "nosuch" && c.want != "not a folder of .py scripts" || st.Size() != 0) {
			t.Errorf("%v: the dump file was written (%d bytes)", c.args, st.Size())
		}
		os.Remove(dump)
	}

	dump, rep := filepath.Join(dir, "ns.jsonl"), filepath.Join(dir, "report")
	out, err := captureStdout(t, func() error {
		_, err := runNDB(t, "eval", "next-state", "--engine", "real", "--programs", progs, "--n", "2", "--seed", "3",
			"--quiet", "--json", "--dump", dump, "--report", rep)
		return err
	})
	resetAll(t, []string{"eval", "next-state"})
	if err != nil {
		t.Fatal(err)
	}
	var summary map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &summary); err != nil || summary["seed"] != 3.0 || summary["programs"] != 4.0 {
		t.Errorf("--json line %q: %v", out, err)
	}
	if b, err := os.ReadFile(dump); err != nil || strings.Count(string(b), "\n") < 8 {
		t.Errorf("--dump: %v, %d lines", err, strings.Count(string(b), "\n"))
	}
	for _, name := range []string{"nextstate.md", "nextstate.json"} {
		if _, err := os.Stat(filepath.Join(rep, name)); err != nil {
			t.Errorf("--report: %v", err)
		}
	}
}

// resetAll resets the flags of the command at path (they persist between
// in-process runs).
func resetAll(t *testing.T, path []string) {
	t.Helper()
	cmd, _, err := rootCmd.Find(path)
	if err != nil {
		t.Fatal(err)
	}
	resetFlags(cmd)
}

// captureStdout returns what run printed on os.Stdout (the --json line).
func captureStdout(t *testing.T, run func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	err = run()
	os.Stdout = old
	w.Close()
	return <-done, err
}

// TestJumpDefaults: the interactive front ends step unsure jumps by
// default (engine.InteractiveJumps); the eval commands keep the paper's one
// prediction per jump; --jump-steps 0 turns stepping off.
func TestJumpDefaults(t *testing.T) {
	for _, c := range []struct {
		path []string
		want engine.Jumps
	}{
		{[]string{"debug"}, engine.InteractiveJumps},
		{[]string{"dap"}, engine.InteractiveJumps},
		{[]string{"mcp"}, engine.InteractiveJumps},
		{[]string{"eval", "next-state"}, engine.Jumps{}},
		{[]string{"eval", "session"}, engine.Jumps{}},
	} {
		cmd, _, err := rootCmd.Find(c.path)
		if err != nil {
			t.Fatal(err)
		}
		steps, err1 := cmd.Flags().GetInt("jump-steps")
		below, err2 := cmd.Flags().GetFloat64("jump-below")
		limit, err3 := cmd.Flags().GetDuration("jump-time")
		if err1 != nil || err2 != nil || err3 != nil || (engine.Jumps{Steps: steps, Below: below, Time: limit}) != c.want {
			t.Errorf("%v: --jump-steps %d --jump-below %g --jump-time %v (%v, %v, %v), want %+v", c.path, steps, below, limit, err1, err2, err3, c.want)
		}
	}
	if engine.InteractiveJumps.Steps <= 0 || engine.InteractiveJumps.Below <= 0 {
		t.Errorf("interactive jumps %+v step nothing", engine.InteractiveJumps)
	}
	off := engineFlags{jumpSteps: 0, jumpBelow: engine.InteractiveJumps.Below}
	if o, err := off.options(); err != nil || o.Jumps.Steps != 0 {
		t.Errorf("--jump-steps 0: %+v, %v", o.Jumps, err)
	}
}
