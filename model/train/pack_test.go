package train

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ndb/format"
	"ndb/model/train/synthtext"
)

// byteTokenizer is the simplest tokenizer the Tokenizer interface allows:
// one id per byte, then the special tokens as atomic ids. It lets packing be
// tested independently of BPE.
type byteTokenizer struct{ specials []string }

func newByteTokenizer() *byteTokenizer {
	return &byteTokenizer{specials: []string{"<|begin_of_text|>", "<|end_of_text|>", "<|trace_context_start|>",
		"<|frame_sep|>", "<|call_sep|>", "<|line_sep|>", "<|return_sep|>", "<|src_sep|>", "<|arg_sep|>",
		"<|action_sep|>", "<|step_into|>", "<|step_over|>", "<|step_return|>", "<|continue|>",
		"<|exit_normal|>", "<|trace_end|>"}}
}

func (b *byteTokenizer) VocabSize() int   { return 256 + len(b.specials) }
func (b *byteTokenizer) Checksum() string { return "byte-tokenizer-v1" }
func (b *byteTokenizer) SpecialID(name string) (int32, bool) {
	for i, s := range b.specials {
		if s == name {
			return int32(256 + i), true
		}
	}
	return 0, false
}
func (b *byteTokenizer) Encode(text string) []int32 {
	var ids []int32
	for len(text) > 0 {
		matched := false
		for i, s := range b.specials {
			if strings.HasPrefix(text, s) {
				ids = append(ids, int32(256+i))
				text = text[len(s):]
				matched = true
				break
			}
		}
		if !matched {
			ids = append(ids, int32(text[0]))
			text = text[1:]
		}
	}
	return ids
}

func TestPackSplitsByProgram(t *testing.T) {
	data := writeShards(t, 40, 3)
	out := t.TempDir()
	tok := newByteTokenizer()
	meta, err := Pack(data, out, tok, PackOptions{ValPercent: 20})
	if err != nil {
		t.Fatal(err)
	}
	if meta.TrainDocs+meta.ValDocs != 120 || meta.TrainPrograms+meta.ValPrograms != 40 {
		t.Fatalf("docs/programs not all packed: %+v", meta)
	}
	if meta.ValPrograms == 0 || meta.TrainPrograms == 0 {
		t.Fatalf("split is one-sided: %+v", meta)
	}
	// Every trajectory of a program goes to one side: 3 docs per program.
	if meta.ValDocs != 3*meta.ValPrograms {
		t.Fatalf("a held-out program leaked into training: %d val docs for %d programs", meta.ValDocs, meta.ValPrograms)
	}
	p, err := LoadPacked(out)
	if err != nil {
		t.Fatal(err)
	}
	eot, _ := tok.SpecialID(EndOfText)
	countEOT := func(ids []uint32) (n int) {
		for _, id := range ids {
			if int32(id) == eot {
				n++
			}
		}
		return
	}
	if countEOT(p.Train) != meta.TrainDocs || countEOT(p.Val) != meta.ValDocs {
		t.Fatalf("documents do not each end with %s", EndOfText)
	}
	if int32(p.Train[len(p.Train)-1]) != eot {
		t.Fatal("train.bin does not end with end_of_text")
	}
	// Same input, same bytes.
	out2 := t.TempDir()
	if _, err := Pack(data, out2, tok, PackOptions{ValPercent: 20}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"train.bin", "val.bin", "meta.json"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join(out2, f))
		if string(a) != string(b) {
			t.Fatalf("%s differs between two packs of the same data", f)
		}
	}
}

