package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// corpus returns n trajectory-like texts in SPEC section 5's format, seeded.
func corpus(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	names := []string{"n", "result", "items", "total", "i", "s", "word", "count", "x_1", "données"}
	var out []string
	for k := 0; k < n; k++ {
		var sb strings.Builder
		fn := names[rng.IntN(len(names))]
		sb.WriteString("<|begin_of_text|><|trace_context_start|>")
		fmt.Fprintf(&sb, "def f(%s):\n    total = 0\n    for i in range(%s):\n        total += i * %d\n    return total\n\ndef main():\n    return f(%d)\n",
			fn, fn, rng.IntN(100), rng.IntN(1000))
		sb.WriteString("<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|>")
		for s := 0; s < 3+rng.IntN(5); s++ {
			fmt.Fprintf(&sb, `<|frame_sep|><|line_sep|><|arg_sep|>{"%s": "%d", "..": ".."}<|src_sep|>        total += i * %d<|action_sep|><|step_over|>`,
				names[rng.IntN(len(names))], rng.IntN(100000), rng.IntN(10))
		}
		fmt.Fprintf(&sb, `<|frame_sep|><|return_sep|><|src_sep|>    return total<|arg_sep|>"%d"<|action_sep|><|continue|>`, rng.IntN(5000))
		sb.WriteString("<|frame_sep|><|exit_normal|><|trace_end|><|end_of_text|>")
		out = append(out, sb.String())
	}
	return out
}

func trained(t testing.TB, vocab int) *Tokenizer { return trainedWith(t, vocab, PretokenizerNDB) }

func trainedWith(t testing.TB, vocab int, pre Pretokenizer) *Tokenizer {
	t.Helper()
	tok, err := TrainWith(slices.Values(corpus(300, 7)), vocab, SpecialTokens, pre)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestPretokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"def main():", []string{"def", " main", "():"}},
		{"    return f(5)", []string{"   ", " return", " f", "(", "5", ")"}},
		{"n == 10 + x1", []string{"n", " ==", " 10", " +", " x1"}},
		{"\n        total += i", []string{"\n        ", "total", " +=", " i"}},
		{"x\n\n  \n y", []string{"x", "\n\n  ", "\n ", "y"}},
		{"x = 1234567", []string{"x", " =", " 123", "456", "7"}},
		{"x =  42", []string{"x", " =", " ", " 42"}},
		{`{"n": "5"}`, []string{`{"`, "n", `":`, ` "`, "5", `"}`}},
		{"a  \n\tb", []string{"a", "  ", "\n\t", "b"}},
		{"x_1 _y2", []string{"x_1", " _y2"}},
		{"trailing   ", []string{"trailing", "   "}},
		{"\r\n\r\nx", []string{"\r\n\r\n", "x"}},
		{"é ü ½", []string{"é", " ü", " ½"}}, // ½ is \p{N}
		{"a\xffb \xfe", []string{"a", "\xff", "b", " \xfe"}},
		{" \u00a0x", []string{" ", "\u00a0", "x"}},
	}
	for _, c := range cases {
		var got []string
		splitPretokens(c.in, func(p string) { got = append(got, p) })
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitPretokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	tok := trained(t, 600)
	inputs := append(corpus(5, 99),
		"", "a", "\x00\x01\xff\xfe", "invalid \xc3\x28 utf8 \xe2\x82", "日本語のテキスト 🙂🙂",
		strings.Repeat(" ", 5000)+"x", strings.Repeat("ab", 3000),
		"<|frame_sep", "<|frame_sep|", "<<|frame_sep|>|>", "text<|unknown|>text",
	)
	for _, s := range inputs {
		if got := tok.Decode(tok.Encode(s)); got != s {
			t.Errorf("round trip of %q gave %q", s, got)
		}
		if got := tok.Decode(tok.EncodeOrdinary(s)); got != s {
			t.Errorf("ordinary round trip of %q gave %q", s, got)
		}
	}
}

func TestSpecialsAtomic(t *testing.T) {
	tok := trained(t, 600)
	if tok.VocabSize() != 600 {
		t.Fatalf("vocab size %d, want 600", tok.VocabSize())
	}
	for _, s := range SpecialTokens {
		id, ok := tok.SpecialID(s)
		if !ok || !tok.IsSpecial(id) {
			t.Fatalf("%s has no special id", s)
		}
		for _, ctx := range []string{"%s", "x%sy", " %s ", "<|%s|>", "%s%s"} {
			text := strings.ReplaceAll(ctx, "%s", s)
			ids := tok.Encode(text)
			if n := strings.Count(text, s); countID(ids, id) != n {
				t.Errorf("Encode(%q) = %v: %s should appear %d times as id %d", text, ids, s, n, id)
			}
			for _, other := range ids {
				if other != id && tok.IsSpecial(other) {
					t.Errorf("Encode(%q) has stray special %d", text, other)
				}
			}
		}
		if ids := tok.EncodeOrdinary(s); countID(ids, id) != 0 {
			t.Errorf("EncodeOrdinary(%q) produced the special id", s)
		}
	}
	// Merges never reach into special tokens' text.
	for id := int32(256); id < int32(tok.VocabSize()); id++ {
		text, _ := tok.Token(id)
		if !tok.IsSpecial(id) && (strings.Contains(text, "<|") || strings.Contains(text, "|>")) {
			t.Errorf("merged token %d %q crosses a special token", id, text)
		}
	}
}

