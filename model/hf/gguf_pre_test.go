package hf

import (
	"bytes"
	"slices"
	"testing"

	"ndb/model/modelfile"
	"ndb/model/tokenizer"
)

// TestGGUFPreTokenizer: tokenizer.ggml.pre names the llama.cpp pre-tokenizer
// that splits text as the model's tokenizer does: llama-bpe for a tokenizer
// trained with the llama3 pre-tokenizer, gpt-2 (the nearest) for ndb's; an
// explicit GGUFOptions.Pre wins. The rest of the tokenizer is written as for
// any tokenizer.
func TestGGUFPreTokenizer(t *testing.T) {
	m := testModel(t)
	llama3, err := tokenizer.TrainWith(slices.Values([]string{trajectory, trajectory + "don't x_1 = 12345\n\n    y"}), 320,
		tokenizer.SpecialTokens, tokenizer.PretokenizerLlama3)
	if err != nil {
		t.Fatal(err)
	}
	ml := *m
	ml.Tokenizer = llama3
	for _, c := range []struct {
		name string
		m    *modelfile.Model
		pre  string // GGUFOptions.Pre
		want string
	}{
		{"ndb", m, "", "gpt-2"},
		{"llama3", &ml, "", "llama-bpe"},
		{"llama3 with Pre", &ml, "default", "default"},
	} {
		var buf bytes.Buffer
		if err := WriteGGUF(&buf, c.m, GGUFOptions{Pre: c.pre}); err != nil {
			t.Fatal(err)
		}
		f, err := readGGUF(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if got := f.kv["tokenizer.ggml.pre"]; got != c.want {
			t.Errorf("%s: tokenizer.ggml.pre = %v, want %q", c.name, got, c.want)
		}
		checkGGUFTokenizer(t, f, c.m.Tokenizer, c.m.Config.Vocab)
	}
	if GGUFPreTokenizerOf(llama3) != GGUFLlama3PreTokenizer || GGUFPreTokenizerOf(m.Tokenizer) != GGUFPreTokenizer {
		t.Error("GGUFPreTokenizerOf")
	}
}
