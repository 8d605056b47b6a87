package train

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"time"

	"ndb/format"
	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
)

// DefaultVocab is the tokenizer size trained when none is given.
const DefaultVocab = 2048

// Job is one `ndb train` invocation: where the data and the model are, how
// big a run, and how to start it.
type Job struct {
	DataDir   string // shards of `ndb gen`, or a directory written by Pack
	Out       string // the model file (checkpoints overwrite it)
	PackDir   string // where shards are packed (default Out+".data")
	Config    string // a name of nn.Configs (default "tiny")
	Options   Options
	Tokens    int64         // if > 0: Steps = ceil(Tokens / (Batch*Seq))
	Time      time.Duration // if > 0: Steps sized to fit, and a deadline
	StepsSet  bool          // Options.Steps was given explicitly
	Resume    bool          // continue the run saved in Out
	Init      string        // start from this model's weights (new optimizer and schedule)
	Tokenizer string        // tokenizer file (default: Init's, or trained on the data)
	Vocab     int           // size of a trained tokenizer (default DefaultVocab)
	// Pretokenizer of a trained tokenizer (default ndb's; llama3 for a GGUF
	// export that llama.cpp tokenizes as ndb does).
	Pretokenizer tokenizer.Pretokenizer
	StopAt       int       // if > 0: stop (with a checkpoint) after this step, as if interrupted
	Progress     io.Writer // progress bar (nil: none)
	Logf         func(format string, args ...any)
}

// Result says what a job did.
type Result struct {
	State   *State
	Model   string // the model file
	Log     string // the loss log (JSONL)
	Plot    string // the training curve (PNG)
	Params  int
	Config  nn.Config
	ValLoss float64 // last validation loss (NaN if none)
}

