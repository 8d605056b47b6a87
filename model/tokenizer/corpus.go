package tokenizer

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxLine bounds one JSONL line (one trajectory) when reading a corpus.
const maxLine = 256 << 20

// CorpusFiles lists the text files of path: path itself when it is a
// .jsonl, .jsonl.gz or .txt file, else every such file under it, sorted, so
// that the order (and what is read) does not depend on the file system.
func CorpusFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		if !isCorpusFile(path) {
			// Read as JSONL, prog.py failed with "invalid character '#'".
			return nil, fmt.Errorf("%s is not a .jsonl, .jsonl.gz or .txt file", path)
		}
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && isCorpusFile(p) {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s holds no .jsonl, .jsonl.gz or .txt files", path)
	}
	return files, err
}

func isCorpusFile(p string) bool {
	return strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".jsonl.gz") || strings.HasSuffix(p, ".txt")
}

// Texts iterates over the texts of the corpus files: each JSONL line's
// "text" field (the shards `ndb gen` writes), or a .txt file's whole
// content. After the loop, errp holds the first error (iteration stops
// there).
func Texts(files []string, errp *error) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, f := range files {
			ok, err := readTexts(f, yield)
			if err != nil {
				*errp = fmt.Errorf("%s: %w", f, err)
				return
			}
			if !ok {
				return
			}
		}
	}
}

// readTexts yields the texts of one file; ok is false when yield stopped.
func readTexts(path string, yield func(string) bool) (ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return false, err
		}
		defer gz.Close()
		r = gz
	}
	if strings.HasSuffix(path, ".txt") {
		data, err := io.ReadAll(r)
		if err != nil {
			return false, err
		}
		return yield(string(data)), nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), maxLine)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var rec struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return false, fmt.Errorf("line %d: %w", line, err)
		}
		if rec.Text == nil {
			return false, fmt.Errorf("line %d has no \"text\" field", line)
		}
		if !yield(*rec.Text) {
			return false, nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return false, fmt.Errorf("a line is longer than %d bytes", maxLine)
		}
		return false, err
	}
	return true, nil
}
