package tokenizer

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTexts(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(`{"text":"one","program":"p"}`+"\n\n"+`{"text":"two\n<|frame_sep|>"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte("three\nlines\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ignored.json"), []byte(`{"text":"no"}`), 0o644)
	gzf, _ := os.Create(filepath.Join(dir, "c.jsonl.gz"))
	gz := gzip.NewWriter(gzf)
	gz.Write([]byte(`{"text":"four"}` + "\n"))
	gz.Close()
	gzf.Close()

	files, err := CorpusFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var readErr error
	got := slices.Collect(Texts(files, &readErr))
	want := []string{"one", "two\n<|frame_sep|>", "four", "three\nlines\n"}
	if readErr != nil || !slices.Equal(got, want) {
		t.Fatalf("Texts = %q, %v; want %q", got, readErr, want)
	}

	for name, content := range map[string]string{
		"bad.jsonl":    "{\"text\":\"ok\"}\nnot json\n",
		"notext.jsonl": "{\"program\":\"x\"}\n",
	} {
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, []byte(content), 0o644)
		var err error
		for range Texts([]string{p}, &err) {
		}
		if err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("%s: error %v, want one naming the line", name, err)
		}
	}
	if _, err := CorpusFiles(t.TempDir()); err == nil {
		t.Error("an empty folder is accepted as a corpus")
	}
	// A single file must be one of the corpus kinds, not read as JSONL.
	py := filepath.Join(t.TempDir(), "prog.py")
	os.WriteFile(py, []byte("# a comment\nx = 1\n"), 0o644)
	if _, err := CorpusFiles(py); err == nil || !strings.Contains(err.Error(), "not a .jsonl, .jsonl.gz or .txt file") {
		t.Errorf("a .py file as the corpus: %v", err)
	}
}
