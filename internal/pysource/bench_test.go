package pysource

import (
	"os"
	"path/filepath"
	"testing"

	"ndb/internal/paths"
)

// BenchmarkIndexLargestRealWorldFile indexes the largest realworld file.
func BenchmarkIndexLargestRealWorldFile(b *testing.B) {
	dir, err := paths.DataDir("")
	if err != nil {
		b.Skip(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "realworld", "*.py"))
	var src []byte
	for _, f := range files {
		if s, err := os.ReadFile(f); err == nil && len(s) > len(src) {
			src = s
		}
	}
	if len(src) == 0 {
		b.Skip("no realworld files")
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		New(string(src))
	}
}
