package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// byteToRune is GPT-2's bytes_to_unicode: printable bytes stand for
// themselves, the others for code points from U+0100 on, so every token is
// printable text in tokenizer.json. Hugging Face's ByteLevel
// pre-tokenizer and decoder use the same table.
var byteToRune, runeToByte = func() ([256]rune, map[rune]byte) {
	var b2r [256]rune
	r2b := make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		if printable {
			b2r[b] = rune(b)
		} else {
			b2r[b] = rune(256 + n)
			n++
		}
		r2b[b2r[b]] = byte(b)
	}
	return b2r, r2b
}()

func bytesToHF(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		sb.WriteRune(byteToRune[s[i]])
	}
	return sb.String()
}

func hfToBytes(s string) (string, error) {
	var sb strings.Builder
	for _, r := range s {
		b, ok := runeToByte[r]
		if !ok {
			return "", fmt.Errorf("%q is not byte-level text (U+%04X)", s, r)
		}
		sb.WriteByte(b)
	}
	return sb.String(), nil
}

type hfAddedToken struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// hfSplit is the part of a pre-tokenizer FromHFJSON checks.
type hfSplit struct {
	Type    string            `json:"type"`
	Pattern map[string]string `json:"pattern"`
}

type hfFile struct {
	Version       string          `json:"version"`
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	AddedTokens   []hfAddedToken  `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         json.RawMessage `json:"model"`
}

type hfModel struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges,omitempty"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  []string        `json:"merges"`
}

// HFJSON returns the tokenizer as Hugging Face's tokenizer.json: a BPE
// model over GPT-2's byte-level alphabet, a Split pre-tokenizer with the
// pre-tokenizer's pattern followed by ByteLevel (use_regex false), a
// ByteLevel decoder, and the special tokens as added tokens marked special.
// With PretokenizerLlama3 the model has "ignore_merges": true (a piece that
// is one token is that token), as Llama 3's tokenizer.json and llama.cpp.
// The `tokenizers` library then encodes text exactly as Encode does.
func (t *Tokenizer) HFJSON() ([]byte, error) {
	pre := map[string]any{
		"type": "Sequence",
		"pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": t.pre.Pattern()}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		},
	}
	dec := map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}
	// Vocab in id order (encoding/json would sort a map's keys).
	var vocab bytes.Buffer
	vocab.WriteByte('{')
	for id := int32(0); id < t.specialBase; id++ {
		if id > 0 {
			vocab.WriteByte(',')
		}
		k, _ := MarshalIndentNoEscape(bytesToHF(t.tokens[id]))
		fmt.Fprintf(&vocab, "%s:%d", k, id)
	}
	vocab.WriteByte('}')
	merges := make([]string, len(t.merges))
	for i, m := range t.merges {
		merges[i] = bytesToHF(t.tokens[m[0]]) + " " + bytesToHF(t.tokens[m[1]])
	}
	model, err := json.Marshal(hfModel{Type: "BPE", IgnoreMerges: pretokenizers[t.pre].ignoreMerges, Vocab: vocab.Bytes(), Merges: merges})
	if err != nil {
		return nil, err
	}
	added := make([]hfAddedToken, len(t.specials))
	for i, s := range t.specials {
		added[i] = hfAddedToken{ID: t.special[s], Content: s, Special: true}
	}
	out := hfFile{
		Version:       "1.0",
		Truncation:    json.RawMessage("null"),
		Padding:       json.RawMessage("null"),
		AddedTokens:   added,
		Normalizer:    json.RawMessage("null"),
		PreTokenizer:  mustJSON(pre),
		PostProcessor: json.RawMessage("null"),
		Decoder:       mustJSON(dec),
		Model:         model,
	}
	return MarshalIndentNoEscape(out)
}

// MarshalIndentNoEscape is json.MarshalIndent without HTML escaping, so
// "<|frame_sep|>" stays readable in the files people open.
func MarshalIndentNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called on values built above
	}
	return b
}

// FromHFJSON reads a tokenizer.json written by HFJSON (or by any tool that
// keeps its layout: the same pre-tokenizer, byte ids 0..255 in byte order,
// merged tokens in merge order, specials after them). Any other layout is an
// error, since the model's ids would not mean the same tokens.
func FromHFJSON(data []byte) (*Tokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	var pre struct {
		Type          string    `json:"type"`
		Pretokenizers []hfSplit `json:"pretokenizers"`
	}
	if err := json.Unmarshal(f.PreTokenizer, &pre); err != nil {
		return nil, fmt.Errorf("tokenizer.json: pre_tokenizer: %w", err)
	}
	if pre.Type != "Sequence" || len(pre.Pretokenizers) != 2 || pre.Pretokenizers[0].Type != "Split" ||
		pre.Pretokenizers[1].Type != "ByteLevel" {
		return nil, fmt.Errorf("tokenizer.json: pre_tokenizer is not ndb's (Split on a pattern, then ByteLevel)")
	}
	preTok, err := pretokenizerOfPattern(pre.Pretokenizers[0].Pattern["Regex"])
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: the Split %w", err)
	}
	var m struct {
		Type         string            `json:"type"`
		IgnoreMerges bool              `json:"ignore_merges"`
		Vocab        map[string]int32  `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
	}
	if err := json.Unmarshal(f.Model, &m); err != nil {
		return nil, fmt.Errorf("tokenizer.json: model: %w", err)
	}
	if m.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer.json: model type %q, want BPE", m.Type)
	}
	if want := pretokenizers[preTok].ignoreMerges; m.IgnoreMerges != want {
		return nil, fmt.Errorf("tokenizer.json: model ignore_merges is %v, ndb's %s pre-tokenizer encodes with %v", m.IgnoreMerges, preTok, want)
	}
	merges := make([][2]int32, len(m.Merges))
	for i, raw := range m.Merges {
		var left, right string
		var pair []string
		var s string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			var ok bool
			if left, right, ok = strings.Cut(s, " "); !ok {
				return nil, fmt.Errorf("tokenizer.json: merge %d %q has no space", i, s)
			}
		case json.Unmarshal(raw, &pair) == nil && len(pair) == 2:
			left, right = pair[0], pair[1]
		default:
			return nil, fmt.Errorf("tokenizer.json: merge %d is %s, want \"a b\" or [a, b]", i, raw)
		}
		a, okA := m.Vocab[left]
		b, okB := m.Vocab[right]
		if !okA || !okB {
			return nil, fmt.Errorf("tokenizer.json: merge %d (%q, %q) uses a token missing from the vocab", i, left, right)
		}
		merges[i] = [2]int32{a, b}
	}
	specials := make([]string, len(f.AddedTokens))
	for i, a := range f.AddedTokens {
		specials[i] = a.Content
	}
	t, err := build(merges, specials, preTok)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	// The rebuilt ids must be the file's ids.
	if len(m.Vocab) != int(t.specialBase) {
		return nil, fmt.Errorf("tokenizer.json: vocab has %d tokens, its merges make %d: not ndb's layout", len(m.Vocab), t.specialBase)
	}
	for text, id := range m.Vocab {
		raw, err := hfToBytes(text)
		if err != nil {
			return nil, fmt.Errorf("tokenizer.json: vocab: %w", err)
		}
		if id < 0 || id >= t.specialBase || t.tokens[id] != raw {
			return nil, fmt.Errorf("tokenizer.json: token %q has id %d, ndb's layout gives it another: not ndb's layout", text, id)
		}
	}
	for _, a := range f.AddedTokens {
		if t.special[a.Content] != a.ID {
			return nil, fmt.Errorf("tokenizer.json: added token %q has id %d, ndb's layout gives %d", a.Content, a.ID, t.special[a.Content])
		}
	}
	return t, nil
}