// TokenizerChecksum is the hex SHA-256 of a tokenizer's saved JSON.
func TokenizerChecksum(t *tokenizer.Tokenizer) string {
	b, err := t.MarshalJSON()
	if err != nil {
		return ""
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TokenizerOf adapts a BPE tokenizer to the packing interface.
func TokenizerOf(t *tokenizer.Tokenizer) Tokenizer { return bpe{t, TokenizerChecksum(t)} }

type bpe struct {
	*tokenizer.Tokenizer
	sum string
}

func (b bpe) Checksum() string { return b.sum }

// Train runs a job: tokenizer, packing, model, training loop, checkpoints,
// loss log and plot.
func Train(ctx context.Context, job Job) (*Result, error) {
	logf := job.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if job.Out == "" {
		return nil, errors.New("train: no output model path (--out)")
	}
	if job.Resume && job.Init != "" {
		return nil, errors.New("train: --resume and --init exclude each other")
	}
	res := &Result{Model: job.Out, Log: job.Out + ".log.jsonl", Plot: job.Out + ".png", ValLoss: math.NaN()}

	var (
		tok   *tokenizer.Tokenizer
		net   *nn.Model
		opt   *nn.AdamW
		st    *State
		base  *modelfile.Model
		cfgNm = job.Config
	)
	switch {
	case job.Resume:
		mf, err := modelfile.Load(job.Out)
		if err != nil {
			return nil, fmt.Errorf("train: --resume: %w", err)
		}
		if mf.Train == nil {
			return nil, fmt.Errorf("train: --resume: %s holds no training state", job.Out)
		}
		base, tok = mf, mf.Tokenizer
	case job.Init != "":
		mf, err := modelfile.Load(job.Init)
		if err != nil {
			return nil, fmt.Errorf("train: --init: %w", err)
		}
		base, tok = mf, mf.Tokenizer
	}
	if job.Tokenizer != "" {
		t, err := tokenizer.Load(job.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("train: --tokenizer: %w", err)
		}
		if tok != nil && TokenizerChecksum(t) != TokenizerChecksum(tok) {
			return nil, fmt.Errorf("train: --tokenizer differs from the tokenizer of the model being continued")
		}
		tok = t
	}
	if _, err := os.Stat(filepath.Join(job.DataDir, "meta.json")); err != nil {
		if _, err := ShardFiles(job.DataDir); err != nil {
			return nil, err
		}
	} else if tok == nil {
		return nil, fmt.Errorf("train: %s is packed data: give the tokenizer it was packed with (--tokenizer, --init or --resume)", job.DataDir)
	}
	if tok == nil {
		vocab := job.Vocab
		if vocab == 0 {
			vocab = DefaultVocab
		}
		logf("training a %d-token tokenizer (pre-tokenizer %s) on the training programs of %s", vocab, job.Pretokenizer, job.DataDir)
		t, err := tokenizer.TrainWith(trainingTexts(job.DataDir, job.Options), vocab, tokenizer.SpecialTokens, job.Pretokenizer)
		if err != nil {
			return nil, fmt.Errorf("train: tokenizer: %w", err)
		}
		tok = t
	}

	data, err := packedData(job, tok, logf)
	if err != nil {
		return nil, err
	}
	data.MarkFrames(FrameTokens{BOS: uint32(tok.MustSpecialID(format.TokBeginOfText)),
		FrameSep: uint32(tok.MustSpecialID(format.TokFrameSep)), ActionSep: uint32(tok.MustSpecialID(format.TokActionSep))})

	if job.Resume {
		var err error
		if st, err = decodeState(base.Train); err != nil {
			return nil, err
		}
		if st.Data.TokenizerSHA256 != data.Meta.TokenizerSHA256 || st.Data.TrainTokens != data.Meta.TrainTokens || st.Data.ValTokens != data.Meta.ValTokens {
			return nil, fmt.Errorf("train: --resume: the packed data (%d train tokens, tokenizer %.12s) is not what the checkpoint trained on (%d, %.12s)",
				data.Meta.TrainTokens, data.Meta.TokenizerSHA256, st.Data.TrainTokens, st.Data.TokenizerSHA256)
		}
		if net, err = base.Network(); err != nil {
			return nil, err
		}
		opt = nn.NewAdamW(net)
		m, v := base.Train.Floats["adam.m"], base.Train.Floats["adam.v"]
		if len(m) != len(net.Params) || len(v) != len(net.Params) {
			return nil, fmt.Errorf("train: --resume: optimizer state does not fit the model")
		}
		copy(opt.M, m)
		copy(opt.V, v)
		opt.Step = st.Step
		if err := budget(job, &st.Options, net, st.Step); err != nil {
			return nil, err
		}
		cfgNm = base.Meta["config_name"]
		logf("resuming %s at step %d of %d", job.Out, st.Step, st.Options.Steps)
	} else {
		var cfg nn.Config
		if base != nil {
			if net, err = base.Network(); err != nil {
				return nil, err
			}
			cfg = base.Config
			cfgNm = base.Meta["config_name"]
		} else {
			if cfgNm == "" {
				cfgNm = "tiny"
			}
			c, ok := nn.Configs[cfgNm]
			if !ok {
				return nil, fmt.Errorf("train: unknown --config %q", cfgNm)
			}
			c.Vocab = tok.VocabSize()
			cfg = c
			if net, err = nn.New(cfg, job.Options.Seed); err != nil {
				return nil, err
			}
		}
		if cfg.Vocab < data.Meta.VocabSize {
			return nil, fmt.Errorf("train: model vocabulary %d is smaller than the data's %d", cfg.Vocab, data.Meta.VocabSize)
		}
		opt = nn.NewAdamW(net)
		o := job.Options
		if err := budget(job, &o, net, 0); err != nil {
			return nil, err
		}
		st = &State{Options: o, Data: data.Meta}
		os.Remove(res.Log)
	}
	o := &st.Options
	opt.WeightDecay, opt.Beta1, opt.Beta2, opt.Eps = float32(o.WeightDecay), float32(o.Beta1), float32(o.Beta2), float32(o.Eps)
	if o.Seq > net.Config.MaxSeq {
		return nil, fmt.Errorf("train: --seq %d exceeds the config's context of %d", o.Seq, net.Config.MaxSeq)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	res.Params, res.Config = len(net.Params), net.Config
	logf("model %s: %d parameters (%+v); %d steps of %dx%d tokens; data: %d train / %d val tokens (%d / %d programs)",
		cfgNm, len(net.Params), net.Config, o.Steps, o.Batch, o.Seq, data.Meta.TrainTokens, data.Meta.ValTokens, data.Meta.TrainPrograms, data.Meta.ValPrograms)

	// The loss log holds exactly the steps up to the checkpoint: a run that
	// died after its last checkpoint logged steps that will be redone.
	if err := truncateLog(res.Log, st.Step); err != nil {
		return nil, err
	}
	appendLog, closeLog, err := AppendLog(res.Log)
	if err != nil {
		return nil, err
	}
	defer closeLog()

	save := func(s *State) error {
		return saveCheckpoint(job.Out, cfgNm, net, opt, tok, s)
	}
	hooks := Hooks{Checkpoint: save, Log: appendLog, Progress: job.Progress}
	if job.Time > 0 {
		hooks.Deadline = time.Now().Add(job.Time)
	}
	hooks.StopAt = job.StopAt
	if err := Run(ctx, backend{net, opt}, data, st, hooks); err != nil {
		return nil, err
	}
	res.State = st
	recs, err := ReadLog(res.Log)
	if err == nil && len(recs) > 0 {
		for _, r := range recs {
			if r.ValLoss != nil {
				res.ValLoss = *r.ValLoss
			}
		}
		if err := PlotCurve(recs, fmt.Sprintf("ndb %s (%d params)", cfgNm, len(net.Params)), res.Plot); err != nil {
			return nil, fmt.Errorf("train: plot: %w", err)
		}
	}
	return res, nil
}

// budget sets o.Steps from the job's --tokens (the run's total) or --time
// (from step done on), else --steps. A resumed run keeps its schedule
// unless a budget is given again.
func budget(job Job, o *Options, net *nn.Model, done int) error {
	switch {
	case job.Tokens > 0:
		per := int64(o.Batch * o.Seq)
		o.Steps = int((job.Tokens + per - 1) / per)
	case job.Time > 0:
		perStep, err := timeStep(net.Config, o.Batch, o.Seq)
		if err != nil {
			return err
		}
		// Leave room for validation and checkpoints; the deadline stops
		// the run if the estimate was optimistic.
		o.Steps = done + max(1, int(0.9*job.Time.Seconds()/perStep.Seconds()))
	case job.StepsSet || !job.Resume:
		if job.Options.Steps > 0 {
			o.Steps = job.Options.Steps
		}
	}
	if o.Warmup >= o.Steps {
		o.Warmup = max(0, o.Steps/10)
	}
	return nil
}

// timeStep measures one training step of a throwaway model of cfg.
func timeStep(cfg nn.Config, B, T int) (time.Duration, error) {
	m, err := nn.New(cfg, 12345)
	if err != nil {
		return 0, err
	}
	be := backend{m, nn.NewAdamW(m)}
	in := make([]int32, B*T)
	for i := range in {
		in[i] = int32(i % cfg.Vocab)
	}
	// The first step allocates the activations: time the next two.
	var best time.Duration
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		if _, _, err := be.TrainStep(in, in, B, T, 1e-4, 1); err != nil {
			return 0, err
		}
		if d := time.Since(t0); i == 1 || i > 1 && d < best {
			best = d
		}
	}
	return best, nil
}

// packedData loads job.DataDir if it is packed, or packs its shards into
// PackDir, reusing an earlier pack made with the same tokenizer from the
// same shard files.
func packedData(job Job, tok *tokenizer.Tokenizer, logf func(string, ...any)) (*Packed, error) {
	sum := TokenizerChecksum(tok)
	if _, err := os.Stat(filepath.Join(job.DataDir, "meta.json")); err == nil {
		p, err := LoadPacked(job.DataDir)
		if err != nil {
			return nil, err
		}
		if p.Meta.TokenizerSHA256 != sum {
			return nil, fmt.Errorf("train: %s was packed with another tokenizer (%.12s, this one is %.12s)", job.DataDir, p.Meta.TokenizerSHA256, sum)
		}
		return p, nil
	}
	dir := job.PackDir
	if dir == "" {
		dir = job.Out + ".data"
	}
	digest, err := ShardDigest(job.DataDir)
	if err != nil {
		return nil, err
	}
	if p, err := LoadPacked(dir); err == nil && p.Meta.TokenizerSHA256 == sum && p.Meta.ShardDigest == digest {
		logf("reusing packed data in %s", dir)
		return p, nil
	}
	logf("packing %s into %s", job.DataDir, dir)
	if _, err := Pack(job.DataDir, dir, TokenizerOf(tok), PackOptions{}); err != nil {
		return nil, err
	}
	return LoadPacked(dir)
}

// trainingTexts yields the texts of the training programs (held-out ones
// are left out, so the tokenizer never sees validation programs either).
func trainingTexts(dataDir string, o Options) iter.Seq[string] {
	return func(yield func(string) bool) {
		programs := map[string]bool{}
		ReadShards(dataDir, func(t Trajectory) error { programs[t.ProgramID] = true; return nil })
		held := splitPrograms(programs, DefaultValPercent)
		stop := errors.New("stop")
		ReadShards(dataDir, func(t Trajectory) error {
			if held[t.ProgramID] {
				return nil
			}
			if !yield(t.Text) {
				return stop
			}
			return nil
		})
	}
}

// NewNNBackend returns the Backend `ndb train` uses: net trained in Go
// (nn.Model forward and backward, gradient clipping, opt's AdamW step). The
// PyTorch interop tests train with it too, so both sides run the same code.
func NewNNBackend(net *nn.Model, opt *nn.AdamW) Backend { return backend{net, opt} }

// backend trains an nn.Model with nn.AdamW.
type backend struct {
	m   *nn.Model
	opt *nn.AdamW
}

func (b backend) TrainStep(inputs, targets []int32, B, T int, lr, clipNorm float64) (float64, float64, error) {
	b.m.ZeroGrads()
	loss, err := b.m.Forward(inputs, B, T, targets)
	if err != nil {
		return 0, 0, err
	}
	if err := b.m.Backward(); err != nil {
		return 0, 0, err
	}
	norm := b.m.ClipGrads(float32(clipNorm))
	b.opt.Update(b.m, float32(lr))
	return float64(loss), float64(norm), nil
}

func (b backend) EvalLoss(inputs, targets []int32, B, T int) (float64, error) {
	loss, err := b.m.Forward(inputs, B, T, targets)
	return float64(loss), err
}

func saveCheckpoint(path, cfgName string, net *nn.Model, opt *nn.AdamW, tok *tokenizer.Tokenizer, st *State) error {
	blob, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return modelfile.Save(path, &modelfile.Model{
		Config: net.Config, Tokenizer: tok, Weights: net.Params,
		Train: &modelfile.TrainState{Step: int64(st.Step),
			Floats: map[string][]float32{"adam.m": opt.M, "adam.v": opt.V},
			Blobs:  map[string][]byte{"state": blob}},
		Meta: map[string]string{"created_by": "ndb train", "config_name": cfgName,
			"train_tokens": fmt.Sprint(st.Tokens), "steps": fmt.Sprint(st.Step)},
	})
}

func decodeState(ts *modelfile.TrainState) (*State, error) {
	var st State
	if err := json.Unmarshal(ts.Blobs["state"], &st); err != nil {
		return nil, fmt.Errorf("train: --resume: training state: %w", err)
	}
	if int64(st.Step) != ts.Step {
		return nil, fmt.Errorf("train: --resume: training state says step %d, file says %d", st.Step, ts.Step)
	}
	return &st, nil
}

// truncateLog keeps the log records of steps <= step.
func truncateLog(path string, step int) error {
	recs, err := ReadLog(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range recs {
		if r.Step <= step {
			enc.Encode(r)
		}
	}
	return f.Close()
}
