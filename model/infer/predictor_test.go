package infer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"ndb/format"
	"ndb/model/defaultmodel"
	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
	"ndb/model/train/synthtext"
)

var (
	tokOnce sync.Once
	testTok *tokenizer.Tokenizer
)

// fixtureTokenizer is a small BPE trained on the fixture trajectories.
func fixtureTokenizer(t testing.TB) *tokenizer.Tokenizer {
	tokOnce.Do(func() {
		rng := rand.New(rand.NewPCG(3, 3))
		var texts []string
		for id := 0; id < 60; id++ {
			text, _ := synthtext.Trajectory(rng, id)
			texts = append(texts, text)
		}
		var err error
		testTok, err = tokenizer.Train(slices.Values(texts), 400, tokenizer.SpecialTokens)
		if err != nil {
			panic(err)
		}
	})
	return testTok
}

// randomPredictor is a predictor over a random-weight model.
func randomPredictor(t testing.TB, maxSeq int) *Predictor {
	tok := fixtureTokenizer(t)
	cfg := nn.Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, Vocab: tok.VocabSize(), MaxSeq: maxSeq, RopeTheta: 10000, NormEps: 1e-5}
	m, err := nn.New(cfg, 9)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(m, tok)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fixturePrompts returns (prompt, expected completion) pairs.
func fixturePrompts(seed uint64, n int) (prompts, wants []string) {
	rng := rand.New(rand.NewPCG(seed, 0))
	for id := 0; len(prompts) < n; id++ {
		text, _ := synthtext.Trajectory(rng, 1000+id)
		for _, p := range synthtext.Prompts(text) {
			rest := text[len(p):]
			if i := strings.Index(rest, format.TokActionSep); i >= 0 && !strings.Contains(rest[:i], format.TokTraceEnd) {
				rest = rest[:i+len(format.TokActionSep)]
			} else {
				rest = rest[:strings.Index(rest, format.TokEndOfText)+len(format.TokEndOfText)]
			}
			prompts, wants = append(prompts, p), append(wants, rest)
		}
	}
	return prompts[:n], wants[:n]
}

// TestRandomModelFramesAlwaysParse is the constrained-decoding guarantee:
// whatever a (random-weight) model prefers, every frame it writes parses,
// in the direction of the prompt's action, greedy or sampled, with a
// context short enough to force prompt truncation and frame closing.
func TestRandomModelFramesAlwaysParse(t *testing.T) {
	prompts, _ := fixturePrompts(5, 24)
	for _, maxSeq := range []int{128, 1024} {
		p := randomPredictor(t, maxSeq)
		for _, opt := range []SampleOptions{{MaxTokens: 64}, {Temperature: 1, Seed: 3, MaxTokens: 64}, {Temperature: 2, TopP: 0.95, Seed: 4, MaxTokens: 24}} {
			total := 0
			for _, prompt := range prompts {
				outs, err := p.Sample(context.Background(), prompt, 3, opt)
				if err != nil {
					t.Fatal(err)
				}
				dir := promptDirection(prompt)
				for _, out := range outs {
					total++
					f, err := format.ParseFrame(out)
					if err != nil || format.CheckFrame(out, dir) != format.Complete {
						t.Fatalf("maxSeq %d, %+v: output %q does not parse: %v", maxSeq, opt, out, err)
					}
					if dir == format.Backward && !f.Kind.Inverse() || dir == format.Forward && f.Kind.Inverse() {
						t.Fatalf("frame kind %s after a prompt of direction %v", f.Kind, dir)
					}
					if err := checkProgramRules(prompt, f, out); err != nil {
						t.Fatalf("maxSeq %d, %+v: output %q: %v", maxSeq, opt, out, err)
					}
				}
			}
			if total != 3*len(prompts) {
				t.Fatalf("got %d outputs", total)
			}
		}
	}
}

// checkProgramRules reports a frame that shows what its prompt's program
// cannot: a source line that is not an executable line of the program, or
// a LOCALS key that is not one of its names.
func checkProgramRules(prompt string, f format.Frame, text string) error {
	r := promptRules(nil, prompt)
	if f.Kind.IsExit() {
		return nil
	}
	head := text[:strings.Index(text, format.TokSrcSep)+len(format.TokSrcSep)]
	if !r.linesFor(head).contains(f.Src) {
		return fmt.Errorf("source line %q is not one the rules allow there", f.Src)
	}
	names := r.namesFor(text)
	for _, l := range f.Locals {
		if !nameAllowed(names, l.Name) {
			return fmt.Errorf("local %q is not a name of the frame's function", l.Name)
		}
	}
	return nil
}