func TestSplitKey(t *testing.T) {
	for id, want := range map[string]string{
		"mbppplus/Mbpp_2/17":      "mbppplus/Mbpp_2",
		"synth/1/42/3":            "synth/1/42",
		"humaneval/HumanEval/0/2": "humaneval/HumanEval/0",
		"synth/5":                 "synth/5",
		"dir/sub/a.py":            "dir/sub/a.py",
		"a/b/":                    "a/b/",
		"plain":                   "plain",
	} {
		if got := SplitKey(id); got != want {
			t.Errorf("SplitKey(%q) = %q, want %q", id, got, want)
		}
	}
	// All inputs of a function fall on one side.
	programs := map[string]bool{}
	for f := 0; f < 50; f++ {
		for in := 0; in < 4; in++ {
			programs[fmt.Sprintf("src/f%d/%d", f, in)] = true
		}
	}
	held := splitPrograms(programs, 20)
	for p := range programs {
		if held[p] != held[SplitKey(p)+"/0"] {
			t.Fatalf("inputs of %s split across train and validation", SplitKey(p))
		}
	}
	if len(held) == 0 || len(held) == len(programs) {
		t.Fatalf("one-sided split: %d of %d held out", len(held), len(programs))
	}
}

func TestPackTinyDataStillValidates(t *testing.T) {
	data := writeShards(t, 2, 1)
	meta, err := Pack(data, t.TempDir(), newByteTokenizer(), PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if meta.ValPrograms != 1 || meta.TrainPrograms != 1 {
		t.Fatalf("two programs should split one/one: %+v", meta)
	}
}

func TestPackBadData(t *testing.T) {
	tok := newByteTokenizer()
	empty := t.TempDir()
	notJSON := t.TempDir()
	os.WriteFile(filepath.Join(notJSON, "a.jsonl"), []byte("{\"text\": \"x\", \"program_id\": \"p\"}\nnot json\n"), 0o644)
	noProgram := t.TempDir()
	os.WriteFile(filepath.Join(noProgram, "a.jsonl"), []byte("{\"text\": \"x\"}\n"), 0o644)
	file := filepath.Join(t.TempDir(), "f.jsonl")
	os.WriteFile(file, []byte("{}"), 0o644)
	for _, tc := range []struct{ name, dir, want string }{
		{"missing", filepath.Join(empty, "nope"), "no such file"},
		{"empty", empty, "no .jsonl shards"},
		{"not a dir", file, "not a directory"},
		{"bad line", notJSON, "a.jsonl:2: not a trajectory"},
		{"no program id", noProgram, "no \"program_id\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Pack(tc.dir, t.TempDir(), tok, PackOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadPackedRejectsCorruptFiles(t *testing.T) {
	out := t.TempDir()
	if _, err := Pack(writeShards(t, 4, 1), out, newByteTokenizer(), PackOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "train.bin"))
	os.WriteFile(filepath.Join(out, "train.bin"), b[:len(b)-2], 0o644)
	if _, err := LoadPacked(out); err == nil || !strings.Contains(err.Error(), "meta.json says") {
		t.Fatalf("truncated train.bin: got %v", err)
	}
	binary.LittleEndian.PutUint32(b[0:], 1<<20)
	os.WriteFile(filepath.Join(out, "train.bin"), b, 0o644)
	if _, err := LoadPacked(out); err == nil || !strings.Contains(err.Error(), "outside the vocabulary") {
		t.Fatalf("out-of-vocabulary id: got %v", err)
	}
}

// TestSplitMix64Reference pins the generator to the published SplitMix64
// outputs for seed 0 (Vigna's splitmix64.c), which the PyTorch trainer
// reproduces.
func TestSplitMix64Reference(t *testing.T) {
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	for k, w := range want {
		if got := SplitMix64(0, uint64(k+1)); got != w {
			t.Fatalf("SplitMix64(0, %d) = %#x, want %#x", k+1, got, w)
		}
	}
}

func TestBatchOffsets(t *testing.T) {
	offs, err := BatchOffsets(7, 3, 4, 16, 100)
	if err != nil {
		t.Fatal(err)
	}
	for b, off := range offs {
		if want := int(SplitMix64(7, uint64(3*4+b+1)) % 84); off != want || off+17 > 100 {
			t.Fatalf("row %d: offset %d, want %d", b, off, want)
		}
	}
	if _, err := BatchOffsets(7, 0, 4, 16, 16); !errors.Is(err, ErrTooShort) {
		t.Fatalf("16 tokens for a window of 17: got %v", err)
	}
	tokens := make([]uint32, 40)
	for i := range tokens {
		tokens[i] = uint32(i)
	}
	in, tg := make([]int32, 2*4), make([]int32, 2*4)
	FillBatch(tokens, nil, []int{3, 30}, 4, in, tg)
	if in[0] != 3 || tg[0] != 4 || in[4] != 30 || tg[7] != 34 {
		t.Fatalf("FillBatch: inputs %v targets %v", in, tg)
	}
	if got := ValOffsets(33, 8, 0); len(got) != 4 || got[3] != 24 {
		t.Fatalf("ValOffsets(33, 8) = %v", got)
	}
	if got := ValOffsets(33, 8, 2); len(got) != 2 {
		t.Fatalf("ValOffsets capped at 2 = %v", got)
	}
}

func TestAlignedOffsets(t *testing.T) {
	const bos = 9
	// Three documents; the last one's window would run past the end.
	tokens := []uint32{bos, 1, 2, 3, bos, 4, 5, 6, 7, bos, 8}
	starts := DocStarts(tokens, bos, 4)
	if !slices.Equal(starts, []int{0, 4}) {
		t.Fatalf("DocStarts = %v, want [0 4]", starts)
	}
	offs, err := AlignedOffsets(7, 3, 5, starts)
	if err != nil {
		t.Fatal(err)
	}
	for b, off := range offs {
		want := starts[SplitMix64(7, uint64(3*5+b+1))%2]
		if off != want || tokens[off] != bos {
			t.Errorf("row %d: offset %d, want %d at a document start", b, off, want)
		}
	}
	if _, err := AlignedOffsets(7, 0, 2, nil); !errors.Is(err, ErrTooShort) {
		t.Errorf("no starts: err = %v, want ErrTooShort", err)
	}
}

// TestFrameTargets packs two trajectories (forward and inverse) as Pack
// does and checks that the marked tokens spell exactly the frames a model
// writes, FrameText of each, and nothing of the programs or the actions.
func TestFrameTargets(t *testing.T) {
	tok := newByteTokenizer()
	id := func(s string) uint32 { v, _ := tok.SpecialID(s); return uint32(v) }
	ft := FrameTokens{BOS: id("<|begin_of_text|>"), FrameSep: id("<|frame_sep|>"), ActionSep: id("<|action_sep|>")}
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{synthtext.Forward(rng, 1, 5), synthtext.Inverse(2, 4)}
	var stream []uint32
	var want strings.Builder
	for _, text := range texts {
		tr, err := format.ParseTrajectory(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range tr.Frames {
			want.WriteString(format.FrameText(f))
		}
		for _, v := range tok.Encode(text) {
			stream = append(stream, uint32(v))
		}
	}
	mask := FrameTargets(stream, ft)
	var got strings.Builder
	for i, v := range stream {
		if !mask[i] {
			continue
		}
		if v < 256 {
			got.WriteByte(byte(v))
		} else {
			got.WriteString(tok.specials[v-256])
		}
	}
	if got.String() != want.String() {
		t.Fatalf("marked tokens:\n%s\nwant the frames:\n%s", got.String(), want.String())
	}
	if got.Len() == 0 || strings.Contains(got.String(), "<|trace_context_start|>") || strings.Contains(got.String(), "<|step_") {
		t.Fatalf("marked text holds program or action text: %q", got.String())
	}

	in, tg := make([]int32, 16), make([]int32, 16)
	FillBatch(stream, mask, []int{0}, 16, in, tg)
	for i := range tg {
		if mask[i+1] != (tg[i] >= 0) {
			t.Fatalf("target %d: mask %v, target %d", i, mask[i+1], tg[i])
		}
	}
}
