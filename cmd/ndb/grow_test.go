package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"ndb/model/modelfile"
)

// TestGrowCommand grows the shipped model by 2 blocks (same width and
// tokenizer, the first block kept; nn's test checks the function) and
// refuses to shrink it, writing nothing.
func TestGrowCommand(t *testing.T) {
	src := filepath.Join("..", "..", "model", "defaultmodel", "model", "ndb.model")
	m, err := modelfile.Load(src)
	if err != nil {
		t.Skipf("no default model: %v", err)
	}
	deeper, shallower := strconv.Itoa(m.Config.Layers+2), strconv.Itoa(m.Config.Layers-1)
	out := filepath.Join(t.TempDir(), "grown.model")
	if msg, err := runNDB(t, "grow", "--model", src, "--layers", deeper, "--out", out); err != nil {
		t.Fatalf("grow: %v\n%s", err, msg)
	}
	g, err := modelfile.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if g.Config.Layers != m.Config.Layers+2 || g.Config.Dim != m.Config.Dim || g.Tokenizer.VocabSize() != m.Tokenizer.VocabSize() {
		t.Fatalf("grown config %+v", g.Config)
	}
	if g.Meta["grown_from"] != src {
		t.Errorf("meta %v", g.Meta)
	}
	first := g.Config.Layout()[1] // layer 0's input norm: copied as is
	if first.Offset != m.Config.Layout()[1].Offset || g.Weights[first.Offset] != m.Weights[first.Offset] {
		t.Errorf("first block not kept")
	}
	bad := filepath.Join(t.TempDir(), "bad.model")
	if msg, err := runNDB(t, "grow", "--model", src, "--layers", shallower, "--out", bad); err == nil || !strings.Contains(err.Error(), "fewer") {
		t.Fatalf("shrinking: %v %s", err, msg)
	}
	if _, err := modelfile.Load(bad); err == nil {
		t.Error("a refused grow wrote a file")
	}
}
