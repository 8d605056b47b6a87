package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"ndb/internal/paths"
)

func llama3Pieces(s string) []string {
	var pieces []string
	splitLlama3(s, func(p string) { pieces = append(pieces, p) })
	return pieces
}

func TestSplitLlama3(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"def main():", []string{"def", " main", "():"}},
		// A line break ends a punctuation piece; indentation is its own piece
		// and leaves its last space to the word.
		{"def f(x):\n    return x", []string{"def", " f", "(x", "):\n", "   ", " return", " x"}},
		{"x\n\n    y", []string{"x", "\n\n", "   ", " y"}},
		{"a\n\n    ", []string{"a", "\n\n", "    "}},
		{"\n    return", []string{"\n", "   ", " return"}},
		{"if x:\n\tpass", []string{"if", " x", ":\n", "\tpass"}},
		// Contractions, any ASCII case; an apostrophe before other letters
		// is a prefix.
		{"don't", []string{"don", "'t"}},
		{"'S 'sT 'LL 're 'Ve 'mD 'dd", []string{"'S", " '", "sT", " '", "LL", " '", "re", " '", "Ve", " '", "mD", " '", "dd"}},
		{"x's 'lx 'l", []string{"x", "'s", " '", "lx", " '", "l"}},
		{"'x", []string{"'x"}},
		{"'ſ", []string{"'ſ"}}, // ſ (U+017F) is not an s for llama.cpp
		// Digits: groups of three from the left, no leading space.
		{"x = 12345", []string{"x", " =", " ", "123", "45"}},
		{"a1b22c", []string{"a", "1", "b", "22", "c"}},
		{"½²Ⅻ٣٤", []string{"½²Ⅻ", "٣٤"}},
		// '_' is punctuation: identifiers split there.
		{"x_1 = __init__", []string{"x", "_", "1", " =", " __", "init", "__"}},
		{"_y", []string{"_y"}},
		// Punctuation runs take one leading space and the line breaks after.
		{`{"n": "5"}`, []string{`{"`, "n", `":`, ` "`, "5", `"}`}},
		{"x));\r\n\r\ny", []string{"x", "));\r\n\r\n", "y"}},
		{"a += -b", []string{"a", " +=", " -", "b"}},
		// Whitespace: up to the last line break, else all but the last.
		{"a  \n\tb", []string{"a", "  \n", "\tb"}},
		{"a \t \n \n  b", []string{"a", " \t \n \n", " ", " b"}},
		{"\r\n\r\nx", []string{"\r\n\r\n", "x"}},
		{"x =  42", []string{"x", " =", " ", " ", "42"}},
		{"trailing   ", []string{"trailing", "   "}},
		{"\t\t(x)", []string{"\t", "\t", "(x", ")"}},
		{" ", []string{" "}},
		{"", nil},
		// Unicode letters, marks, other whitespace.
		{"é ü 日本語 🙂🙂", []string{"é", " ü", " 日本語", " 🙂🙂"}},
		{"e\u0301t\u0301", []string{"e", "\u0301t", "\u0301"}},
		{" \u00a0x", []string{" ", "\u00a0x"}},
		{"a\u2028\u3000b", []string{"a", "\u2028", "\u3000b"}},
		{"a\u0085\nb", []string{"a", "\u0085\n", "b"}},
		{"a\ufeffb", []string{"a", "\ufeffb"}}, // U+FEFF is not whitespace
		// Invalid UTF-8: each bad byte is one punctuation character.
		{"a\xffb \xfe\xfe", []string{"a", "\xffb", " \xfe\xfe"}},
	}
	for _, c := range cases {
		if got := llama3Pieces(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitLlama3(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// llamaCppWhitespace is llama.cpp's \s: unicode_set_whitespace in its
// unicode-data.cpp (Unicode's White_Space). JavaScript's \s differs: it has
// U+FEFF and lacks U+0085.
var llamaCppWhitespace = []rune{0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
	0x2028, 0x2029, 0x202F, 0x205F, 0x3000}

func TestLlama3Whitespace(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		c, _ := classAtLlama3(string(r), 0)
		if space := c == classSpace || c == classNewline; space != slices.Contains(llamaCppWhitespace, r) {
			t.Errorf("%U: whitespace %v, llama.cpp says %v", r, space, !space)
		}
	}
}

// llama3Corpus returns texts to split: trajectory-like texts, Python files
// (the repository's fixtures, and ../shared/data/realworld when present) and
// random strings of characters the pattern treats differently.
func llama3Corpus(t *testing.T) []string {
	texts := corpus(100, 3)
	var files []string
	fixtures, _ := filepath.Glob(filepath.Join("..", "..", "dataset", "testdata", "realworld", "*.py"))
	files = append(files, fixtures...)
	if dir, err := paths.DataDir(""); err == nil {
		shared, _ := filepath.Glob(filepath.Join(dir, "realworld", "*.py"))
		files = append(files, shared...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	alphabet := []string{"a", "Z", "s", "S", "t", "T", "r", "R", "e", "E", "v", "l", "L", "m", "d", "D",
		"'", "'", "_", "0", "9", "7", " ", " ", " ", "\t", "\n", "\n", "\r", "\v", "\f",
		"(", ")", ":", ".", "\"", "\\", "-", "é", "ß", "日", "ſ", "\u0301", "½", "²", "Ⅻ", "٣",
		"\u00a0", "\u0085", "\u2028", "\u3000", "\ufeff", "\x00", "\x1c", "🙂", "\u212a", "İ",
		"\u200b", "ǅ", "ʰ", "\uFFFD"}
	rng := rand.New(rand.NewPCG(27, 3))
	for range 3000 {
		var sb strings.Builder
		for range rng.IntN(40) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, sb.String())
	}
	return texts
}

// TestSplitLlama3MatchesRegex splits a corpus with Llama3Pattern in
// JavaScript's regex engine (node; \p{L}, \p{N} and look-ahead with the u
// flag), \s replaced by llama.cpp's whitespace, and compares the pieces.
func TestSplitLlama3MatchesRegex(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the llama3 scanner is not checked against a regex engine")
	}
	var ws strings.Builder
	for _, r := range llamaCppWhitespace {
		fmt.Fprintf(&ws, `\u{%x}`, r)
	}
	pattern := strings.NewReplacer(`[^\s`, `[^`+ws.String(), `\s`, `[`+ws.String()+`]`, `\S`, `[^`+ws.String()+`]`).Replace(Llama3Pattern)
	if strings.Contains(pattern, `\s`) || strings.Contains(pattern, `\S`) {
		t.Fatalf("pattern still has \\s or \\S: %s", pattern)
	}
	texts := llama3Corpus(t)
	for _, s := range texts {
		if !utf8.ValidString(s) {
			t.Fatalf("corpus text is not UTF-8 (JSON would change it): %q", s)
		}
	}
	input, _ := json.Marshal(map[string]any{"pattern": pattern, "texts": texts})
	// Isolated split: the matches, and any text between them (none: every
	// character matches some alternative).
	const script = `
const {pattern, texts} = JSON.parse(require("fs").readFileSync(0, "utf8"));
const re = new RegExp(pattern, "gu");
const out = texts.map((s) => {
  const pieces = [];
  let pos = 0;
  for (const m of s.matchAll(re)) {
    if (m.index > pos) pieces.push(s.slice(pos, m.index));
    pieces.push(m[0]);
    pos = m.index + m[0].length;
  }
  if (pos < s.length) pieces.push(s.slice(pos));
  return pieces;
});
process.stdout.write(JSON.stringify(out));`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var want [][]string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(texts) {
		t.Fatalf("node output: %v (%d of %d texts)", err, len(want), len(texts))
	}
	bad, pieces, size := 0, 0, 0
	for i, s := range texts {
		got := llama3Pieces(s)
		pieces += len(got)
		size += len(s)
		if !slices.Equal(got, want[i]) {
			if bad++; bad <= 5 {
				k := 0
				for k < min(len(got), len(want[i])) && got[k] == want[i][k] {
					k++
				}
				t.Errorf("text %d (%d bytes): first difference at piece %d:\n Go %q\n JS %q", i, len(s), k,
					got[k:min(k+4, len(got))], want[i][k:min(k+4, len(want[i]))])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d texts split differently", bad, len(texts))
	}
	t.Logf("%d texts, %d bytes, %d pieces: the same in Go and in node's regex engine", len(texts), size, pieces)
}

// FuzzSplitLlama3: the pieces are not empty and concatenate to the text,
// and a llama3 tokenizer's ids decode back to it.
func FuzzSplitLlama3(f *testing.F) {
	tok := trainedWith(f, 600, PretokenizerLlama3)
	for _, s := range corpus(3, 11) {
		f.Add(s)
	}
	f.Add("\xff\xfe'S  \t\r\n x_1 = 12345\u00a0é\u0301<|frame_sep|>")
	f.Fuzz(func(t *testing.T, s string) {
		pieces := llama3Pieces(s)
		if strings.Join(pieces, "") != s {
			t.Fatalf("pieces %q of %q do not concatenate back", pieces, s)
		}
		for _, p := range pieces {
			if p == "" {
				t.Fatalf("empty piece in %q", pieces)
			}
		}
		ids := tok.Encode(s)
		if got := tok.Decode(ids); got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("id %d out of range", id)
			}
		}
	})
}

func TestTrainLlama3(t *testing.T) {
	tok := trainedWith(t, 700, PretokenizerLlama3)
	ndb := trained(t, 700)
	if tok.Pretokenizer() != PretokenizerLlama3 || ndb.Pretokenizer() != PretokenizerNDB {
		t.Fatalf("pre-tokenizers %v and %v", tok.Pretokenizer(), ndb.Pretokenizer())
	}
	// The merges are llama3's pieces': no token holds '_' next to a letter,
	// or a line break followed by a space, which ndb's pieces have.
	for id := int32(256); id < tok.specialBase; id++ {
		text := tok.tokens[id]
		if pieces := llama3Pieces(text); len(pieces) != 1 {
			t.Errorf("token %d %q spans llama3 pieces %q", id, text, pieces)
		}
	}
	for _, s := range append(corpus(20, 5), "don't 'S x_1\r\n\t12345 日本\xff") {
		ids := tok.Encode(s)
		if tok.Decode(ids) != s {
			t.Errorf("round trip of %q failed", s)
		}
		// Each piece is encoded on its own: no token crosses two pieces.
		var want []int32
		tok.splitSpecials(s, func(text string, special int32) {
			if special >= 0 {
				want = append(want, special)
				return
			}
			for _, p := range llama3Pieces(text) {
				want = append(want, tok.mergePiece(p)...)
			}
		})
		if !slices.Equal(ids, want) {
			t.Errorf("Encode(%q) = %v, piece by piece %v", s, ids, want)
		}
	}
	// Saved, parsed and exported as tokenizer.json, it keeps its pre-tokenizer.
	own := must(tok.MarshalJSON())
	if !bytes.Contains(own, must(json.Marshal(Llama3Pattern))) {
		t.Errorf("the file does not store Llama3Pattern: %.200s", own)
	}
	back := must(Parse(own))
	hf := must(FromHFJSON(must(tok.HFJSON())))
	for name, b := range map[string]*Tokenizer{"Parse": back, "FromHFJSON": hf} {
		if b.Pretokenizer() != PretokenizerLlama3 || !reflect.DeepEqual(b.tokens, tok.tokens) {
			t.Errorf("%s: pre-tokenizer %v, same tokens %v", name, b.Pretokenizer(), reflect.DeepEqual(b.tokens, tok.tokens))
		}
		for _, s := range corpus(5, 9) {
			if !slices.Equal(b.Encode(s), tok.Encode(s)) {
				t.Errorf("%s: encodes %q differently", name, s)
			}
		}
	}
	// ndb's file is as before: its pattern, no ignore_merges.
	if !bytes.HasPrefix(must(ndb.MarshalJSON()), []byte(`{"format":"ndb-bpe","version":1,"pretokenizer":`+string(must(json.Marshal(PretokenizePattern))))) {
		t.Error("ndb's tokenizer file changed")
	}
	if bytes.Contains(must(ndb.HFJSON()), []byte("ignore_merges")) || !bytes.Contains(must(tok.HFJSON()), []byte(`"ignore_merges": true`)) {
		t.Error("ignore_merges: want it in llama3's tokenizer.json only")
	}
}

// TestLlama3IgnoresMerges: with llama3's pre-tokenizer a piece that is one
// token's text is that token, as in llama.cpp; ndb's merges it. The merges
// are made by hand: "abc" is a token, but merging "abc" gives a + bc.
func TestLlama3IgnoresMerges(t *testing.T) {
	merges := [][2]int32{{'b', 'c'}, {'a', 'b'}, {257, 'c'}} // bc=256, ab=257, abc=258
	for _, c := range []struct {
		pre  Pretokenizer
		want []int32
	}{
		{PretokenizerNDB, []int32{'a', 256}},
		{PretokenizerLlama3, []int32{258}},
	} {
		tok, err := build(merges, nil, c.pre)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode("abc"); !slices.Equal(got, c.want) {
			t.Errorf("%v: Encode(abc) = %v, want %v", c.pre, got, c.want)
		}
		if got := tok.Encode("xabc"); !slices.Equal(got, []int32{'x', 'a', 256}) {
			t.Errorf("%v: Encode(xabc) = %v: a piece that is no token is merged", c.pre, got)
		}
	}
	// A trained tokenizer's tokens merge to themselves, so ignoring merges
	// changes nothing there.
	tok := trainedWith(t, 1000, PretokenizerLlama3)
	for id := int32(256); id < tok.specialBase; id++ {
		if got := tok.mergePiece(tok.tokens[id]); !slices.Equal(got, []int32{id}) {
			t.Errorf("token %d %q merges to %v", id, tok.tokens[id], got)
		}
	}
}

func TestPretokenizerNames(t *testing.T) {
	for _, name := range []string{"ndb", "llama3"} {
		p, err := ParsePretokenizer(name)
		if err != nil || p.String() != name {
			t.Errorf("ParsePretokenizer(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := ParsePretokenizer("gpt2"); err == nil || !strings.Contains(err.Error(), "ndb or llama3") {
		t.Errorf("ParsePretokenizer(gpt2): %v", err)
	}
	// A file or tokenizer.json with another pattern is refused, naming the known ones.
	own := string(must(trained(t, 300).MarshalJSON()))
	other := strings.Replace(own, string(must(json.Marshal(PretokenizePattern))), `"\\s+"`, 1)
	if _, err := Parse([]byte(other)); err == nil || !strings.Contains(err.Error(), `"\\s+"`) || !strings.Contains(err.Error(), "(llama3)") {
		t.Errorf("Parse of another pattern: %v", err)
	}
	hf := string(must(trainedWith(t, 300, PretokenizerLlama3).HFJSON()))
	if _, err := FromHFJSON([]byte(strings.Replace(hf, `"ignore_merges": true,`, "", 1))); err == nil || !strings.Contains(err.Error(), "ignore_merges") {
		t.Errorf("FromHFJSON of llama3 without ignore_merges: %v", err)
	}
	regex := string(must(json.Marshal(Llama3Pattern)))
	if _, err := FromHFJSON([]byte(strings.Replace(hf, regex, `"\\s+"`, 1))); err == nil || !strings.Contains(err.Error(), "not one this ndb implements") {
		t.Errorf("FromHFJSON of another pattern: %v", err)
	}
	if _, err := TrainWith(slices.Values([]string{"x"}), 300, nil, Pretokenizer(9)); err == nil {
		t.Error("TrainWith accepted an unknown pre-tokenizer")
	}
}
