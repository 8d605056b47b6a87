// Package torch_test checks that the PyTorch trainer (torch/ndb_torch) and
// ndb's Go runtime agree: the same data windows, schedule and optimizer
// (same losses from the same weights), and checkpoints that go both ways
// through the Hugging Face layout with the same logits and greedy tokens.
//
// It needs Debian's /usr/bin/python3 with torch and numpy (apt install
// python3-torch python3-numpy), or NDB_TORCH_PYTHON; without them it skips.
package torch_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ndb/model/hf"
	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
	"ndb/model/train"
	"ndb/model/train/synthtext"
)

// Tolerances of the comparisons (float32 on both sides; measured values are
// logged with -v and quoted in docs/scaleout.md).
const (
	lossRelTol  = 1e-5 // per-step training loss and validation loss, Go vs PyTorch
	normRelTol  = 1e-4 // gradient norm before clipping
	logitAbsTol = 1e-4 // every logit: |Go - PyTorch| <= logitAbsTol + logitRelTol*|PyTorch|
	logitRelTol = 1e-4
	greedyLen   = 12 // greedy tokens generated after each prompt
)

// The run both trainers make: tiny config, 8 steps (warmup 2, cosine),
// validation every 4 steps on 4 windows, stopped after step 4 and resumed
// in PyTorch.
var (
	testCfg = nn.Config{Dim: 32, HiddenDim: 96, Layers: 2, Heads: 4, MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5}
	testOpt = train.Options{Batch: 4, Seq: 32, Steps: 8, LR: 1e-2, MinLR: 1e-3, Warmup: 2, WeightDecay: 0.1,
		Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, ClipNorm: 1.0, Seed: 7, EvalEvery: 4, EvalWindows: 4}
)

const stopAt = 4

// pythonPath is the interpreter the tests run: NDB_TORCH_PYTHON, else
// Debian's.
func pythonPath() string {
	if py := os.Getenv("NDB_TORCH_PYTHON"); py != "" {
		return py
	}
	return "/usr/bin/python3"
}

// numpyPython is pythonPath when it imports numpy; the test skips otherwise.
func numpyPython(t *testing.T) string {
	t.Helper()
	py := pythonPath()
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s has no numpy (apt install python3-numpy): %v", py, err)
	}
	return py
}

func python(t *testing.T) string {
	t.Helper()
	py := pythonPath()
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no %s: the PyTorch interchange tests need Debian's python3-torch and python3-numpy (or NDB_TORCH_PYTHON)", py)
	}
	out, err := exec.Command(py, "-c", "import torch, numpy; print(torch.__version__)").CombinedOutput()
	if err != nil {
		t.Skipf("%s cannot import torch and numpy (apt install python3-torch python3-numpy): %s", py, strings.TrimSpace(lastLine(string(out))))
	}
	t.Logf("PyTorch %s (%s)", strings.TrimSpace(string(out)), py)
	return py
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// runPy runs `python -m ndb_torch ARGS` from this folder, single-threaded
// (deterministic and polite on a shared machine).
func runPy(t *testing.T, py string, args ...string) {
	t.Helper()
	cmd := exec.Command(py, append([]string{"-m", "ndb_torch"}, args...)...)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m ndb_torch %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// runDDP starts `world` trainer processes wired as torchrun would (env://
// rendezvous on a free 127.0.0.1 port) and waits for all of them.
func runDDP(t *testing.T, py string, world int, args []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP for the DDP rendezvous: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmds := make([]*exec.Cmd, world)
	outs := make([]strings.Builder, world)
	for r := range cmds {
		c := exec.Command(py, append([]string{"-m", "ndb_torch"}, args...)...)
		c.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "PYTHONDONTWRITEBYTECODE=1", "MASTER_ADDR=127.0.0.1",
			fmt.Sprintf("MASTER_PORT=%d", port), fmt.Sprintf("WORLD_SIZE=%d", world),
			fmt.Sprintf("RANK=%d", r), fmt.Sprintf("LOCAL_RANK=%d", r), "GLOO_SOCKET_IFNAME=lo")
		c.Stdout, c.Stderr = &outs[r], &outs[r]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[r] = c
	}
	timer := time.AfterFunc(90*time.Second, func() {
		for _, c := range cmds {
			c.Process.Kill()
		}
	})
	defer timer.Stop()
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, outs[r].String())
		}
	}
}

