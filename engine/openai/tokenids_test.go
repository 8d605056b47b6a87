package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"ndb/internal/testnet"
	"ndb/model/tokenizer"
)

// tokenIDsPrompts are prompts whose text a server's own pre-tokenizer would
// split otherwise than ndb's: special tokens glued to code, indentation,
// digits, CRLF, non-ASCII.
var tokenIDsPrompts = []string{
	"<|begin_of_text|><|trace_context_start|>def f(n):\n    return n * 777\n<|frame_sep|><|call_sep|><|src_sep|>def f(n):<|arg_sep|>{\"n\": \"3\"}<|action_sep|>",
	"x_1 = 12345\r\n\tif x_1:\n        pass<|frame_sep|>",
	"s = 'héllo wörld ✓ 日本'<|line_sep|>",
	"<|end_of_text|>",
}

func testTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Train(slices.Values(tokenIDsPrompts), 300, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestTokenIDsPrompt: with Config.TokenIDs the server receives "prompt" as
// the list of ids ndb's tokenizer gives the text (special tokens as single
// ids), and nothing else of the request changes; without it, the text.
func TestTokenIDsPrompt(t *testing.T) {
	tok := testTokenizer(t)
	var got map[string]json.RawMessage
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = nil
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decode: %v", err)
		}
		w.Write([]byte(`{"choices":[{"index":0,"text":"<|line_sep|>ok<|action_sep|>","finish_reason":"stop"}]}`))
	}))
	withIDs, err := New(Config{BaseURL: srv.URL, Model: "ndb", TokenIDs: func(p string) ([]int32, error) { return tok.Encode(p), nil }})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(Config{BaseURL: srv.URL, Model: "ndb"})
	if err != nil {
		t.Fatal(err)
	}
	for _, prompt := range tokenIDsPrompts {
		want := tok.Encode(prompt)
		ch, err := withIDs.Complete(context.Background(), Request{Prompt: prompt, MaxTokens: 8, Stop: []string{"<|action_sep|>"}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int32
		if err := json.Unmarshal(got["prompt"], &ids); err != nil {
			t.Fatalf("%q: prompt sent as %s, want a list of ids: %v", prompt, got["prompt"], err)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%q: sent ids %v, ndb's tokenizer gives %v", prompt, ids, want)
		}
		if tok.Decode(ids) != prompt {
			t.Errorf("%q: the ids sent decode to %q", prompt, tok.Decode(ids))
		}
		if strings.Contains(prompt, "<|frame_sep|>") && !slices.Contains(ids, tok.MustSpecialID("<|frame_sep|>")) {
			t.Errorf("%q: <|frame_sep|> was not sent as its special id", prompt)
		}
		var stop []string
		json.Unmarshal(got["stop"], &stop)
		if string(got["model"]) != `"ndb"` || string(got["max_tokens"]) != "8" || !slices.Equal(stop, []string{"<|action_sep|>"}) {
			t.Errorf("other fields changed: %v", got)
		}
		if len(ch) != 1 || ch[0].Text != "<|line_sep|>ok<|action_sep|>" {
			t.Errorf("choices %+v", ch)
		}

		if _, err := plain.Complete(context.Background(), Request{Prompt: prompt}); err != nil {
			t.Fatal(err)
		}
		var text string
		if err := json.Unmarshal(got["prompt"], &text); err != nil || text != prompt {
			t.Errorf("without a tokenizer the prompt was sent as %s, want the text", got["prompt"])
		}
	}
	if _, err := withIDs.Complete(context.Background(), Request{Prompt: ""}); err == nil {
		t.Error("an empty prompt was sent as an empty list of ids")
	}
	calls := 0
	srvCount := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
	failing, _ := New(Config{BaseURL: srvCount.URL, TokenIDs: func(string) ([]int32, error) { return nil, errors.New("no model file") }})
	if _, err := failing.Complete(context.Background(), Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "no model file") || calls != 0 {
		t.Errorf("a tokenizer that fails: err %v after %d requests, want its error and none", err, calls)
	}
}
