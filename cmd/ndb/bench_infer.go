package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"ndb/format"
	"ndb/model/infer"
	"ndb/model/nn"
	"ndb/model/tokenizer"
	"ndb/model/train"
	"ndb/model/train/synthtext"
)

var benchInferFlags struct {
	json    bool
	model   string
	config  string
	vocab   int
	data    string
	prompts int
	k       int
	maxSeq  int
	seed    uint64
	decodeN int
	noDraft bool
	repeat  int
}

type item struct{ prompt, want string }

var benchInferCmd = &cobra.Command{
	Use:   "infer",
	Short: "Time next-state prediction: ms per predicted state and decode tokens/s",
	Long: `bench infer predicts the next frame after realistic prompts (trajectories cut after an
action: from --data shards, or ndb's built-in fixture trajectories) with greedy constrained
decoding, and reports milliseconds per predicted state (median, p90) in two settings:
"session" (the prompts of a trajectory in order, as a debugging session asks them: each
prompt extends the last, so the prompt cache is reused) and "cold" (every prompt prefilled
from scratch). It also reports decode and prefill tokens/s and k-candidate batch decoding.

Without --model the network has random weights (config --config, vocabulary padded to
--vocab, about 5.8M parameters for small/2048): the timing is what matters, and each
prediction is given as many tokens as the true frame has, then closed, so the work per
state is that of a real prediction.`,
	Args: cobra.NoArgs,
	RunE: runBenchInfer,
}

type benchInferResult struct {
	Model             string    `json:"model"`
	Params            int       `json:"params"`
	Config            nn.Config `json:"config"`
	Threads           int       `json:"threads"`
	Prompts           int       `json:"prompts"`
	PromptTokensMean  float64   `json:"prompt_tokens_mean"`
	FrameTokensMean   float64   `json:"frame_tokens_mean"`
	MsPerState        float64   `json:"ms_per_state_median"`
	MsPerStateP90     float64   `json:"ms_per_state_p90"`
	MsPerStateCold    float64   `json:"ms_per_state_cold_median"`
	MsPerStateColdP90 float64   `json:"ms_per_state_cold_p90"`
	DecodeTokensPerS  float64   `json:"decode_tokens_per_s"`
	PrefillTokensPerS float64   `json:"prefill_tokens_per_s"`
	BatchK            int       `json:"batch_k"`
	BatchTokensPerS   float64   `json:"batch_decode_tokens_per_s"`
	MsPerKStates      float64   `json:"ms_per_k_states_median"`
	TargetMsPerState  float64   `json:"target_ms_per_state"`
	Repeat            int       `json:"repeat"`
	TokensPerPass     float64   `json:"tokens_per_decode_pass"`
	DraftAccept       float64   `json:"draft_acceptance"`
}

