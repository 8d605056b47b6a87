package dap

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"

	"ndb/tracer"
)

// listenOn starts srv on addr and returns the address and a stop function.
func listenOn(t *testing.T, srv *Server, addr string) (net.Addr, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Listen(ctx, addr, false, func(a net.Addr) { ready <- a }) }()
	select {
	case a := <-ready:
		return a, func() { cancel(); <-done }
	case err := <-done:
		cancel()
		t.Fatal(err)
	}
	return nil, nil
}

// TestPreAuthBody: before the token a body is bounded (MaxPreAuthBody): a
// 2 MB setBreakpoints before the token is refused unread and the
// connection closed, and the server allocates almost nothing for it (it
// used to decode it: a 1 MB body raised its memory from 21 to 282 MB).
func TestPreAuthBody(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	addr := c.conn.RemoteAddr().String()
	bps := strings.Repeat(`{"line":1},`, 2<<20/11)
	body := `{"seq":1,"type":"request","command":"setBreakpoints","arguments":{"source":{"path":"x.py"},"breakpoints":[` + bps + `{"line":1}]}}`
	msg := frame(body)
	a := dial(t, "tcp", addr)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := a.conn.Write(msg); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatal(err)
	}
	// The answer is an output event saying why, then the end.
	a.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := godap.ReadProtocolMessage(a.r)
	if o, ok := m.(*godap.OutputEvent); err != nil || !ok || !strings.Contains(o.Body.Output, "over the limit of 16384") {
		t.Errorf("answer %+v %v, want an output event about the limit", m, err)
	}
	if !closed(a) {
		t.Error("the connection stays open after an over-long body before the token")
	}
	runtime.ReadMemStats(&after)
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d-byte body before the token: %d bytes allocated", len(body), grew)
	if grew > 4<<20 {
		t.Errorf("the server allocated %d bytes for a refused %d-byte body", grew, len(body))
	}
	// After the token a body may be larger, but not the breakpoints in it:
	// the same 2 MB setBreakpoints is an error, the session goes on.
	d := dial(t, "tcp", addr)
	d.token = c.token
	initialize(t, d)
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := d.conn.Write(msg); err != nil {
		t.Fatal(err)
	}
	for {
		m := d.read()
		if r, ok := m.(godap.ResponseMessage); ok && r.GetResponse().RequestSeq == 1 && r.GetResponse().Command == "setBreakpoints" {
			if r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "over the limit") {
				t.Errorf("2 MB of breakpoints after the token: %+v", r.GetResponse())
			}
			break
		}
	}
	runtime.ReadMemStats(&after)
	t.Logf("the same body after the token: %d bytes allocated", after.TotalAlloc-before.TotalAlloc)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 128<<20 {
		t.Errorf("the server allocated %d bytes for 2 MB of breakpoints", grew)
	}
	d.ok("threads", nil)
	// A body under the bound but not initialize is refused as well.
	b := dial(t, "tcp", addr)
	if r, _ := b.call("setBreakpoints", map[string]any{"source": map[string]any{"path": "x.py"}, "lines": []int{1}}); r.GetResponse().Success {
		t.Error("setBreakpoints before the token succeeded")
	}
	if !closed(b) {
		t.Error("the connection stays open after setBreakpoints before the token")
	}
}

// TestUnauthenticatedConnections: at most MaxUnauthConns connections wait
// for their token; the next is not served (it waits in the backlog) until
// one of them presents the token, then it is; one that waits longer than
// AuthTimeout is closed.
func TestUnauthenticatedConnections(t *testing.T) {
	srv := NewServer(sharedReal(), nil)
	addr, stop := listenOn(t, srv, "127.0.0.1:0")
	defer stop()
	var waiting []*client
	for range MaxUnauthConns {
		w := dial(t, "tcp", addr.String())
		w.ok("initialize", map[string]any{"adapterID": "ndb"}) // answered: it holds a place
		waiting = append(waiting, w)
	}
	extra := dial(t, "tcp", addr.String())
	extra.send("initialize", map[string]any{"adapterID": "ndb"})
	extra.conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := extra.r.ReadByte(); err == nil {
		t.Fatalf("connection %d was served while %d wait for their token", MaxUnauthConns+1, MaxUnauthConns)
	}
	waiting[0].token = srv.Token()
	waiting[0].ok("launch", map[string]any{"program": program(t), "engine": "real", "stopOnEntry": true})
	if r := extra.read(); r.(godap.ResponseMessage).GetResponse().Command != "initialize" {
		t.Errorf("once a place was free: %+v", r)
	}
	waiting[0].ok("disconnect", nil)
	for _, w := range waiting[1:] {
		w.conn.Close()
	}
	extra.conn.Close()

	quick := NewServer(sharedReal(), nil)
	quick.authTimeout = 200 * time.Millisecond
	qaddr, qstop := listenOn(t, quick, "127.0.0.1:0")
	defer qstop()
	slow := dial(t, "tcp", qaddr.String())
	slow.ok("initialize", map[string]any{"adapterID": "ndb"})
	start := time.Now()
	if !closed(slow) {
		t.Error("a connection without its token outlived AuthTimeout")
	} else if d := time.Since(start); d > 3*time.Second {
		t.Errorf("closed after %v", d)
	}
}

