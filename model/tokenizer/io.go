package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"ndb/internal/atomicfile"
)

// FileFormat names ndb's own tokenizer JSON; FileVersion is its version.
const (
	FileFormat  = "ndb-bpe"
	FileVersion = 1
)

// fileJSON is ndb's tokenizer file: the pre-tokenizer's pattern, the merges
// as id pairs (ids as described in the package doc) and the special tokens.
// Token texts are derived from the merges, so they cannot disagree with them.
type fileJSON struct {
	Format       string     `json:"format"`
	Version      int        `json:"version"`
	Pretokenizer string     `json:"pretokenizer"`
	Specials     []string   `json:"specials"`
	Merges       [][2]int32 `json:"merges"`
}

// MarshalJSON writes the tokenizer in ndb's format.
func (t *Tokenizer) MarshalJSON() ([]byte, error) {
	merges := t.merges
	if merges == nil {
		merges = [][2]int32{}
	}
	return json.Marshal(fileJSON{FileFormat, FileVersion, t.pre.Pattern(), t.specials, merges})
}

// Parse reads a tokenizer written by MarshalJSON.
func Parse(data []byte) (*Tokenizer, error) {
	var f fileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("tokenizer: not an ndb tokenizer file: %w", err)
	}
	switch {
	case f.Format != FileFormat:
		return nil, fmt.Errorf("tokenizer: format %q, want %q", f.Format, FileFormat)
	case f.Version != FileVersion:
		return nil, fmt.Errorf("tokenizer: file version %d, this ndb reads version %d", f.Version, FileVersion)
	}
	pre, err := pretokenizerOfPattern(f.Pretokenizer)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: the file's %w", err)
	}
	return build(f.Merges, f.Specials, pre)
}

// Save writes the tokenizer to path (temp file + rename).
func (t *Tokenizer) Save(path string) error {
	data, err := t.MarshalJSON()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data)
}

// Load reads a tokenizer file written by Save.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