func countID(ids []int32, id int32) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

func TestTrainDeterministic(t *testing.T) {
	texts := corpus(300, 7)
	a, err := Train(slices.Values(texts), 500, SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
	b, err := Train(slices.Values(texts), 500, SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.merges, b.merges) || !reflect.DeepEqual(a.tokens, b.tokens) {
		t.Fatal("training on the same texts in another order gave other merges")
	}
}

// TestTrainKnownMerges checks the merge order on a corpus small enough to
// count by hand: "aaab" x3 and "ab" x2 hold (a,a) 6 times and (a,b) 5 times.
func TestTrainKnownMerges(t *testing.T) {
	texts := []string{"aaab aaab aaab", "ab ab"}
	// Pieces: "aaab" x1, " aaab" x2, "ab" x1, " ab" x1.
	tok, err := Train(slices.Values(texts), 256+3, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range tok.merges {
		got = append(got, tok.tokens[m[0]]+"+"+tok.tokens[m[1]])
	}
	// (a,b): 3 in aaab-pieces + 2 = 5; (a,a): 2 per aaab-piece x3 = 6 -> "aa" first.
	// Then words: [aa a b] x3 -> (aa,a)=3, (a,b)=5 -> "ab"; then ( ,ab)=... counts:
	// " ab": (" ",ab)=1, " aaab" x2: (" ",aa)=2, (aa,ab)=3 -> "aaab"? no: (aa,ab) is 3.
	want := []string{"a+a", "a+b", "aa+ab"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merges %q, want %q", got, want)
	}
	if ids := tok.Encode("aaab"); len(ids) != 1 {
		t.Fatalf("Encode(aaab) = %v, want one token", ids)
	}
}

// naiveMerge is the textbook BPE encoder: merge the lowest-ranked pair,
// leftmost, until none is left.
func naiveMerge(t *Tokenizer, piece string) []int32 {
	ids := make([]int32, len(piece))
	for i := range ids {
		ids[i] = int32(piece[i])
	}
	for {
		best, at := int32(-1), -1
		for i := 0; i+1 < len(ids); i++ {
			if m, ok := t.ranks[pairKey(ids[i], ids[i+1])]; ok && (best < 0 || m.rank < best) {
				best, at = m.rank, i
			}
		}
		if at < 0 {
			return ids
		}
		m := t.ranks[pairKey(ids[at], ids[at+1])]
		ids = append(ids[:at], append([]int32{m.id}, ids[at+2:]...)...)
	}
}

func TestMergeMatchesNaive(t *testing.T) {
	tok := trained(t, 800)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "aeiountlrs _=+()0123456789\"'{}:"
	for range 3000 {
		b := make([]byte, 1+rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := tok.mergePiece(string(b)), naiveMerge(tok, string(b)); !slices.Equal(got, want) {
			t.Fatalf("mergePiece(%q) = %v, naive gives %v", b, got, want)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	tok := trained(t, 700)
	path := filepath.Join(t.TempDir(), "tok.json")
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.tokens, tok.tokens) || !reflect.DeepEqual(back.merges, tok.merges) {
		t.Fatal("loaded tokenizer differs")
	}
	for _, s := range corpus(20, 5) {
		if !slices.Equal(back.Encode(s), tok.Encode(s)) {
			t.Fatalf("loaded tokenizer encodes %q differently", s)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"not json":      `{`,
		"wrong format":  `{"format":"gpt2","version":1,"pretokenizer":"","specials":[],"merges":[]}`,
		"wrong version": `{"format":"ndb-bpe","version":9,"pretokenizer":"","specials":[],"merges":[]}`,
		"bad merge id":  fmt.Sprintf(`{"format":"ndb-bpe","version":1,"pretokenizer":%q,"specials":[],"merges":[[1,900]]}`, PretokenizePattern),
		"dup special":   fmt.Sprintf(`{"format":"ndb-bpe","version":1,"pretokenizer":%q,"specials":["<|a|>","<|a|>"],"merges":[]}`, PretokenizePattern),
		"unknown field": fmt.Sprintf(`{"format":"ndb-bpe","version":1,"pretokenizer":%q,"specials":[],"merges":[],"x":1}`, PretokenizePattern),
	}
	for name, data := range cases {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s: Parse accepted %s", name, data)
		}
	}
}

func TestHFJSONRoundTrip(t *testing.T) {
	tok := trained(t, 700)
	data, err := tok.HFJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromHFJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.tokens, tok.tokens) || !reflect.DeepEqual(back.merges, tok.merges) {
		t.Fatal("tokenizer.json round trip changed the tokenizer")
	}
	// A vocab entry moved to another id is refused.
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	vocab := doc["model"].(map[string]any)["vocab"].(map[string]any)
	vocab["!"], vocab["\""] = vocab["\""], vocab["!"]
	broken, _ := json.Marshal(doc)
	if _, err := FromHFJSON(broken); err == nil {
		t.Error("FromHFJSON accepted a vocab with swapped ids")
	}
	// Another pre-tokenizer is refused.
	other := bytes.Replace(data, []byte(`"Isolated"`), []byte(`"Removed"`), 1)
	other = bytes.Replace(other, []byte(`"type": "Split"`), []byte(`"type": "Whitespace"`), 1)
	if _, err := FromHFJSON(other); err == nil {
		t.Error("FromHFJSON accepted another pre-tokenizer")
	}
}

func TestByteLevelTable(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		r := byteToRune[b]
		if seen[r] || !utf8.ValidRune(r) {
			t.Fatalf("byte %d maps to %U twice or invalid", b, r)
		}
		seen[r] = true
	}
	// GPT-2's table: space is U+0120 'Ġ', newline U+010A 'Ċ'.
	if byteToRune[' '] != 'Ġ' || byteToRune['\n'] != 'Ċ' || byteToRune['A'] != 'A' {
		t.Fatalf("table differs from GPT-2's: space %U newline %U", byteToRune[' '], byteToRune['\n'])
	}
}

func FuzzRoundTrip(f *testing.F) {
	tok := trained(f, 600)
	for _, s := range corpus(3, 11) {
		f.Add(s)
	}
	f.Add("\xff\xfe<|frame_sep|>  \t\n x = 12345")
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		if got := tok.Decode(ids); got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("id %d out of range", id)
			}
		}
		var pieces []string
		splitPretokens(s, func(p string) { pieces = append(pieces, p) })
		if strings.Join(pieces, "") != s {
			t.Fatalf("pieces of %q do not concatenate back", s)
		}
	})
}