// TestCheckPeer: a unix socket's peer must be the server's uid in the
// server's user, pid and mount namespaces.
func TestCheckPeer(t *testing.T) {
	if err := checkPeer(os.Getpid(), os.Getuid()); err != nil {
		t.Errorf("the server itself: %v", err)
	}
	if err := checkPeer(os.Getpid(), os.Getuid()+1); err == nil || !strings.Contains(err.Error(), "uid") {
		t.Errorf("another uid: %v", err)
	}
	if err := checkPeer(0, os.Getuid()); err == nil {
		t.Error("pid 0 (a pid namespace the server cannot see) was accepted")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Log("no unshare: the other-namespace case is left to TestSandboxedProgramCannotUseSocket")
		return
	}
	cmd := exec.Command(unshare, "--pid", "--fork", "sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// unshare's child (the sleep) is in the new pid namespace.
	var child int
	for range 50 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if _, err := fmt.Sscan(string(b), &child); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if child == 0 {
		t.Skip("unshare --pid is not permitted here")
	}
	if err := checkPeer(child, os.Getuid()); err == nil || !strings.Contains(err.Error(), "pid namespace") {
		t.Errorf("a process in another pid namespace: %v", err)
	}
}

// TestSandboxedProgramCannotUseSocket is the escape of issue 30: a socket
// in a program's folder is reachable from inside ndb's sandbox, and a
// program used it to launch a session on a file outside its folder. The
// program here runs in ndb's kernel sandbox (tracer.SandboxCommand, the
// tracer's bwrap layer, without the tracer's audit hook, which a hostile
// program gets around) with the socket's folder bound as a program's
// folder is, and tries initialize and launch through it. The server
// refuses the peer (another user and pid namespace, whatever its uid maps
// to) and the program receives nothing. (The server also refuses to place
// a socket in a workspace root; this folder is not one of its roots.)
func TestSandboxedProgramCannotUseSocket(t *testing.T) {
	if tracer.UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1: no sandbox to test")
	}
	python, err := tracer.ResolvePython("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "ndb.sock")
	secret := filepath.Join(t.TempDir(), "secret.py")
	os.WriteFile(secret, []byte("print('SECRET-4242')\n"), 0o600)
	var log bytes.Buffer
	victim := NewServer(sharedReal(), &syncWriter{w: &log})
	_, stopVictim := listenOn(t, victim, UnixPrefix+sock)
	defer stopVictim()
	// Where ndb runs as an ordinary user, the sandbox maps the program's
	// uid onto the user's and the 0600 socket lets it in; as root it runs
	// under another uid, which the mode alone keeps out. Open the modes so
	// that the peer check is what is tested, on either.
	os.Chmod(filepath.Dir(dir), 0o755) // t.TempDir makes both 0700
	os.Chmod(dir, 0o755)
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`import json, socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(%q)
except OSError as e:
    print("connect failed:", e)
    raise SystemExit
def send(m):
    b = json.dumps(m).encode()
    s.sendall(b"Content-Length: %%d\r\n\r\n" %% len(b) + b)
try:
    send({"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "x"}})
    send({"seq": 2, "type": "request", "command": "launch", "arguments": {"program": %q, "engine": "real", "noDebug": True}})
    send({"seq": 3, "type": "request", "command": "configurationDone"})
except OSError as e:
    print("send:", type(e).__name__)
s.settimeout(10)
got = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
except OSError as e:
    print("recv:", type(e).__name__)
print("received", len(got), "bytes", "SECRET" in got.decode("utf-8", "replace"))
`, sock, secret)
	cmd, err := tracer.SandboxCommand(tracer.SandboxConfig{Python: python, ReadOnlyDirs: []string{dir}, Env: []string{"LANG=C.UTF-8"}}, "-c", src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("the sandboxed program printed %q (%v); the socket server logged %q", out, err, log.String())
	switch {
	case bytes.Contains(out, []byte("True")) || !bytes.Contains(out, []byte("received 0 bytes")):
		t.Errorf("the sandboxed program got answers through the socket, or could not try: %q", out)
	case !strings.Contains(log.String(), "refused a unix connection"):
		t.Errorf("the server did not refuse the peer: %q", log.String())
	}
}

// syncWriter serialises writes to a log shared by goroutines.
type syncWriter struct {
	mu chan struct{}
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	if s.mu == nil {
		s.mu = make(chan struct{}, 1)
	}
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.w.Write(p)
}

// TestWorkspaceRoots: launch takes programs (and model files) inside the
// roots only, regular files of bounded size, and says why not without
// quoting the file; a unix socket may not be placed inside a root.
func TestWorkspaceRoots(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	good := filepath.Join(root, "ok.py")
	os.WriteFile(good, []byte("x = 1\n"), 0o644)
	secret := filepath.Join(outside, "secret.py")
	os.WriteFile(secret, []byte("TOPSECRET = 1\n"), 0o600)
	os.Symlink(secret, filepath.Join(root, "link.py"))
	os.Mkdir(filepath.Join(root, "sub.py"), 0o755)
	big := filepath.Join(root, "big.py")
	os.WriteFile(big, bytes.Repeat([]byte("#\n"), MaxProgramBytes/2+1), 0o644)
	srv := NewServer(sharedReal(), nil)
	if err := srv.SetRoots([]string{root}); err != nil {
		t.Fatal(err)
	}
	addr, stop := listenOn(t, srv, "127.0.0.1:0")
	defer stop()
	for _, c := range []struct {
		program, model, want string
	}{
		{secret, "", "outside the workspace"},
		{filepath.Join(root, "link.py"), "", "outside the workspace"},
		{"/dev/zero", "", "outside the workspace"},
		{filepath.Join(root, "sub.py"), "", "not a regular file"},
		{big, "", "more than the limit"},
		{filepath.Join(root, "nope.py"), "", "no such file"},
		{good, secret, "outside the workspace"},
		{good, "", ""},
	} {
		cl := dial(t, "tcp", addr.String())
		cl.token = srv.Token()
		initialize(t, cl)
		r, _ := cl.call("launch", map[string]any{"program": c.program, "model": c.model, "engine": "real", "stopOnEntry": true})
		msg := r.GetResponse().Message
		switch {
		case c.want == "" && !r.GetResponse().Success:
			t.Errorf("%s: %s", c.program, msg)
		case c.want != "" && (r.GetResponse().Success || !strings.Contains(msg, c.want)):
			t.Errorf("%s (model %q): %+v, want an error with %q", c.program, c.model, r.GetResponse(), c.want)
		case strings.Contains(msg, "TOPSECRET"):
			t.Errorf("the error quotes the file: %s", msg)
		}
		cl.conn.Close()
	}
	// The socket's place.
	err := srv.Listen(context.Background(), UnixPrefix+filepath.Join(root, "x.sock"), false, nil)
	if err == nil || !strings.Contains(err.Error(), "refusing to place the socket") {
		t.Errorf("a socket inside a root: %v", err)
	}
}

// FuzzPreAuth feeds arbitrary bytes to a connection that needs a token:
// the server must not panic, must end with its input, must answer no
// request but initialize with success (the fuzzer cannot know the token),
// and must read no body over MaxPreAuthBody.
func FuzzPreAuth(f *testing.F) {
	for _, s := range []string{"", string(frame(`{"seq":1,"type":"request","command":"initialize","arguments":{"adapterID":"x"}}`)),
		string(frame(`{"seq":1,"type":"request","command":"initialize","arguments":{"token":"x"}}`)),
		string(frame(`{"seq":1,"type":"request","command":"setBreakpoints","arguments":{"source":{"path":"/etc/passwd"},"lines":[1]}}`)),
		string(frame(`{"seq":1,"type":"request","command":"initialize"}`)) + string(frame(`{"seq":2,"type":"request","command":"launch","arguments":{"program":"/etc/passwd","token":5}}`)),
		"Content-Length: 99999999\r\n\r\n", "Content-Length: 20000\r\n\r\n" + strings.Repeat(" ", 20000), "\r\n\r\nContent-Length: 2\r\n\r\n{}"} {
		f.Add([]byte(s))
	}
	srv := NewServer(sharedReal(), nil)
	srv.SetToken(NewToken())
	f.Fuzz(func(t *testing.T, in []byte) {
		gate := newAuthGate(time.Hour, func() {}, func() {})
		defer gate.done()
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- srv.serve(context.Background(), bytes.NewReader(in), &out, gate) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the server did not end with its input")
		}
		if gate.open() {
			t.Fatal("authenticated without the token")
		}
		r := bufio.NewReader(&out)
		for {
			m, err := godap.ReadProtocolMessage(r)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("malformed output: %v", err)
			}
			if resp, ok := m.(godap.ResponseMessage); ok && resp.GetResponse().Success && resp.GetResponse().Command != "initialize" {
				t.Fatalf("%s answered with success before the token", resp.GetResponse().Command)
			}
			if _, ok := m.(*godap.InitializedEvent); ok {
				t.Fatal("initialized sent before the token")
			}
		}
	})
}
