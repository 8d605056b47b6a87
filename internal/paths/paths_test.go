package paths

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot("")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.Abs(filepath.Join("..", "..")); root != want {
		t.Fatalf("root %s, want %s (this package is two levels down)", root, want)
	}
	from, err := RepoRoot(filepath.Join("..", "..", "format"))
	if err != nil || from != root {
		t.Fatalf("from format: %s, %v; want %s", from, err, root)
	}
	if _, err := RepoRoot(t.TempDir()); !errors.Is(err, ErrNoRepoRoot) {
		t.Fatalf("a folder outside any module: %v, want ErrNoRepoRoot", err)
	}
}

func TestDataDir(t *testing.T) {
	t.Setenv(DataDirEnv, "/from/env")
	if d, _ := DataDir("/from/flag"); d != "/from/flag" {
		t.Fatalf("flag: %s", d)
	}
	if d, _ := DataDir(""); d != "/from/env" {
		t.Fatalf("env: %s", d)
	}
	t.Setenv(DataDirEnv, "")
	root, _ := RepoRoot("")
	if d, err := DataDir(""); err != nil || d != filepath.Join(root, "..", "shared", "data") {
		t.Fatalf("fallback: %s, %v", d, err)
	}
	t.Chdir(t.TempDir())
	if _, err := DataDir(""); err == nil {
		t.Fatal("outside the repo with no flag or env: want an error")
	}
}
