package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer the server writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestServersTakeLiveLimits: `ndb mcp --timeout` bounds how long a tool
// runs the live program (an endless loop stops, interrupted, after it);
// negative limits are refused by mcp and dap before serving.
func TestServersTakeLiveLimits(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "endless.py")
	if err := os.WriteFile(prog, []byte("i = 0\nwhile True:\n    i += 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, feed := io.Pipe()
	var out syncBuffer
	rootCmd.SetIn(in)
	rootCmd.SetOut(&out)
	rootCmd.SetErr(io.Discard)
	rootCmd.SetArgs([]string{"mcp", "--engine", "real", "--timeout", "1s"})
	defer func() {
		rootCmd.SetArgs(nil)
		rootCmd.SetIn(nil)
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		resetFlags(mcpCmd)
	}()
	done := make(chan error, 1)
	go func() { done <- rootCmd.Execute() }()
	// wait sends one line and waits for the answer with that id.
	wait := func(id int, line string) string {
		t.Helper()
		if _, err := io.WriteString(feed, line+"\n"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, fmt.Sprintf(`"id":%d,`, id)) {
					return l
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no answer to %s:\n%s", line, out.String())
		return ""
	}
	wait(1, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	io.WriteString(feed, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	start := wait(2, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"debug_start","arguments":{"program":%q}}}`, prog))
	if !strings.Contains(start, `"session":"s1"`) {
		t.Fatalf("debug_start: %s", start)
	}
	began := time.Now()
	cont := wait(3, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"debug_continue","arguments":{"session":"s1"}}}`)
	if took := time.Since(began); !strings.Contains(cont, `"interrupted":"timeout"`) || took > 5*time.Second {
		t.Errorf("debug_continue of an endless loop under --timeout 1s, after %v: %s", took, cont)
	}
	feed.Close()
	if err := <-done; err != nil {
		t.Errorf("mcp ended with %v", err)
	}

	for _, c := range []string{"mcp", "dap"} {
		for _, bad := range [][]string{{"--timeout", "-1s"}, {"--max-events", "-1"}} {
			rootCmd.SetArgs(append([]string{c}, bad...))
			rootCmd.SetIn(strings.NewReader(""))
			err := rootCmd.Execute()
			if err == nil || !strings.Contains(err.Error(), "must not be negative") {
				t.Errorf("ndb %s %v: %v", c, bad, err)
			}
			cmd, _, _ := rootCmd.Find([]string{c})
			resetFlags(cmd)
		}
	}
}
