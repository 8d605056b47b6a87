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
	"sync/atomic"
	"syscall"
	"time"

	"ndb/internal/workspace"
)

// UnixPrefix marks a --listen address that is a unix socket path.
const UnixPrefix = "unix:"

// Bounds of what a TCP connection may cost before it presents the token.
const (
	// MaxPreAuthBody bounds a message's body before the token: initialize
	// (or a launch carrying the token) is well under 1 KiB. A longer one
	// closes the connection unread.
	MaxPreAuthBody = 16 << 10
	// MaxUnauthConns bounds the connections that have not presented the
	// token yet: while that many wait, the server accepts no other (the
	// kernel's backlog holds them) until one authenticates or ends.
	MaxUnauthConns = 16
)

// AuthTimeout is how long a TCP connection may take to present the token
// before it is closed (a client sends it in its second request).
const AuthTimeout = 10 * time.Second

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
// its initialize or launch request. Before that the only request it may
// send is initialize (answered, with the initialized event held back until
// the token comes), in bodies of at most MaxPreAuthBody bytes, within
// AuthTimeout, and at most MaxUnauthConns connections wait so (the next
// is accepted when one of them authenticates or ends); anything
// else (another request, a wrong token, a malformed or longer frame) is
// answered with an error and closes the connection. The real engine runs
// programs for whoever gets in.
//
// addr "unix:/path" listens on a unix socket of mode 0600 instead, created
// in a private folder and renamed into place (never reachable with wider
// permissions), and never inside a workspace root (SetRoots: a program's
// folder is bound into its sandbox, so a socket there would be reachable
// from inside it). Its connections need no token; each peer is checked
// instead (peerOK): the server's own uid, in the server's own user, pid
// and mount namespaces, so that a program in ndb's sandbox (its own
// namespaces, even where its uid maps onto the user's) is refused. ready
// gets the address once listening.
func (s *Server) Listen(ctx context.Context, addr string, allowRemote bool, ready func(net.Addr)) error {
	var l net.Listener
	var err error
	needToken := false
	if path, ok := strings.CutPrefix(addr, UnixPrefix); ok {
		if err := s.checkSocketPlace(path); err != nil {
			return err
		}
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
	// The places of connections without their token: one is taken before
	// each accept, so a flood of them waits in the kernel's backlog.
	var unauth chan struct{}
	if needToken {
		unauth = make(chan struct{}, MaxUnauthConns)
	}
	for {
		if unauth != nil {
			select {
			case unauth <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
		}
		c, err := l.Accept()
		if err != nil {
			if unauth != nil {
				<-unauth
			}
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if uc, ok := c.(*net.UnixConn); ok {
			if err := peerOK(uc); err != nil {
				fmt.Fprintf(s.log, "dap: refused a unix connection: %v\n", err)
				c.Close()
				continue
			}
		}
		var gate *authGate
		if needToken {
			gate = newAuthGate(s.authTimeout, func() { c.Close() }, func() { <-unauth })
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			defer gate.done()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() { <-cctx.Done(); c.Close() }()
			s.serve(cctx, c, c, gate)
		}()
	}
}

// authGate is a TCP connection's state before its token: it holds one of
// the MaxUnauthConns places until authenticated (or closed), and closes
// the connection when AuthTimeout passes first. A nil gate (stdio, unix
// sockets) is always open.
type authGate struct {
	authed  atomic.Bool
	once    sync.Once
	release func() // gives the place back
	timer   *time.Timer
}

// newAuthGate holds a place that free gives back; closeConn ends the
// connection when timeout passes before the token.
func newAuthGate(timeout time.Duration, closeConn, free func()) *authGate {
	g := &authGate{release: free}
	g.timer = time.AfterFunc(timeout, func() {
		if !g.authed.Load() {
			closeConn()
		}
	})
	return g
}

// open reports whether requests pass without a token.
func (g *authGate) open() bool { return g == nil || g.authed.Load() }

// pass marks the connection authenticated.
func (g *authGate) pass() {
	g.authed.Store(true)
	g.done()
}

// done gives the connection's unauthenticated place back (once).
func (g *authGate) done() {
	if g == nil {
		return
	}
	g.once.Do(func() {
		g.timer.Stop()
		g.release()
	})
}

// peerOK checks a unix socket's peer (SO_PEERCRED): the server's own uid,
// and the server's user, pid and mount namespaces (read from
// /proc/PID/ns). A peer in a pid namespace the server cannot see has pid
// 0 and is refused, as is one whose namespaces cannot be read.
func peerOK(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	return checkPeer(int(cred.Pid), int(cred.Uid))
}

// checkPeer is peerOK's rule for a peer process pid of user uid.
func checkPeer(pid, uid int) error {
	if uid != os.Getuid() {
		return fmt.Errorf("peer uid %d is not the server's (%d)", uid, os.Getuid())
	}
	if pid <= 0 {
		return errors.New("the peer's process is in a pid namespace the server cannot see")
	}
	for _, ns := range []string{"user", "pid", "mnt"} {
		mine, err1 := os.Readlink("/proc/self/ns/" + ns)
		theirs, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		if err1 != nil || err2 != nil {
			return fmt.Errorf("cannot compare the peer's %s namespace (pid %d)", ns, pid)
		}
		if mine != theirs {
			return fmt.Errorf("peer pid %d is in another %s namespace (%s, the server's %s): a sandboxed program?", pid, ns, theirs, mine)
		}
	}
	return nil
}

// checkSocketPlace refuses a socket path inside a workspace root: programs
// run from folders there, and a program's folder is bound into its
// sandbox.
func (s *Server) checkSocketPlace(path string) error {
	if path == "" {
		return errors.New("listen: unix: needs a path, e.g. unix:/run/user/1000/ndb.sock")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	dir := filepath.Dir(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for _, r := range s.roots {
		if workspace.Within(dir, r) {
			return fmt.Errorf("listen: refusing to place the socket %s inside %s, a folder ndb runs programs from (a program there could reach it); put it elsewhere, e.g. $XDG_RUNTIME_DIR", path, r)
		}
	}
	return nil
}

// listenUnix listens on a socket of mode 0600 at path: bound in a fresh
// 0700 folder beside path, then renamed to path. An existing socket at path
// is replaced; any other file there is an error.
func listenUnix(ctx context.Context, path string) (net.Listener, error) {
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