// TestProgramRules checks the strings programAllowed lets a frame take
// from its program, and completeOpen's endings for a frame cut short.
func TestProgramRules(t *testing.T) {
	prompt := "<|begin_of_text|><|trace_context_start|>def f(xs):  # sum\n    # a comment\n\n    tot = 0\n    return sum(x for x in xs)\n\ndef main():\n    return f([1])\n<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>"
	r := promptRules(nil, prompt)
	for _, tc := range []struct {
		line string
		ok   bool
	}{{"def f(xs):  # sum", true}, {"    tot = 0", true}, {"    return f([1])", true}, {"    # a comment", false}, {"", false}, {"    tot = 1", false}, {"tot = 0", false}} {
		if got := r.lines.contains(tc.line); got != tc.ok {
			t.Errorf("line %q allowed = %v, want %v", tc.line, got, tc.ok)
		}
	}
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{{"    ret", true}, {"    return s", true}, {"    return x", false}, {"\t", false}, {"", true}} {
		if got := r.lines.hasPrefix(tc.prefix); got != tc.ok {
			t.Errorf("line prefix %q allowed = %v, want %v", tc.prefix, got, tc.ok)
		}
	}
	for _, tc := range []struct {
		old, new string
		ok       bool
	}{
		{`{`, `{"x`, true},
		{`{"x`, `{"xs`, true},
		{`{"xs`, `{"xs"`, true},
		{`{"x`, `{"xy`, false},
		{`{"x`, `{"x"`, true},    // x is a name (the generator's variable)
		{`{"to`, `{"to"`, false}, // a prefix of tot, not a name
		{`{"`, `{"def"`, false},  // a keyword names no variable
		{`{"`, `{"return"`, false},
		{`{"xs": "`, `{"xs": "[1, 2`, true}, // values are free
		{`{"xs": "1", `, `{"xs": "1", "..`, true},
		{`{"xs": "1", `, `{"xs": "1", ".0"`, true},
		{`{"xs": "1", `, `{"xs": "1", "zz`, false},
		{`"`, `"anything`, true},                                           // a VALUE has no keys
		{`{"xs": "1", "`, `{"xs": "1", "x`, true},                          // x is still free
		{`{"xs": "1", "x": "2", "`, `{"xs": "1", "x": "2", "x`, false},     // only used names start with x
		{`{"xs": "1", "x": "2", "xs`, `{"xs": "1", "x": "2", "xs"`, false}, // a name closed twice: a dead end
		{`{"xs": "1", "`, `{"xs": "1", "xs": "`, false},
		{`{"xs": "1", "x": "xs", "`, `{"xs": "1", "x": "xs", "tot"`, true},
	} {
		if got := r.keysAllowed(r.names, tc.old, tc.new); got != tc.ok {
			t.Errorf("keys %q -> %q allowed = %v, want %v", tc.old, tc.new, got, tc.ok)
		}
	}
	var free *programRules // --free-program: any name, but none twice
	for _, tc := range []struct {
		old, new string
		ok       bool
	}{{`{"xs": "1", "`, `{"xs": "1", "zz"`, true}, {`{"xs": "1", "`, `{"xs": "1", "xs"`, false}} {
		if got := free.keysAllowed(nil, tc.old, tc.new); got != tc.ok {
			t.Errorf("no rules: keys %q -> %q allowed = %v, want %v", tc.old, tc.new, got, tc.ok)
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"<|line_sep|><|arg_sep|>{}<|src_sep|>    re", "<|line_sep|><|arg_sep|>{}<|src_sep|>    return f([1])"},
		{`<|call_sep|><|src_sep|>def f(xs):  # sum<|arg_sep|>{"x`, `<|call_sep|><|src_sep|>def f(xs):  # sum<|arg_sep|>{"xs`},  // a call shows its parameters only
		{`<|call_sep|><|src_sep|>def f(xs):  # sum<|arg_sep|>{"to`, `<|call_sep|><|src_sep|>def f(xs):  # sum<|arg_sep|>{"to`}, // no name it may show starts so
		{`<|call_sep|><|src_sep|>def f(xs):  # sum<|arg_sep|>{"xs": "to`, `<|call_sep|><|src_sep|>def f(xs):  # sum<|arg_sep|>{"xs": "to`},
	} {
		if got := r.completeOpen(tc.text); got != tc.want {
			t.Errorf("completeOpen(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	if promptRules(nil, "no header") != nil {
		t.Error("a prompt without a header has rules")
	}
}

// TestUnconstrainedRandomModelRarelyParses shows the constraint is what
// makes the outputs parse.
func TestUnconstrainedRandomModelRarelyParses(t *testing.T) {
	prompts, _ := fixturePrompts(6, 10)
	p := randomPredictor(t, 1024)
	parsed, total := 0, 0
	for _, prompt := range prompts {
		outs, err := p.Sample(context.Background(), prompt, 2, SampleOptions{Temperature: 1, Seed: 1, MaxTokens: 30, Unconstrained: true})
		if err == nil {
			for _, out := range outs {
				total++
				if _, err := format.ParseFrame(out); err == nil {
					parsed++
				}
			}
		} else {
			total += 2 // an unclosable frame is an unparsed one
		}
	}
	if parsed*2 > total {
		t.Fatalf("unconstrained random outputs parsed %d of %d times", parsed, total)
	}
}

// TestPromptCacheAndBatch checks that reusing the prompt cache across calls
// and decoding k candidates in one batch give what a fresh predictor gives
// one candidate at a time.
func TestPromptCacheAndBatch(t *testing.T) {
	prompts, _ := fixturePrompts(7, 8)
	warm := randomPredictor(t, 1024)
	opt := SampleOptions{Temperature: 1, Seed: 11, MaxTokens: 48}
	for i, prompt := range prompts {
		got, err := warm.Sample(context.Background(), prompt, 3, opt)
		if err != nil {
			t.Fatal(err)
		}
		fresh := randomPredictor(t, 1024)
		for c := 0; c < 3; c++ {
			// Candidate c of a batch draws from PCG(Seed, c): reproduce
			// it alone by decoding a batch of c+1 and keeping the last.
			alone, err := fresh.Sample(context.Background(), prompt, c+1, opt)
			if err != nil {
				t.Fatal(err)
			}
			if alone[c] != got[c] {
				t.Fatalf("prompt %d candidate %d: warm batch %q, fresh %q", i, c, got[c], alone[c])
			}
		}
		g1, _ := warm.NextFrame(context.Background(), prompt, Greedy)
		g2, _ := randomPredictor(t, 1024).NextFrame(context.Background(), prompt, Greedy)
		if g1 != g2 {
			t.Fatalf("prompt %d: greedy with a warm cache %q, fresh %q", i, g1, g2)
		}
	}
}

// TestDraftsKeepGreedy checks that prompt-lookup drafts change only the
// speed of greedy decoding, not its output.
func TestDraftsKeepGreedy(t *testing.T) {
	prompts, _ := fixturePrompts(8, 16)
	a, b := randomPredictor(t, 1024), randomPredictor(t, 1024)
	for _, prompt := range prompts {
		got, err := a.NextFrame(context.Background(), prompt, SampleOptions{MaxTokens: 48})
		if err != nil {
			t.Fatal(err)
		}
		want, err := b.NextFrame(context.Background(), prompt, SampleOptions{MaxTokens: 48, NoDraft: true})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("with drafts %q, without %q", got, want)
		}
	}
	if d := lookupDraft([]int32{5, 6, 7, 8, 1, 5, 6}, 3); !slices.Equal(d, []int32{7, 8, 1}) {
		t.Fatalf("lookupDraft = %v, want [7 8 1]", d)
	}
	if d := lookupDraft([]int32{9, 5, 6, 7, 2, 5, 6, 7}, 8); !slices.Equal(d, []int32{2, 5, 6, 7}) {
		t.Fatalf("lookupDraft = %v, want [2 5 6 7]", d)
	}
	if d := lookupDraft([]int32{1, 2, 3}, 4); d != nil {
		t.Fatalf("lookupDraft without a match = %v", d)
	}
}

func TestFitPromptKeepsCode(t *testing.T) {
	p := randomPredictor(t, 128)
	rng := rand.New(rand.NewPCG(1, 1))
	text := synthtext.Forward(rng, 3, 4)
	prompts := synthtext.Prompts(text)
	long := prompts[len(prompts)-1]
	if len(p.tok.Encode(long)) <= 96 {
		t.Fatalf("test setup: prompt of %d tokens is not long", len(p.tok.Encode(long)))
	}
	ids, budget, err := p.fitPrompt(long, 32)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) > 128-32 || budget != min(32, 128-len(ids)) {
		t.Fatalf("fitted prompt %d tokens, budget %d", len(ids), budget)
	}
	got := p.tok.Decode(ids)
	header := prompts[0][:strings.Index(prompts[0], format.TokFrameSep)]
	if len(header) < 200 && strings.HasPrefix(got, header) {
		if !strings.HasSuffix(got, prompts[len(prompts)-1][len(prompts[len(prompts)-1])-60:]) {
			t.Fatalf("truncated prompt lost its end:\n%s", got)
		}
		if !strings.HasPrefix(got[len(header):], format.TokFrameSep) {
			t.Fatalf("truncation did not cut at a frame:\n%s", got)
		}
	} else {
		t.Fatalf("truncated prompt lost the code:\n%s", got)
	}
}