func runBenchInfer(cmd *cobra.Command, _ []string) error {
	f := benchInferFlags
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	var (
		p    *infer.Predictor
		desc string
		err  error
	)
	rng := rand.New(rand.NewPCG(f.seed, 1))
	texts, err := benchTexts(f.data, rng, f.prompts)
	if err != nil {
		return err
	}
	if f.model != "" {
		if p, err = infer.Load(f.model); err != nil {
			return err
		}
		desc = f.model
	} else {
		tok, err := tokenizer.Train(slices.Values(texts), f.vocab, tokenizer.SpecialTokens)
		if err != nil {
			return err
		}
		cfg, ok := nn.Configs[f.config]
		if !ok {
			return fmt.Errorf("bench infer: unknown --config %q", f.config)
		}
		cfg.Vocab = max(f.vocab, tok.VocabSize())
		if f.maxSeq > 0 {
			cfg.MaxSeq = f.maxSeq
		}
		m, err := nn.New(cfg, f.seed)
		if err != nil {
			return err
		}
		if p, err = infer.New(m, tok); err != nil {
			return err
		}
		desc = fmt.Sprintf("random weights, config %s, vocab %d (tokenizer %d)", f.config, cfg.Vocab, tok.VocabSize())
	}
	m, tok := p.Model(), p.Tokenizer()
	res := benchInferResult{Model: desc, Params: len(m.Params), Config: m.Config, Threads: runtime.GOMAXPROCS(0),
		TargetMsPerState: 50, BatchK: f.k}

	// Sessions: every prompt of a trajectory in order.
	var sessions [][]item
	for _, text := range texts {
		var s []item
		for _, pr := range synthtext.Prompts(text) {
			rest := text[len(pr):]
			if i := strings.Index(rest, format.TokFrameSep); i >= 0 {
				rest = rest[:i]
			}
			if i := strings.Index(rest, format.TokActionSep); i >= 0 {
				rest = rest[:i+len(format.TokActionSep)]
			}
			s = append(s, item{pr, rest})
		}
		sessions = append(sessions, s)
	}
	// The prompts to time: the first f.prompts of the sessions, in order.
	var items []item
	var promptToks, frameToks float64
	for _, sess := range sessions {
		for _, it := range sess {
			if len(items) < f.prompts {
				items = append(items, it)
				promptToks += float64(len(tok.Encode(it.prompt)))
				frameToks += float64(max(1, len(tok.Encode(it.want))))
			}
		}
	}
	n := len(items)
	res.Prompts = n
	res.PromptTokensMean, res.FrameTokensMean = promptToks/float64(n), frameToks/float64(n)
	optFor := func(it item) infer.SampleOptions {
		return infer.SampleOptions{MaxTokens: max(1, len(tok.Encode(it.want))), NoDraft: f.noDraft}
	}
	// A shared machine's load only ever adds time: each prompt's time is the
	// minimum over --repeat passes.
	reset := "<|begin_of_text|><|trace_context_start|>pass\n<|frame_sep|>"
	warm, cold := make([]float64, n), make([]float64, n)
	var kTimes []float64
	for r := 0; r < max(1, f.repeat); r++ {
		// Session: the prompts in order, each extending the last (the
		// prompt cache is reset between trajectories by their new code).
		if _, err := p.NextFrame(ctx, reset, infer.SampleOptions{MaxTokens: 1}); err != nil {
			return err
		}
		for i, it := range items {
			t0 := time.Now()
			if _, err := p.NextFrame(ctx, it.prompt, optFor(it)); err != nil {
				return err
			}
			if d := ms(time.Since(t0)); r == 0 || d < warm[i] {
				warm[i] = d
			}
		}
		// Cold: every prompt prefilled from scratch.
		for i, it := range items {
			if _, err := p.NextFrame(ctx, reset, infer.SampleOptions{MaxTokens: 1}); err != nil {
				return err
			}
			t0 := time.Now()
			if _, err := p.NextFrame(ctx, it.prompt, optFor(it)); err != nil {
				return err
			}
			if d := ms(time.Since(t0)); r == 0 || d < cold[i] {
				cold[i] = d
			}
			if r == 0 && f.k > 1 && i%4 == 0 {
				kopt := optFor(it)
				kopt.Temperature, kopt.TopP, kopt.Seed = 0.6, 0.95, uint64(i)
				t0 := time.Now()
				if _, err := p.Sample(ctx, it.prompt, f.k, kopt); err != nil {
					return err
				}
				kTimes = append(kTimes, ms(time.Since(t0)))
			}
		}
	}
	res.MsPerState, res.MsPerStateP90 = quantile(warm, 0.5), quantile(warm, 0.9)
	res.MsPerStateCold, res.MsPerStateColdP90 = quantile(cold, 0.5), quantile(cold, 0.9)
	res.MsPerKStates = quantile(kTimes, 0.5)

	// Raw decode and prefill speed of the network (best of --repeat).
	for r := 0; r < max(1, f.repeat); r++ {
		d, pf, err := decodeSpeed(m, 1, f.decodeN)
		if err != nil {
			return err
		}
		res.DecodeTokensPerS, res.PrefillTokensPerS = max(res.DecodeTokensPerS, d), max(res.PrefillTokensPerS, pf)
		if f.k > 1 {
			bd, _, err := decodeSpeed(m, f.k, f.decodeN/2)
			if err != nil {
				return err
			}
			res.BatchTokensPerS = max(res.BatchTokensPerS, bd)
		}
	}
	res.Repeat = max(1, f.repeat)
	if st := p.Stats(); st.Passes > 0 {
		res.TokensPerPass = float64(st.Tokens) / float64(st.Passes)
		res.DraftAccept = float64(st.Accepted) / float64(max(1, st.Drafted))
	}
	if f.json {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("%s: %d params, %d threads\n", res.Model, res.Params, res.Threads)
	fmt.Printf("%d prompts (mean %.0f tokens), frames of %.1f tokens\n", res.Prompts, res.PromptTokensMean, res.FrameTokensMean)
	fmt.Printf("ms per state: session median %.1f p90 %.1f; cold median %.1f p90 %.1f (target <= %.0f)\n",
		res.MsPerState, res.MsPerStateP90, res.MsPerStateCold, res.MsPerStateColdP90, res.TargetMsPerState)
	fmt.Printf("decode %.0f tokens/s, prefill %.0f tokens/s, batch of %d: %.0f tokens/s, %.1f ms per %d states\n",
		res.DecodeTokensPerS, res.PrefillTokensPerS, res.BatchK, res.BatchTokensPerS, res.MsPerKStates, res.BatchK)
	fmt.Printf("greedy drafts: %.2f tokens per decode pass, %.0f%% of drafted tokens kept\n", res.TokensPerPass, 100*res.DraftAccept)
	return nil
}

// benchTexts returns up to n trajectories: from the shards of dir, or the
// fixture's.
func benchTexts(dir string, rng *rand.Rand, n int) ([]string, error) {
	var texts []string
	if dir != "" {
		_, err := train.ReadShards(dir, func(t train.Trajectory) error {
			if len(texts) < n {
				texts = append(texts, t.Text)
			}
			return nil
		})
		return texts, err
	}
	for id := 0; len(texts) < max(n, 200); id++ {
		texts = append(texts, synthtext.Forward(rng, id, 1+rng.IntN(4)))
		if id%4 == 0 {
			texts = append(texts, synthtext.Inverse(id, 1+rng.IntN(4)))
		}
	}
	return texts, nil
}

// decodeSpeed times batch-b decoding of n tokens after a 256-token prefill.
func decodeSpeed(m *nn.Model, b, n int) (decode, prefill float64, err error) {
	promptLen := min(256, m.Config.MaxSeq/2)
	n = min(n, m.Config.MaxSeq-promptLen)
	cache, err := m.NewKVCache(1, m.Config.MaxSeq)
	if err != nil {
		return 0, 0, err
	}
	prompt := make([]int32, promptLen)
	for i := range prompt {
		prompt[i] = int32(i*7919) % int32(m.Config.Vocab)
	}
	t0 := time.Now()
	if _, err := m.Decode(prompt, cache); err != nil {
		return 0, 0, err
	}
	prefill = float64(promptLen) / time.Since(t0).Seconds()
	if b > 1 {
		if cache, err = cache.Fork(b); err != nil {
			return 0, 0, err
		}
	}
	tok := make([]int32, b)
	t0 = time.Now()
	for i := 0; i < n; i++ {
		for j := range tok {
			tok[j] = int32((i*31 + j) % m.Config.Vocab)
		}
		if _, err := m.Decode(tok, cache); err != nil {
			return 0, 0, err
		}
	}
	decode = float64(n*b) / time.Since(t0).Seconds()
	return decode, prefill, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func init() {
	f := &benchInferFlags
	fl := benchInferCmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print one JSON line")
	fl.StringVar(&f.model, "model", "", "model file to time (default: random weights)")
	fl.StringVar(&f.config, "config", "small", "config of the random-weight model")
	fl.IntVar(&f.vocab, "vocab", 2048, "vocabulary of the random-weight model")
	fl.IntVar(&f.maxSeq, "max-seq", 0, "context length of the random-weight model (default: the config's)")
	fl.StringVar(&f.data, "data", "", "take prompts from this `DIR` of ndb gen shards (default: built-in fixture trajectories)")
	fl.IntVar(&f.prompts, "prompts", 200, "number of predicted states to time")
	fl.IntVar(&f.k, "k", 8, "candidates per batch for the batch figures")
	fl.Uint64Var(&f.seed, "seed", 1, "seed")
	fl.IntVar(&f.decodeN, "decode-tokens", 256, "tokens for the raw decode speed")
	fl.BoolVar(&f.noDraft, "no-draft", false, "decode without prompt-lookup drafts")
	fl.IntVar(&f.repeat, "repeat", 3, "time every prompt this many times and keep the fastest (load only adds time)")
	benchCmd.AddCommand(benchInferCmd)
}
