package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where the Streamable HTTP endpoint is served.
const HTTPPath = "/mcp"

// Bounds of the HTTP transport.
const (
	// DefaultMaxBody bounds one request body (a JSON-RPC message): the
	// largest arguments are a program's source (DefaultMaxProgram) and
	// stdin, so a little over 2 MiB fits any valid call.
	DefaultMaxBody = 3 << 20
	// DefaultMaxConns bounds the connections served at once; more wait to
	// be accepted.
	DefaultMaxConns = 64
	maxHeader       = 16 << 10
)

// HTTPOptions configures the Streamable HTTP transport.
type HTTPOptions struct {
	// Token is the bearer token every request must present
	// ("Authorization: Bearer TOKEN"); required.
	Token    string
	MaxBody  int64 // bytes per request body; 0 = DefaultMaxBody
	MaxConns int   // connections at once; 0 = DefaultMaxConns
}

// HTTPHandler serves MCP's Streamable HTTP transport at HTTPPath with the
// SDK's handler, behind a bearer token checked before anything of the
// request is read. All MCP sessions share the server's debugging sessions,
// so a client that connects anew for each call (a one-shot CLI) keeps its
// session ids. The SDK rejects a loopback request whose Host is not
// loopback (DNS rebinding); MCP sessions idle for the idle timeout end.
func (s *Server) HTTPHandler(o HTTPOptions) (http.Handler, error) {
	if o.Token == "" {
		return nil, errors.New("mcp: the HTTP transport needs a token")
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	srv := s.MCPServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{MaxRequestBodyBytes: o.MaxBody, SessionTimeout: s.idle})
	want := []byte("Bearer " + o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != HTTPPath {
			http.NotFound(w, r)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ndb mcp"`)
			w.Header().Set("Connection", "close") // its body is never read
			http.Error(w, "ndb mcp: missing or wrong bearer token (ndb mcp --http prints it)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// ServeHTTP serves the Streamable HTTP transport on l until ctx is done,
// then closes the sessions.
func (s *Server) ServeHTTP(ctx context.Context, l net.Listener, o HTTPOptions) error {
	defer s.Close()
	h, err := s.HTTPHandler(o)
	if err != nil {
		return err
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: maxHeader,
		IdleTimeout: 2 * time.Minute, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if hs.Shutdown(sctx) != nil {
				hs.Close() // streams that stay open
			}
		case <-done:
		}
	}()
	err = hs.Serve(limitListener(l, o.MaxConns))
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// limitListener accepts at most n connections at once; the next waits
// until one closes.
func limitListener(l net.Listener, n int) net.Listener {
	return &limited{Listener: l, sem: make(chan struct{}, n)}
}

type limited struct {
	net.Listener
	sem chan struct{}
}

func (l *limited) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.sem }}, nil
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
