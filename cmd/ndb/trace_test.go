package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	cases := map[string]int64{"1073741824": 1 << 30, "512M": 512 << 20, "1G": 1 << 30, "2GiB": 2 << 30, "64k": 64 << 10, "1.5G": 3 << 29}
	for in, want := range cases {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1G", "G"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("parseBytes(%q) accepted", bad)
		}
	}
}

func TestTraceBadFiles(t *testing.T) {
	dir := t.TempDir()
	latin := filepath.Join(dir, "bad.py")
	os.WriteFile(latin, []byte("x = '\xe9'\n"), 0o644)
	f := traceFlags{python: "python3", timeout: 1e9, maxEvents: 10, memory: "1G", reprLimit: 10, maxOutput: 10}
	for path, want := range map[string]string{
		filepath.Join(dir, "missing.py"): "no such file",
		dir:                              "is a directory",
		latin:                            "not valid UTF-8",
	} {
		err := runTrace(context.Background(), f, path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
	f.memory = "lots"
	if err := runTrace(context.Background(), f, latin); err == nil || !strings.Contains(err.Error(), "--memory") {
		t.Errorf("bad --memory: %v", err)
	}
}
