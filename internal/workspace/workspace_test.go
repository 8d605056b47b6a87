package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadAndCheck(t *testing.T) {
	base := t.TempDir()
	root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
	for _, d := range []string{root, out, filepath.Join(root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) string {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write(filepath.Join(root, "good.py"), "x = 1\n")
	secret := write(filepath.Join(out, "secret.py"), "TOKEN = 'do not echo'\n")
	big := write(filepath.Join(root, "big.py"), strings.Repeat("#", 100))
	os.Symlink(secret, filepath.Join(root, "link.py"))
	os.Symlink(out, filepath.Join(root, "linkdir"))
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	roots := []string{root}
	cases := []struct {
		path  string
		roots []string
		want  string // "" = read
	}{
		{good, roots, ""},
		{secret, roots, "outside the workspace roots"},
		{filepath.Join(root, "..", "out", "secret.py"), roots, "outside the workspace roots"},
		{filepath.Join(root, "link.py"), roots, "outside the workspace roots"},
		{filepath.Join(root, "linkdir", "secret.py"), roots, "outside the workspace roots"},
		{"/dev/zero", roots, "outside the workspace roots"},
		{"/dev/zero", nil, "not a regular file"},
		{fifo, roots, "not a regular file"},
		{filepath.Join(root, "sub"), roots, "not a regular file"},
		{filepath.Join(root, "nope.py"), roots, "no such file"},
		{big, roots, "100 bytes, more than the limit of 64"},
		{"/proc/self/environ", nil, "more than the limit of 64 bytes"}, // size 0 in stat: the read is bounded
		{secret, nil, ""}, // no roots: no confinement
		{"", roots, "no path"},
	}
	for _, c := range cases {
		_, b, err := Read("program", c.path, c.roots, 64)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Read(%s): %v", c.path, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Read(%s) = %q, %v; want an error with %q", c.path, b, err, c.want)
		case err != nil && strings.Contains(err.Error(), "do not echo"):
			t.Errorf("Read(%s) echoed the file: %v", c.path, err)
		}
		if c.path == "/proc/self/environ" {
			continue // Check looks at stat's size only; Read is the bound
		}
		_, err = Check("program", c.path, c.roots, 64)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%s) = %v, want %q", c.path, err, c.want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		path, root string
		want       bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/x", "/", true}, {"/a/../b", "/a", false},
	} {
		if got := Within(filepath.Clean(c.path), c.root); got != c.want {
			t.Errorf("Within(%s, %s) = %v", c.path, c.root, got)
		}
	}
}
