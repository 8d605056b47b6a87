// Package train packs `ndb gen` trajectories into token files and trains the
// network on them: AdamW with warmup and cosine decay, validation on held-out
// programs, checkpoints that resume exactly, a loss log and a curve plot.
//
// The packed format and the batch-sampling algorithm are specified in
// docs/training.md precisely enough for the PyTorch trainer to reproduce them
// bit for bit; change them only together with that page.
package train

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ndb/model/nn"
)

// EndOfText is the special token that ends every packed document.
const EndOfText = "<|end_of_text|>"

// PackFormat names the version of the packed layout written in meta.json.
const PackFormat = "ndb-packed-v1"

// DefaultValPercent is the share of programs held out for validation.
const DefaultValPercent = 5

// Tokenizer is what packing needs from a tokenizer; TokenizerOf adapts a
// *tokenizer.Tokenizer.
type Tokenizer interface {
	// Encode turns text into token ids; special tokens are atomic.
	Encode(text string) []int32
	// VocabSize is the number of token ids.
	VocabSize() int
	// SpecialID is the id of a special token such as "<|end_of_text|>".
	SpecialID(name string) (int32, bool)
	// Checksum identifies the tokenizer (hex SHA-256 of its saved form).
	Checksum() string
}

// Trajectory is one line of an `ndb gen` shard; only the fields packing
// needs are decoded.
type Trajectory struct {
	Text      string `json:"text"`
	ProgramID string `json:"program_id"`
	Direction string `json:"direction,omitempty"`
	Source    string `json:"source,omitempty"`
}

// Meta is meta.json of a packed directory.
type Meta struct {
	Format          string   `json:"format"`
	DType           string   `json:"dtype"`
	VocabSize       int      `json:"vocab_size"`
	TokenizerSHA256 string   `json:"tokenizer_sha256"`
	EndOfTextID     int32    `json:"end_of_text_id"`
	ValPercent      int      `json:"val_percent"`
	TrainTokens     int64    `json:"train_tokens"`
	ValTokens       int64    `json:"val_tokens"`
	TrainDocs       int      `json:"train_docs"`
	ValDocs         int      `json:"val_docs"`
	TrainPrograms   int      `json:"train_programs"`
	ValPrograms     int      `json:"val_programs"`
	Shards          []string `json:"shards"`
	ShardDigest     string   `json:"shard_digest"` // ShardDigest of the data dir: names, sizes, mtimes
}

// PackOptions tunes Pack.
type PackOptions struct {
	// ValPercent of programs (by ProgramHash) go to val.bin; 0 means
	// DefaultValPercent, negative means none.
	ValPercent int
}

// SplitKey is the unit of the train/validation split for a program id:
// the id without a final numeric component (the input number of `ndb gen`
// ids such as mbppplus/Mbpp_2/17 or synth/1/42/3) when at least two
// components remain. All inputs of one function land on the same side, so
// validation programs are functions never seen in training.
func SplitKey(programID string) string {
	i := strings.LastIndexByte(programID, '/')
	if i < 0 || !strings.Contains(programID[:i], "/") || i+1 == len(programID) {
		return programID
	}
	for _, c := range programID[i+1:] {
		if c < '0' || c > '9' {
			return programID
		}
	}
	return programID[:i]
}

// ProgramHash is the 64-bit FNV-1a hash of a program's SplitKey; a program
// is held out for validation when ProgramHash(id) % 100 < ValPercent.
func ProgramHash(programID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(SplitKey(programID)))
	return h.Sum64()
}

// ShardFiles lists the shards of a data directory: every *.jsonl and
// *.jsonl.gz file in it or below it, sorted by path (the packing order).
func ShardFiles(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("data dir %s is not a directory", dir)
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".jsonl.gz")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("data dir %s holds no .jsonl shards (write them with `ndb gen`)", dir)
	}
	return files, nil
}

