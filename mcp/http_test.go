package mcp

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// serveHTTP starts srv's Streamable HTTP transport on a loopback port and
// returns its URL; it ends with the test.
func serveHTTP(t *testing.T, srv *Server, o HTTPOptions) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTP(ctx, l, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return "http://" + l.Addr().String() + HTTPPath
}

func httpClient(t *testing.T, url, token string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// TestHTTPTransport: requests need the token (checked before the body is
// read); bodies are bounded; a session started by one client is continued
// by another (a one-shot client connects anew for each call); closing the
// server closes the sessions.
func TestHTTPTransport(t *testing.T) {
	srv := newServer(t, testRegistry(), "real")
	const token = "0123456789abcdef"
	url := serveHTTP(t, srv, HTTPOptions{Token: token, MaxBody: 64 << 10})

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		name, auth, host, path, body string
		want                         int
	}{
		{"no token", "", "", HTTPPath, init, http.StatusUnauthorized},
		{"wrong token", "Bearer nope", "", HTTPPath, init, http.StatusUnauthorized},
		{"the token without Bearer", token, "", HTTPPath, init, http.StatusUnauthorized},
		{"a body over the limit", "Bearer " + token, "", HTTPPath, `{"x":"` + strings.Repeat("a", 128<<10) + `"}`, http.StatusRequestEntityTooLarge},
		{"a foreign Host (DNS rebinding)", "Bearer " + token, "evil.example:80", HTTPPath, init, http.StatusForbidden},
		{"another path", "Bearer " + token, "", "/other", init, http.StatusNotFound},
		{"initialize", "Bearer " + token, "", HTTPPath, init, http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", strings.TrimSuffix(url, HTTPPath)+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		if c.host != "" {
			req.Host = c.host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, res.StatusCode, c.want)
		}
	}

	// One client per call, as a one-shot CLI: the session lives on.
	cs := httpClient(t, url, token)
	var st Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": "def f(n):\n    return n * 2\n", "call": "f(4)",
		"breakpoints": []any{map[string]any{"line": 2}}}, &st)
	cs.Close()
	if st.Function != "f" || st.Locals["n"] != "4" {
		t.Fatalf("start over HTTP: %+v", st)
	}
	cs = httpClient(t, url, token)
	var ev Evaluation
	mustCall(t, cs, ToolEvaluate, map[string]any{"session": st.Session, "code": "n + 1"}, &ev)
	cs.Close()
	if ev.Result != "5" {
		t.Errorf("evaluate from a second client: %+v", ev)
	}
	cs = httpClient(t, url, token)
	mustCall(t, cs, ToolStep, map[string]any{"session": st.Session, "mode": "out"}, &st)
	if st.Event != "return" || st.Value != "8" {
		t.Errorf("step out from a third client: %+v", st)
	}
	mustCall(t, cs, ToolEnd, map[string]any{"session": st.Session}, nil)
	cs.Close()

	// A wrong token cannot connect at all.
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"bad"}}, MaxRetries: -1}, nil); err == nil {
		t.Error("a client with a wrong token connected")
	}
	if _, err := srv.HTTPHandler(HTTPOptions{}); err == nil {
		t.Error("an HTTP handler without a token must be refused")
	}
}

// FuzzHTTPUnauthenticated: whatever a client without the token sends (any
// method, path, header and body) is answered 401 (or 404 off the
// endpoint) without reaching the SDK, and without reading the body.
func FuzzHTTPUnauthenticated(f *testing.F) {
	srv := NewServer(testRegistry(), "real")
	h, err := srv.HTTPHandler(HTTPOptions{Token: "secret-token"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("POST", HTTPPath, "Bearer wrong", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	f.Add("GET", HTTPPath, "", "")
	f.Add("DELETE", HTTPPath, "Basic c2VjcmV0LXRva2Vu", "")
	f.Add("POST", HTTPPath, "Bearer secret-token ", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug_start","arguments":{"program":"/etc/passwd"}}}`)
	f.Fuzz(func(t *testing.T, method, path, auth, body string) {
		if auth == "Bearer secret-token" || !validMethod(method) {
			return
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.Method, req.URL.Path = method, path
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		rb := &countingReader{r: strings.NewReader(body)}
		req.Body = io.NopCloser(rb)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if want := http.StatusUnauthorized; path != HTTPPath {
			want = http.StatusNotFound
			if rec.Code != want {
				t.Fatalf("%s %q: %d, want %d", method, path, rec.Code, want)
			}
		} else if rec.Code != want || rec.Header().Get("WWW-Authenticate") == "" {
			t.Fatalf("%s with %q: %d, want %d", method, auth, rec.Code, want)
		}
		if rb.n > 0 {
			t.Fatalf("%d bytes of an unauthenticated body were read", rb.n)
		}
	})
}

// validMethod: net/http refuses to send anything else.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range m {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", c) {
			return false
		}
	}
	return true
}

type countingReader struct {
	r *strings.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