func BenchmarkTrain(b *testing.B) {
	texts := corpus(5000, 1)
	size := 0
	for _, s := range texts {
		size += len(s)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		if _, err := Train(slices.Values(texts), 4096, SpecialTokens); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	texts := corpus(2000, 2)
	size := 0
	for _, s := range texts {
		size += len(s)
	}
	for _, pre := range []Pretokenizer{PretokenizerNDB, PretokenizerLlama3} {
		b.Run(pre.String(), func(b *testing.B) {
			tok := trainedWith(b, 2048, pre)
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, s := range texts {
					tok.Encode(s)
				}
			}
		})
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }

// BenchmarkEncodeCorpus encodes a real corpus with a tokenizer trained on it:
// NDB_BENCH_CORPUS=DIR|FILE go test -bench EncodeCorpus ./model/tokenizer
func BenchmarkEncodeCorpus(b *testing.B) {
	path := os.Getenv("NDB_BENCH_CORPUS")
	if path == "" {
		b.Skip("set NDB_BENCH_CORPUS to a corpus folder or file")
	}
	files, err := CorpusFiles(path)
	if err != nil {
		b.Fatal(err)
	}
	var readErr error
	texts := slices.Collect(Texts(files, &readErr))
	if readErr != nil {
		b.Fatal(readErr)
	}
	tok, err := Train(slices.Values(texts), 4096, SpecialTokens)
	if err != nil {
		b.Fatal(err)
	}
	size, tokens := 0, 0
	for _, s := range texts {
		size += len(s)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		tokens = 0
		for _, s := range texts {
			tokens += len(tok.Encode(s))
		}
	}
	b.ReportMetric(float64(size)/float64(tokens), "bytes/token")
}

func TestConcurrentEncode(t *testing.T) {
	tok := trained(t, 600)
	texts := corpus(40, 21)
	want := make([][]int32, len(texts))
	for i, s := range texts {
		want[i] = slices.Clone(tok.Encode(s))
	}
	fresh, err := Parse(must(tok.MarshalJSON())) // an empty cache, filled concurrently
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for k := range texts {
				i := (k + g*10) % len(texts)
				if got := fresh.Encode(texts[i]); !slices.Equal(got, want[i]) {
					errs <- fmt.Errorf("goroutine %d: text %d encodes differently", g, i)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// FuzzParse feeds arbitrary bytes to both tokenizer file readers: an error
// or a tokenizer that round-trips, never a panic.
func FuzzParse(f *testing.F) {
	tok := trained(f, 300)
	own, _ := tok.MarshalJSON()
	hf, _ := tok.HFJSON()
	f.Add(own)
	f.Add(hf)
	l3 := trainedWith(f, 300, PretokenizerLlama3)
	f.Add(must(l3.MarshalJSON()))
	f.Add(must(l3.HFJSON()))
	f.Add([]byte(`{"format":"ndb-bpe","version":1,"merges":[[0,0],[256,256]],"specials":["<|x|>"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) (*Tokenizer, error){Parse, FromHFJSON} {
			got, err := parse(data)
			if err != nil {
				continue
			}
			s := "def f(x):\n    return x + 1<|x|>"
			if got.Decode(got.Encode(s)) != s {
				t.Fatalf("a parsed tokenizer does not round-trip")
			}
		}
	})
}
