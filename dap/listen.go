package dap

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// UnixPrefix marks a --listen address that is a unix socket path.
const UnixPrefix = "unix:"

// SetToken sets the token that TCP connections must present (see Listen);
// "" lets Listen pick a random one.
func (s *Server) SetToken(tok string) { s.token = tok }

// Token is the token TCP connections must present ("" before Listen picks
// one, and for stdio and unix sockets, which need none).
func (s *Server) Token() string { return s.token }

// NewToken returns 32 random hex digits (128 bits).
func NewToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}

// Listen accepts connections on addr and serves each until ctx is done.
//
// A TCP address must be loopback unless allowRemote is set, and every TCP
// connection must present the server's token (Token; Listen picks a random
// one when none was set, as Jupyter does): as "token" in the arguments of
// its launch request (launch.json), or of any earlier request. Before that
// a connection may only initialize and configure (preAuth: setBreakpoints,
// setFunctionBreakpoints, setExceptionBreakpoints, configurationDone,
// threads, disconnect); any
// other request, or a wrong token, is answered with an error and the
// connection is closed. The real engine runs programs for whoever gets in.
//
// addr "unix:/path" listens on a unix socket of mode 0600 instead (the
// file's permissions are the access control; no token): it is created in
// a private folder and renamed into place, so it is never reachable with
// wider permissions. ready gets the address once listening.
func (s *Server) Listen(ctx context.Context, addr string, allowRemote bool, ready func(net.Addr)) error {
	var l net.Listener
	var err error
	needToken := false
	if path, ok := strings.CutPrefix(addr, UnixPrefix); ok {
		l, err = listenUnix(ctx, path)
	} else {
		if err := CheckLoopback(addr); err != nil && !allowRemote {
			return err
		}
		if s.token == "" {
			s.token = NewToken()
		}
		needToken = true
		l, err = (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	}
	if err != nil {
		return err
	}
	defer l.Close() // also before returning: a unix socket's file is gone when Listen returns
	if ready != nil {
		ready(l.Addr())
	}
	go func() { <-ctx.Done(); l.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() { <-cctx.Done(); c.Close() }()
			s.serve(cctx, c, c, needToken)
		}()
	}
}

// listenUnix listens on a socket of mode 0600 at path: bound in a fresh
// 0700 folder beside path, then renamed to path. An existing socket at path
// is replaced; any other file there is an error.
func listenUnix(ctx context.Context, path string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("listen: unix: needs a path, e.g. unix:/tmp/ndb.sock")
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("listen: %s exists and is not a socket", path)
		}
		os.Remove(path)
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), ".ndb-dap-")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	l, err := (&net.ListenConfig{}).Listen(ctx, "unix", tmp)
	if err != nil {
		return nil, err
	}
	ul := l.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	return &unixListener{UnixListener: ul, path: path}, nil
}

// unixListener removes its socket file when closed.
type unixListener struct {
	*net.UnixListener
	path string
	once sync.Once
}

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() { os.Remove(l.path) })
	return err
}

func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

// CheckLoopback returns an error unless addr's host is a loopback address
// (or localhost).
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q is not loopback: the server runs programs for whoever connects; use 127.0.0.1 (or --allow-remote)", addr)
	}
	return nil
}

// tokenOK compares a presented token with the server's in constant time.
func tokenOK(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// preAuth are the requests a TCP connection may send before its token:
// they neither run code nor read files.
var preAuth = map[string]bool{
	"initialize": true, "setBreakpoints": true, "setExceptionBreakpoints": true,
	"configurationDone": true, "threads": true, "disconnect": true, "setFunctionBreakpoints": true,
}