// ShardDigest identifies the shards of a data directory by their relative
// paths, sizes and modification times (hex SHA-256), so a pack can be
// reused while the shards are unchanged.
func ShardDigest(dir string) (string, error) {
	files, err := ShardFiles(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", rel, st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ReadShards calls fn for every trajectory of the shards of dir, in packing
// order. A line that is not a trajectory is an error naming file and line.
func ReadShards(dir string, fn func(Trajectory) error) ([]string, error) {
	files, err := ShardFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := readShard(f, fn); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func readShard(path string, fn func(Trajectory) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var t Trajectory
		if err := json.Unmarshal(b, &t); err != nil {
			return fmt.Errorf("%s:%d: not a trajectory: %w", path, line, err)
		}
		if t.Text == "" {
			return fmt.Errorf("%s:%d: trajectory has no \"text\"", path, line)
		}
		if t.ProgramID == "" {
			return fmt.Errorf("%s:%d: trajectory has no \"program_id\" (needed to hold programs out)", path, line)
		}
		if err := fn(t); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Pack tokenizes the shards of dataDir into outDir/train.bin, val.bin and
// meta.json. Programs are split by ProgramHash; if that puts every program
// on one side while there are at least two, the program with the smallest
// hash (all of its inputs) goes to validation, so tiny data sets still
// validate.
func Pack(dataDir, outDir string, tok Tokenizer, opt PackOptions) (*Meta, error) {
	valPct := opt.ValPercent
	if valPct == 0 {
		valPct = DefaultValPercent
	}
	if valPct < 0 {
		valPct = 0
	}
	eot, ok := tok.SpecialID(EndOfText)
	if !ok {
		return nil, fmt.Errorf("tokenizer has no %s token", EndOfText)
	}
	// First pass: the programs, to settle the split before writing.
	programs := map[string]bool{}
	if _, err := ReadShards(dataDir, func(t Trajectory) error {
		programs[t.ProgramID] = true
		return nil
	}); err != nil {
		return nil, err
	}
	heldOut := splitPrograms(programs, valPct)

	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	train, err := newTokenWriter(filepath.Join(outDir, "train.bin"))
	if err != nil {
		return nil, err
	}
	defer train.abort()
	val, err := newTokenWriter(filepath.Join(outDir, "val.bin"))
	if err != nil {
		return nil, err
	}
	defer val.abort()

	meta := &Meta{Format: PackFormat, DType: "uint32le", VocabSize: tok.VocabSize(),
		TokenizerSHA256: tok.Checksum(), EndOfTextID: eot, ValPercent: valPct}
	if meta.ShardDigest, err = ShardDigest(dataDir); err != nil {
		return nil, err
	}
	vocab := tok.VocabSize()
	shards, err := ReadShards(dataDir, func(t Trajectory) error {
		ids := tok.Encode(t.Text)
		if len(ids) == 0 || ids[len(ids)-1] != eot {
			ids = append(ids, eot)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= vocab {
				return fmt.Errorf("token id %d outside the vocabulary (%d)", id, vocab)
			}
		}
		w := train
		if heldOut[t.ProgramID] {
			w = val
			meta.ValDocs++
		} else {
			meta.TrainDocs++
		}
		return w.write(ids)
	})
	if err != nil {
		return nil, err
	}
	meta.Shards = make([]string, len(shards))
	for i, s := range shards {
		meta.Shards[i], _ = filepath.Rel(dataDir, s)
	}
	for p := range programs {
		if heldOut[p] {
			meta.ValPrograms++
		} else {
			meta.TrainPrograms++
		}
	}
	if meta.TrainPrograms == 0 {
		return nil, fmt.Errorf("no training programs left after holding out %d%%", valPct)
	}
	if meta.TrainTokens, err = train.close(); err != nil {
		return nil, err
	}
	if meta.ValTokens, err = val.close(); err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := os.WriteFile(filepath.Join(outDir, "meta.json"), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	return meta, nil
}

func splitPrograms(programs map[string]bool, valPct int) map[string]bool {
	heldOut := map[string]bool{}
	if valPct == 0 {
		return heldOut
	}
	keys := map[string]bool{}
	minKey, minHash := "", uint64(0)
	for p := range programs {
		k := SplitKey(p)
		keys[k] = true
		h := ProgramHash(p)
		if h%100 < uint64(valPct) {
			heldOut[p] = true
		}
		if minKey == "" || h < minHash || (h == minHash && k < minKey) {
			minKey, minHash = k, h
		}
	}
	if len(keys) >= 2 && (len(heldOut) == 0 || len(heldOut) == len(programs)) {
		heldOut = map[string]bool{}
		for p := range programs {
			if SplitKey(p) == minKey {
				heldOut[p] = true
			}
		}
	}
	return heldOut
}

// tokenWriter writes uint32 little-endian ids to a temporary file and
// renames it into place on close, so an interrupted pack leaves no
// half-written .bin behind.
type tokenWriter struct {
	path string
	f    *os.File
	w    *bufio.Writer
	n    int64
	done bool
}

func newTokenWriter(path string) (*tokenWriter, error) {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return nil, err
	}
	return &tokenWriter{path: path, f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (t *tokenWriter) write(ids []int32) error {
	var b [4]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint32(b[:], uint32(id))
		if _, err := t.w.Write(b[:]); err != nil {
			return err
		}
	}
	t.n += int64(len(ids))
	return nil
}

func (t *tokenWriter) close() (int64, error) {
	if err := t.w.Flush(); err != nil {
		return 0, err
	}
	if err := t.f.Close(); err != nil {
		return 0, err
	}
	t.done = true
	return t.n, os.Rename(t.path+".tmp", t.path)
}

func (t *tokenWriter) abort() {
	if !t.done {
		t.f.Close()
		os.Remove(t.path + ".tmp")
	}
}

// Packed is a packed directory loaded into memory.
type Packed struct {
	Meta  Meta
	Train []uint32
	Val   []uint32
	// TrainFrames and ValFrames are FrameTargets of Train and Val, set by
	// MarkFrames; `--loss-on frames` trains on the marked targets only.
	TrainFrames, ValFrames []bool
}

// MarkFrames sets TrainFrames and ValFrames.
func (p *Packed) MarkFrames(ft FrameTokens) {
	p.TrainFrames, p.ValFrames = FrameTargets(p.Train, ft), FrameTargets(p.Val, ft)
}

// LoadPacked reads a directory written by Pack and checks it against meta.json.
func LoadPacked(dir string) (*Packed, error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, fmt.Errorf("packed data: %w", err)
	}
	var p Packed
	if err := json.Unmarshal(b, &p.Meta); err != nil {
		return nil, fmt.Errorf("packed data: meta.json: %w", err)
	}
	if p.Meta.Format != PackFormat {
		return nil, fmt.Errorf("packed data: format %q, want %q", p.Meta.Format, PackFormat)
	}
	if p.Train, err = readTokens(filepath.Join(dir, "train.bin"), p.Meta.TrainTokens, p.Meta.VocabSize); err != nil {
		return nil, err
	}
	if p.Val, err = readTokens(filepath.Join(dir, "val.bin"), p.Meta.ValTokens, p.Meta.VocabSize); err != nil {
		return nil, err
	}
	return &p, nil
}

func readTokens(path string, want int64, vocab int) ([]uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("packed data: %w", err)
	}
	if int64(len(b)) != 4*want {
		return nil, fmt.Errorf("packed data: %s has %d bytes, meta.json says %d tokens", path, len(b), want)
	}
	ids := make([]uint32, want)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint32(b[4*i:])
		if int(ids[i]) >= vocab {
			return nil, fmt.Errorf("packed data: %s: token %d at %d outside the vocabulary (%d)", path, ids[i], i, vocab)
		}
	}
	return ids, nil
}

// ErrTooShort says a token stream cannot hold one window of T+1 tokens.
var ErrTooShort = errors.New("too few tokens for one window")

// SplitMix64 returns the k-th output (k >= 1) of the SplitMix64 generator
// seeded with seed: mix(seed + k*0x9E3779B97F4A7C15). It is stateless, so a
// batch depends only on (seed, step, row) and resuming needs no RNG state.
func SplitMix64(seed, k uint64) uint64 {
	z := seed + k*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// BatchOffsets gives the window starts of training batch `step` (0-based):
// row b starts at SplitMix64(seed, step*B+b+1) % (N-T), where N is the
// number of training tokens; the window is tokens[off : off+T+1], inputs its
// first T tokens and targets its last T.
func BatchOffsets(seed uint64, step, batch, seq int, n int) ([]int, error) {
	if n < seq+1 {
		return nil, fmt.Errorf("%w: %d tokens, window %d", ErrTooShort, n, seq+1)
	}
	offs := make([]int, batch)
	span := uint64(n - seq)
	for b := range offs {
		offs[b] = int(SplitMix64(seed, uint64(step)*uint64(batch)+uint64(b)+1) % span)
	}
	return offs, nil
}

// DocStarts lists the positions of bos in tokens (the starts of the packed
// documents) whose window of seq+1 tokens fits.
func DocStarts(tokens []uint32, bos uint32, seq int) []int {
	var starts []int
	for i := 0; i+seq+1 <= len(tokens); i++ {
		if tokens[i] == bos {
			starts = append(starts, i)
		}
	}
	return starts
}

// AlignedOffsets is BatchOffsets for --align: row b starts at the document
// start starts[SplitMix64(seed, step*B+b+1) % len(starts)], so each window
// holds its trajectory's source code before the frames it trains on.
func AlignedOffsets(seed uint64, step, batch int, starts []int) ([]int, error) {
	if len(starts) == 0 {
		return nil, fmt.Errorf("%w: no document start leaves a full window", ErrTooShort)
	}
	offs := make([]int, batch)
	for b := range offs {
		offs[b] = starts[SplitMix64(seed, uint64(step)*uint64(batch)+uint64(b)+1)%uint64(len(starts))]
	}
	return offs, nil
}

// FillBatch copies the windows at offs into inputs and targets (B*T each,
// row-major). With a mask (see FrameTargets), a target whose token is not
// marked is nn.IgnoreIndex: it is read but not trained on.
func FillBatch(tokens []uint32, mask []bool, offs []int, seq int, inputs, targets []int32) {
	for b, off := range offs {
		for t := 0; t < seq; t++ {
			inputs[b*seq+t] = int32(tokens[off+t])
			targets[b*seq+t] = int32(tokens[off+t+1])
			if mask != nil && !mask[off+t+1] {
				targets[b*seq+t] = nn.IgnoreIndex
			}
		}
	}
}

// FrameTokens are the ids of the special tokens that delimit frames.
type FrameTokens struct{ BOS, FrameSep, ActionSep uint32 }

// FrameTargets marks the tokens a model writes when it debugs: every frame
// from the token after its <|frame_sep|> through the <|action_sep|> that ends
// it (the last frame: through <|end_of_text|>). The program header, the
// actions and breakpoint lines (the user's input) and the <|frame_sep|> that
// ends a prompt are left unmarked, so `--loss-on frames` spends no capacity
// on memorising programs.
func FrameTargets(tokens []uint32, ft FrameTokens) []bool {
	mask := make([]bool, len(tokens))
	inFrame := false
	for i, t := range tokens {
		switch {
		case t == ft.BOS:
			inFrame = false
		case t == ft.FrameSep:
			inFrame = true
		case inFrame:
			mask[i] = true
			inFrame = t != ft.ActionSep
		}
	}
	return mask
}

// ValOffsets gives the validation windows: consecutive, non-overlapping
// starts 0, T, 2T, ... while a whole window of T+1 tokens fits, at most
// maxWindows of them (0: all). The same windows are used at every
// evaluation, so validation losses are comparable across steps and runs.
func ValOffsets(n, seq, maxWindows int) []int {
	var offs []int
	for off := 0; off+seq+1 <= n; off += seq {
		if maxWindows > 0 && len(offs) == maxWindows {
			break
		}
		offs = append(offs, off)
	}
	return offs
}
