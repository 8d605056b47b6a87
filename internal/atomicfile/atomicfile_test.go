package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := WriteFile(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, TempPattern(path))); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// A path over a folder cannot be replaced: an error, the folder stays
	// and no temporary file is left.
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "keep"), nil, 0o644)
	if err := WriteFile(sub, []byte("x")); err == nil || !strings.Contains(err.Error(), sub+" is a directory") {
		t.Fatalf("writing over a non-empty folder: %v, want an error naming the folder", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, TempPattern(sub))); len(left) > 0 {
		t.Errorf("temporary files left after an error: %v", left)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil); err == nil {
		t.Error("a missing folder: want an error")
	}
}