func TestBadInput(t *testing.T) {
	p := randomPredictor(t, 128)
	if _, err := p.Sample(context.Background(), "", 1, Greedy); err == nil {
		t.Error("empty prompt accepted")
	}
	if _, err := p.Sample(context.Background(), "x", 0, Greedy); err == nil {
		t.Error("k = 0 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.NextFrame(ctx, "<|begin_of_text|><|trace_context_start|>x\n<|frame_sep|>", Greedy); err == nil {
		t.Error("cancelled context ignored")
	}
	if _, err := Load("/nonexistent/ndb.model"); err == nil {
		t.Error("missing model file accepted")
	}
}

func TestDefaultModel(t *testing.T) {
	_, embedded := defaultmodel.Bytes()
	p, err := loadDefault("")
	if errors.Is(embedded, defaultmodel.ErrAbsent) {
		if !errors.Is(err, defaultmodel.ErrAbsent) || p != nil {
			t.Fatalf("no embedded model: got %v, %v", p, err)
		}
	} else if err != nil {
		t.Fatalf("embedded model does not load: %v", err)
	}
	// $NDB_MODEL names a file: a model file loads, anything else is an error.
	tok := fixtureTokenizer(t)
	rp := randomPredictor(t, 64)
	path := filepath.Join(t.TempDir(), "m.model")
	if err := modelfile.Save(path, &modelfile.Model{Config: rp.model.Config, Tokenizer: tok, Weights: rp.model.Params}); err != nil {
		t.Fatal(err)
	}
	if p, err := loadDefault(path); err != nil || p.Model().Config != rp.model.Config {
		t.Fatalf("loading %s: %v", path, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.model")
	os.WriteFile(bad, []byte("not a model"), 0o644)
	if _, err := loadDefault(bad); err == nil || !strings.Contains(err.Error(), "not an ndb model file") {
		t.Fatalf("bad model file: %v", err)
	}
}

// TestBreakpointOnSilentLineAnswersTheExit: a breakpoint on a line that
// runs nothing (a docstring's) can only be answered by the exit, whatever
// the model prefers; one on a line that runs may still be a stop.
func TestBreakpointOnSilentLineAnswersTheExit(t *testing.T) {
	src := "def f(n):\n    \"\"\"Double n.\n    Twice.\n    \"\"\"\n    return 2 * n\nprint(f(2))\n"
	prompt := func(bp string) string {
		return stepPrompt(src, `<|line_sep|><|arg_sep|>{}<|src_sep|>def f(n):<|action_sep|>`, format.TokBreakpoint+bp)
	}
	p := randomPredictor(t, 1024)
	stops := 0
	for seed := range uint64(8) {
		opt := SampleOptions{Temperature: 2, Seed: seed, MaxTokens: 48}
		for _, bp := range []string{"    Twice.", "    return 2 * n"} {
			out, err := p.NextFrame(context.Background(), prompt(bp), opt)
			if err != nil {
				t.Fatal(err)
			}
			f, err := format.ParseFrame(out)
			if err != nil {
				t.Fatalf("%q: %v", out, err)
			}
			switch {
			case bp == "    Twice." && !f.Kind.IsExit():
				t.Errorf("seed %d: a breakpoint on a docstring's line answered %q", seed, out)
			case !f.Kind.IsExit():
				stops++
			}
		}
	}
	if stops == 0 {
		t.Error("a breakpoint on a line that runs was never answered by a stop: the rule refuses too much")
	}
}

// TestReturnsHeldOffQuietLines: a return or exception frame never shows a
// line that can neither raise nor end its frame (pysource's Quiet), with or
// without another rule on its kind; other frames still may.
func TestReturnsHeldOffQuietLines(t *testing.T) {
	src := "LIMIT = 10\ndef greet():\n    print('hi')\ngreet()\n"
	for _, prompt := range []string{
		stepPrompt(src, `<|line_sep|><|arg_sep|>{}<|src_sep|>LIMIT = 10<|action_sep|>`, format.TokStepReturn),
		stepPrompt(src, `<|call_sep|><|src_sep|><|arg_sep|>{}<|action_sep|>`, format.TokStepOver),
		stepPrompt(src, `<|inv_line_sep|><|src_sep|>greet()<|arg_sep|>{"..": ".."}<|action_sep|>`, format.TokInvStepInto),
	} {
		r := promptRules(nil, prompt)
		for _, kind := range endKinds {
			lines := r.linesFor(kind + format.TokSrcSep)
			if lines.contains("LIMIT = 10") || lines.contains("def greet():") || len(lines) == 0 {
				t.Errorf("after %q, %s may show %q", prompt[len(prompt)-60:], kind, lines)
			}
		}
	}
	if r := promptRules(nil, stepPrompt(src, `<|line_sep|><|arg_sep|>{}<|src_sep|>LIMIT = 10<|action_sep|>`, format.TokStepOver)); !r.linesFor(format.TokLineSep).contains("def greet():") {
		t.Errorf("a line frame may not show the def: %q", r.linesFor(format.TokLineSep))
	}
}