// fixture is the shared setup: shards, tokenizer, packed data, and the
// initial weights exported in the HF layout.
type fixture struct {
	dir     string
	tok     *tokenizer.Tokenizer
	packed  *train.Packed
	packDir string
	initDir string // HF export of the initial weights (also the tokenizer template)
	init    *modelfile.Model
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir()}
	shards := filepath.Join(f.dir, "shards")
	if err := os.MkdirAll(shards, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var texts []string
	var b strings.Builder
	for p := 0; p < 40; p++ {
		for k := 0; k < 3; k++ {
			text, prog := synthtext.Trajectory(rng, p)
			texts = append(texts, text)
			line, _ := json.Marshal(map[string]any{"text": text, "program_id": prog, "direction": "forward", "source": "synth"})
			b.Write(append(line, '\n'))
		}
	}
	if err := os.WriteFile(filepath.Join(shards, "shard-00000.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Train(slices.Values(texts), 400, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	f.tok = tok
	f.packDir = filepath.Join(f.dir, "packed")
	if _, err := train.Pack(shards, f.packDir, train.TokenizerOf(tok), train.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	if f.packed, err = train.LoadPacked(f.packDir); err != nil {
		t.Fatal(err)
	}
	cfg := testCfg
	cfg.Vocab = tok.VocabSize()
	net, err := nn.New(cfg, testOpt.Seed)
	if err != nil {
		t.Fatal(err)
	}
	f.init = &modelfile.Model{Config: cfg, Tokenizer: tok, Weights: slices.Clone(net.Params)}
	f.initDir = filepath.Join(f.dir, "init-hf")
	if err := hf.Export(f.initDir, f.init, hf.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// torchRecord is one line of ndb_torch's log.jsonl (ndb train's fields).
type torchRecord struct {
	Step     int      `json:"step"`
	Tokens   int64    `json:"tokens"`
	LR       float64  `json:"lr"`
	Loss     float64  `json:"loss"`
	GradNorm float64  `json:"grad_norm"`
	ValLoss  *float64 `json:"val_loss"`
}

func readTorchLog(t *testing.T, path string) []torchRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []torchRecord
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r torchRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func relErr(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-12) }

// importModel is `ndb import --hf dir --out file` followed by loading the
// file, in-process: hf.Import, modelfile.Save, modelfile.Load.
func importModel(t *testing.T, dir string, tok *tokenizer.Tokenizer) *nn.Model {
	t.Helper()
	m, err := hf.Import(dir)
	if err != nil {
		t.Fatalf("import %s: %v", dir, err)
	}
	path := filepath.Join(t.TempDir(), "imported.model")
	if err := modelfile.Save(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := modelfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := train.TokenizerChecksum(back.Tokenizer), train.TokenizerChecksum(tok); got != want {
		t.Fatalf("%s: imported tokenizer %.12s differs from the training tokenizer %.12s", dir, got, want)
	}
	net, err := back.Network()
	if err != nil {
		t.Fatal(err)
	}
	return net
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func argmax(row []float32) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

// goGreedy generates n argmax tokens after prompt with the KV cache.
func goGreedy(t *testing.T, m *nn.Model, prompt []int32, n int) []int32 {
	t.Helper()
	cache, err := m.NewKVCache(1, len(prompt)+n)
	if err != nil {
		t.Fatal(err)
	}
	V := m.Config.Vocab
	logits, err := m.Decode(prompt, cache)
	if err != nil {
		t.Fatal(err)
	}
	var out []int32
	next := int32(argmax(logits[(len(prompt)-1)*V:]))
	for len(out) < n {
		out = append(out, next)
		if len(out) == n {
			break
		}
		if logits, err = m.Decode([]int32{next}, cache); err != nil {
			t.Fatal(err)
		}
		next = int32(argmax(logits))
	}
	return out
}

// goLogits is the Go forward pass over one sequence: (len, V).
func goLogits(t *testing.T, m *nn.Model, seq []int32) []float32 {
	t.Helper()
	if _, err := m.Forward(seq, 1, len(seq), nil); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(m.Logits())
}

// compareModel checks the Go forward pass of the imported `dir` against
// PyTorch's logits and greedy tokens for each prompt. A greedy or argmax
// difference is accepted only where Go's own two candidates are within the
// logit tolerance (a tie that float rounding may break either way).
func compareModel(t *testing.T, name string, net *nn.Model, prompts [][]int32, torchLogits func(j int) []float32, torchGreedy [][]int32) {
	t.Helper()
	V := net.Config.Vocab
	var maxDiff float64
	for j, seq := range prompts {
		got := goLogits(t, net, seq)
		want := torchLogits(j)
		if len(got) != len(want) {
			t.Fatalf("%s: prompt %d: Go has %d logits, PyTorch %d", name, j, len(got), len(want))
		}
		for i := range got {
			d := math.Abs(float64(got[i]) - float64(want[i]))
			maxDiff = math.Max(maxDiff, d)
			if d > logitAbsTol+logitRelTol*math.Abs(float64(want[i])) {
				t.Fatalf("%s: prompt %d: logit %d (position %d, token %d): Go %g, PyTorch %g", name, j, i, i/V, i%V, got[i], want[i])
			}
		}
		for pos := 0; pos < len(seq); pos++ {
			g, w := argmax(got[pos*V:(pos+1)*V]), argmax(want[pos*V:(pos+1)*V])
			if g != w && float64(got[pos*V+g]-got[pos*V+w]) > logitAbsTol {
				t.Fatalf("%s: prompt %d position %d: argmax Go %d, PyTorch %d (not a tie)", name, j, pos, g, w)
			}
		}
		gg := goGreedy(t, net, seq, greedyLen)
		tg := torchGreedy[j]
		for i := range gg {
			if i >= len(tg) {
				t.Fatalf("%s: prompt %d: PyTorch generated %d tokens, want %d", name, j, len(tg), greedyLen)
			}
			if gg[i] == tg[i] {
				continue
			}
			prefix := append(slices.Clone(seq), gg[:i]...)
			l := goLogits(t, net, prefix)
			last := l[(len(prefix)-1)*V:]
			if float64(last[gg[i]]-last[tg[i]]) > logitAbsTol {
				t.Fatalf("%s: prompt %d: greedy token %d: Go %d, PyTorch %d (Go %v vs PyTorch %v)", name, j, i, gg[i], tg[i], gg, tg)
			}
			t.Logf("%s: prompt %d: greedy diverges at token %d on a tie", name, j, i)
			break
		}
	}
	t.Logf("%s: max |Go - PyTorch| logit = %.3g over %d prompts; greedy %d tokens each equal", name, maxDiff, len(prompts), greedyLen)
}

func TestInterchange(t *testing.T) {
	py := python(t)
	f := newFixture(t)
	dir := f.dir

	// Go: the reference run, from the exported initial weights.
	net, err := f.init.Network()
	if err != nil {
		t.Fatal(err)
	}
	var goLog []train.LogRecord
	st := &train.State{Options: testOpt, Data: f.packed.Meta}
	if err := train.Run(context.Background(), train.NewNNBackend(net, nn.NewAdamW(net)), f.packed, st,
		train.Hooks{Log: func(r train.LogRecord) error { goLog = append(goLog, r); return nil }}); err != nil {
		t.Fatal(err)
	}

	// PyTorch: the same run, interrupted after step stopAt and resumed.
	// The interrupted run exports BF16 in shards, the final one F32.
	run := filepath.Join(dir, "torch-run")
	trainArgs := func(out string) []string {
		return []string{"train", "--data", f.packDir, "--init", f.initDir, "--out", out, "--threads", "1", "--quiet",
			"--device", "cpu", "--steps", fmt.Sprint(testOpt.Steps), "--batch", fmt.Sprint(testOpt.Batch),
			"--seq", fmt.Sprint(testOpt.Seq), "--lr", fmt.Sprint(testOpt.LR), "--min-lr", fmt.Sprint(testOpt.MinLR),
			"--warmup", fmt.Sprint(testOpt.Warmup), "--seed", fmt.Sprint(testOpt.Seed),
			"--eval-every", fmt.Sprint(testOpt.EvalEvery), "--eval-windows", fmt.Sprint(testOpt.EvalWindows)}
	}
	torchBF16 := filepath.Join(dir, "torch-bf16")
	runPy(t, py, append(trainArgs(run), "--stop-at", fmt.Sprint(stopAt),
		"--export-dtype", "bf16", "--shard-mb", "0.05", "--export-dir", torchBF16)...)
	runPy(t, py, "train", "--data", f.packDir, "--out", run, "--resume", "--threads", "1", "--quiet", "--device", "cpu",
		"--hf-template", f.initDir)
	torchLog := readTorchLog(t, filepath.Join(run, "log.jsonl"))

	t.Run("same losses as Go", func(t *testing.T) {
		if len(torchLog) != len(goLog) {
			t.Fatalf("PyTorch logged %d steps, Go %d", len(torchLog), len(goLog))
		}
		var maxLoss, maxNorm float64
		for i, g := range goLog {
			p := torchLog[i]
			if p.Step != g.Step || p.Tokens != g.Tokens || math.Abs(p.LR-g.LR) > 1e-12*g.LR {
				t.Fatalf("step %d: PyTorch (step %d, %d tokens, lr %g), Go (step %d, %d tokens, lr %g)", i, p.Step, p.Tokens, p.LR, g.Step, g.Tokens, g.LR)
			}
			maxLoss = math.Max(maxLoss, relErr(p.Loss, g.Loss))
			maxNorm = math.Max(maxNorm, relErr(p.GradNorm, g.GradNorm))
			if relErr(p.Loss, g.Loss) > lossRelTol || relErr(p.GradNorm, g.GradNorm) > normRelTol {
				t.Errorf("step %d: loss PyTorch %.7g Go %.7g; grad norm PyTorch %.7g Go %.7g", g.Step, p.Loss, g.Loss, p.GradNorm, g.GradNorm)
			}
			if (p.ValLoss == nil) != (g.ValLoss == nil) {
				t.Fatalf("step %d: validation loss logged by one trainer only", g.Step)
			}
			if g.ValLoss != nil {
				maxLoss = math.Max(maxLoss, relErr(*p.ValLoss, *g.ValLoss))
				if relErr(*p.ValLoss, *g.ValLoss) > lossRelTol {
					t.Errorf("step %d: val loss PyTorch %.7g Go %.7g", g.Step, *p.ValLoss, *g.ValLoss)
				}
			}
		}
		if goLog[len(goLog)-1].Loss >= goLog[0].Loss {
			t.Errorf("training did not lower the loss: %g -> %g", goLog[0].Loss, goLog[len(goLog)-1].Loss)
		}
		t.Logf("%d steps (PyTorch stopped after %d and resumed): max rel. diff loss %.2g, grad norm %.2g",
			len(goLog), stopAt, maxLoss, maxNorm)
	})

	t.Run("DDP, 2 processes", func(t *testing.T) {
		// torch.distributed on CPU (gloo): each rank trains half of every
		// batch's rows; the averaged gradients are the whole batch's.
		ddp := filepath.Join(dir, "torch-ddp")
		runDDP(t, py, 2, trainArgs(ddp))
		ddpLog := readTorchLog(t, filepath.Join(ddp, "log.jsonl"))
		if len(ddpLog) != len(goLog) {
			t.Fatalf("DDP logged %d steps, Go %d", len(ddpLog), len(goLog))
		}
		var maxLoss float64
		for i, g := range goLog {
			maxLoss = math.Max(maxLoss, relErr(ddpLog[i].Loss, g.Loss))
			if relErr(ddpLog[i].Loss, g.Loss) > lossRelTol || relErr(ddpLog[i].GradNorm, g.GradNorm) > normRelTol {
				t.Errorf("step %d: DDP loss %.7g grad norm %.7g, Go %.7g %.7g", g.Step, ddpLog[i].Loss, ddpLog[i].GradNorm, g.Loss, g.GradNorm)
			}
		}
		t.Logf("DDP (2 ranks, gloo): max rel. diff loss vs Go %.2g", maxLoss)
	})

	// ndb -> PyTorch: the Go-trained weights exported as F32 and as BF16 shards.
	trained := &modelfile.Model{Config: net.Config, Tokenizer: f.tok, Weights: net.Params}
	goF32, goBF16 := filepath.Join(dir, "go-f32"), filepath.Join(dir, "go-bf16")
	if err := hf.Export(goF32, trained, hf.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := hf.Export(goBF16, trained, hf.ExportOptions{DType: hf.BF16, MaxShardBytes: 50 << 10}); err != nil {
		t.Fatal(err)
	}

	// Prompts: the first validation windows, and a trajectory prompt.
	prompts := [][]int32{u32ToI32(f.packed.Val[:40]), u32ToI32(f.packed.Val[100:124])}
	if p := synthtext.Prompts(synthtext.Forward(rand.New(rand.NewPCG(9, 9)), 1000, 3)); len(p) > 0 {
		ids := f.tok.Encode(p[0])
		prompts = append(prompts, ids[max(0, len(ids)-40):])
	}
	tokPath := filepath.Join(dir, "prompts.json")
	data, _ := json.Marshal(prompts)
	if err := os.WriteFile(tokPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	models := []string{filepath.Join(run, "hf"), torchBF16, goF32, goBF16}
	prefix := filepath.Join(dir, "torch-logits")
	args := []string{"logits", "--tokens", tokPath, "--out", prefix, "--greedy", fmt.Sprint(greedyLen)}
	for _, m := range models {
		args = append(args, "--model", m)
	}
	runPy(t, py, args...)
	var res struct{ Greedy [][][]int32 }
	if data, err = os.ReadFile(prefix + ".json"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	names := []string{"PyTorch -> ndb, F32", "PyTorch -> ndb, BF16 shards (step 4)", "ndb -> PyTorch, F32", "ndb -> PyTorch, BF16 shards"}
	for i, m := range models {
		t.Run(names[i], func(t *testing.T) {
			if i == 1 || i == 3 {
				if _, err := os.Stat(filepath.Join(m, "model.safetensors.index.json")); err != nil {
					t.Fatalf("%s is not sharded: %v", m, err)
				}
			}
			imported := importModel(t, m, f.tok)
			if i >= 2 { // the export is the Go model itself (rounded to BF16 for goBF16)
				if i == 2 && !slices.Equal(imported.Params, net.Params) {
					t.Fatal("F32 export/import changed the Go weights")
				}
			} else if i == 0 {
				// PyTorch's final weights are Go's up to float rounding over
				// 8 steps: the file holds the trained model, not another.
				d := maxParamDiff(imported, net)
				t.Logf("max |PyTorch - Go| weight after %d steps: %.3g", testOpt.Steps, d)
				if d > 1e-3 {
					t.Fatalf("PyTorch's trained weights differ from Go's by %g", d)
				}
			}
			compareModel(t, names[i], imported, prompts,
				func(j int) []float32 { return readF32(t, fmt.Sprintf("%s.%d.%d.f32", prefix, i, j)) }, res.Greedy[i])
		})
	}
}

// maxParamDiff is the largest |a - b| over two models' parameters.
func maxParamDiff(a, b *nn.Model) float64 {
	var d float64
	for i := range a.Params {
		d = math.Max(d, math.Abs(float64(a.Params[i])-float64(b.Params[i])))
	}
	return d
}

func u32ToI32(a []uint32) []int32 {
	out := make([]int32, len(a))
	for i, v := range a {
		out[i] = int32(v)
	}
	return out
}
