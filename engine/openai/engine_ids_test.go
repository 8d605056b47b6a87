package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/engine"
	"ndb/engine/openai"
	"ndb/internal/testnet"
	"ndb/model/tokenizer"
)

// TestOpenAIEngineSendsTokenIDs runs a debugging session on the openai
// engine with TokenIDs: every request the fake server gets carries the
// prompt as ndb's token ids (the canonical encoding of the text they
// decode to, which is the engine's prompt), and the answers drive the
// session as text answers do.
func TestOpenAIEngineSendsTokenIDs(t *testing.T) {
	const src = "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n"
	tok, err := tokenizer.Train(slices.Values([]string{src, "<|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return fib(2)<|action_sep|>"}), 320, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt []int32 `json:"prompt"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Prompt) == 0 {
			http.Error(w, "prompt is not a list of token ids", 400)
			return
		}
		text := tok.Decode(req.Prompt)
		if !slices.Equal(tok.Encode(text), req.Prompt) || !strings.HasPrefix(text, "<|begin_of_text|>") || req.Prompt[0] != tok.MustSpecialID("<|begin_of_text|>") {
			http.Error(w, "ids are not ndb's encoding of a prompt", 400)
			return
		}
		prompts = append(prompts, text)
		answer := "<|line_sep|><|arg_sep|>{}<|src_sep|>    return fib(2)"
		if strings.HasSuffix(text, "<|continue|><|frame_sep|>") {
			answer = "<|exit_normal|><|trace_end|>"
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"index": 0, "text": answer, "finish_reason": "stop"}}})
	}))
	e, err := engine.New("openai", engine.Options{OpenAI: openai.Config{BaseURL: srv.URL + "/v1", Model: "ndb",
		TokenIDs: func(p string) ([]int32, error) { return tok.Encode(p), nil }}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := e.Open(ctx, engine.Program{Path: "fib.py", Source: src, Call: "fib(2)"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto}); err != nil || st.Function != "main" {
		t.Fatalf("step: %+v %v", st, err)
	}
	if st, err := s.Do(ctx, debugger.Command{Action: debugger.Continue}); err != nil || st.Exit != "normal" {
		t.Fatalf("continue: %+v %v", st, err)
	}
	if len(prompts) != 2 || !strings.Contains(prompts[0], src) {
		t.Errorf("prompts %q", prompts)
	}
}
