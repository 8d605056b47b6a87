package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
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

// resetMCP undoes a test's `ndb mcp` run: its flags (a string array's
// default cannot be Set back) and the root command's streams.
func resetMCP() {
	rootCmd.SetArgs(nil)
	rootCmd.SetIn(nil)
	rootCmd.SetOut(nil)
	rootCmd.SetErr(nil)
	resetFlags(mcpCmd)
	mcpFlags.roots = nil
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
	rootCmd.SetArgs([]string{"mcp", "--engine", "real", "--timeout", "1s", "--root", filepath.Dir(prog)})
	defer resetMCP()
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

// TestMCPOverHTTP: `ndb mcp --http 127.0.0.1:0` prints its URL and token,
// answers only requests with the token, and ends with its context; a
// non-loopback address, a missing --root folder and bad bounds are refused
// before serving.
func TestMCPOverHTTP(t *testing.T) {
	var errOut syncBuffer
	rootCmd.SetErr(&errOut)
	rootCmd.SetArgs([]string{"mcp", "--engine", "real", "--http", "127.0.0.1:0", "--root", t.TempDir()})
	defer resetMCP()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	mcpCmd.SetContext(ctx) // cobra keeps a subcommand's context of an earlier Execute
	go func() { done <- rootCmd.ExecuteContext(ctx) }()
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)\nndb mcp: token ([0-9a-f]{32}) `)
	var m []string
	for deadline := time.Now().Add(20 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m = re.FindStringSubmatch(errOut.String())
	}
	if m == nil {
		cancel()
		t.Fatalf("no URL and token printed: %q (%v)", errOut.String(), <-done)
	}
	post := func(auth string) int {
		req, _ := http.NewRequest("POST", m[1], strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post(""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	if code := post("Bearer " + m[2]); code != http.StatusOK {
		t.Errorf("with the token: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ndb mcp --http ended with %v", err)
	}
	resetMCP()

	for _, bad := range [][]string{
		{"--http", "0.0.0.0:0"},
		{"--root", filepath.Join(t.TempDir(), "missing")},
		{"--max-sessions", "0"},
		{"--idle-timeout", "-1s"},
	} {
		rootCmd.SetArgs(append([]string{"mcp"}, bad...))
		rootCmd.SetIn(strings.NewReader(""))
		rootCmd.SetErr(io.Discard)
		if err := rootCmd.Execute(); err == nil {
			t.Errorf("ndb mcp %v: accepted", bad)
		}
		resetMCP()
	}
}
