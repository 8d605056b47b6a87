package tracer

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// One test per reproduction of issue 19 ("Why"), each run on two tracers:
// "audit", the normal one, and "kernel", whose programs run without the
// audit hooks, so that only the kernel sandbox (bwrap, the per-program
// namespaces, seccomp) stands between the program and the host. Every
// program is bounded on its own: no loop without an end, network only to a
// listener the test opened on 127.0.0.1, sleeps of at most 60 s in processes
// that the sandbox must kill.

var hostile struct {
	once sync.Once
	dir  string // a host folder every program sees read-only
	ts   map[string]*Tracer
	err  error
}

const roContent = "read-only for programs\n"

func hostileTracers(t *testing.T) map[string]*Tracer {
	t.Helper()
	hostile.once.Do(func() {
		hostile.dir, hostile.err = os.MkdirTemp("", "ndb-ro-")
		if hostile.err != nil {
			return
		}
		if hostile.err = os.WriteFile(filepath.Join(hostile.dir, "ro.txt"), []byte(roContent), 0o644); hostile.err != nil {
			return
		}
		os.Chmod(hostile.dir, 0o755)
		hostile.ts = map[string]*Tracer{}
		for _, name := range []string{"audit", "kernel"} {
			tr, err := New(Options{Python: os.Getenv("NDB_PYTHON"), ReadOnlyDirs: []string{hostile.dir}, noAudit: name == "kernel"})
			if err != nil {
				hostile.err = err
				return
			}
			hostile.ts[name] = tr
		}
	})
	if hostile.err != nil {
		if UnsafeNoSandbox() {
			t.Skipf("sandbox disabled: %v", hostile.err)
		}
		t.Fatalf("sandboxed tracers: %v", hostile.err)
	}
	return hostile.ts
}

func closeHostile() {
	for _, tr := range hostile.ts {
		tr.Close()
	}
	if hostile.dir != "" {
		os.RemoveAll(hostile.dir)
	}
}

// eachLayer runs f on the audit and the kernel-only tracer, then checks
// that each still traces a program correctly.
func eachLayer(t *testing.T, f func(t *testing.T, tr *Tracer)) {
	t.Helper()
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1: nothing to test")
	}
	for _, name := range []string{"audit", "kernel"} {
		tr := hostileTracers(t)[name]
		t.Run(name, func(t *testing.T) {
			f(t, tr)
			healthy(t, tr)
		})
	}
}

func healthy(t *testing.T, tr *Tracer) {
	t.Helper()
	res, err := tr.Trace(context.Background(), Program{Source: "def f(x):\n    y = x * 2\n    return y + 1\n", Call: "f(20)"})
	if err != nil {
		t.Fatalf("worker unhealthy after the hostile program: %v", err)
	}
	n := len(res.States)
	if res.Exit.Kind != ExitNormal || n != 7 || res.States[n-1].Arg != "41" || res.Stdout != "" {
		t.Fatalf("worker unhealthy after the hostile program: %+v %+v", res.Exit, res.States)
	}
	if v, _ := res.States[4].Locals.Get("y"); v != "40" || len(res.States[4].Locals) != 2 {
		t.Fatalf("locals of the next program: %+v", res.States[4].Locals)
	}
}

func run(t *testing.T, tr *Tracer, src string, lim Limits) *Trace {
	t.Helper()
	if lim.Timeout == 0 {
		lim.Timeout = 10 * time.Second
	}
	res, err := tr.TraceLimits(context.Background(), Program{Source: src}, lim)
	if err != nil {
		t.Fatalf("Trace: %v", err)
	}
	t.Logf("exit %+v stdout %q", res.Exit, res.Stdout)
	return res
}

func mustNotExist(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the program created %s outside its sandbox", p)
		}
	}
}

// traceText is everything a trace shows: stdout, exit, every repr.
func traceText(res *Trace) string {
	var b strings.Builder
	b.WriteString(res.Stdout)
	fmt.Fprintf(&b, "%+v", res.Exit)
	for _, s := range res.States {
		b.WriteString(s.Arg)
		for _, v := range s.Locals {
			b.WriteString(v.Value)
		}
	}
	return b.String()
}

// forkExec is a program fragment: spawn(argv, session) runs argv through
// _posixsubprocess.fork_exec, which raises no audit event.
const forkExec = `import _posixsubprocess, os
def spawn(argv, session=False):
    r, w = os.pipe()
    try:
        return _posixsubprocess.fork_exec([os.fsencode(a) for a in argv], (os.fsencode(argv[0]),), True, (w,),
            None, None, -1, -1, -1, -1, -1, -1, r, w, True, session, -1, None, None, None, -1, None, False)
    except BaseException as e:
        print('spawn', argv[0], type(e).__name__, e)
`

func TestSandboxInfo(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1")
	}
	info := sharedTracer(t).Info()
	t.Logf("%+v", info)
	if info.Sandbox != "bwrap" || !info.ProgramNS || !info.Seccomp || !info.NetNamespace || info.Dumpable {
		t.Errorf("sandbox incomplete: %+v", info)
	}
	if os.Geteuid() == 0 && info.UID != SandboxUID {
		t.Errorf("worker uid %d, want %d", info.UID, SandboxUID)
	}
}

func TestSandboxUnprivilegedUID(t *testing.T) {
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		res := run(t, tr, "import os\nprint(os.getuid(), os.geteuid(), os.getgid())\nprint(open('/proc/self/uid_map').read().split())\nprint(open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n", Limits{})
		lines := strings.Split(res.Stdout, "\n")
		if len(lines) < 3 || lines[0] != "65534 65534 65534" || lines[2] != "0000000000000000" {
			t.Errorf("the program runs as %q, want uid 65534 and no capabilities", res.Stdout)
		}
	})
}

// ctypes.CDLL(None).system(b'touch /tmp/x/pwned'): a shell as root.
func TestSandboxCtypesSystem(t *testing.T) {
	out := t.TempDir()
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		src := fmt.Sprintf("import ctypes\nr = ctypes.CDLL(None).system(b'touch %s/pwned; id > %s/id')\nprint(r)\n", out, out)
		run(t, tr, src, Limits{})
		mustNotExist(t, filepath.Join(out, "pwned"), filepath.Join(out, "id"))
	})
}

// os.open('pwned', O_CREAT|O_WRONLY, dir_fd=d) with d outside the scratch dir.
func TestSandboxDirFdWrite(t *testing.T) {
	out := t.TempDir()
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		dir := hostileTracers(t)["audit"].opts.ReadOnlyDirs[0]
		src := fmt.Sprintf(`import os
for d in [%q, %q, '/tmp', '/']:
    try:
        fd = os.open(d, os.O_RDONLY)
        os.open('pwned', os.O_CREAT | os.O_WRONLY, dir_fd=fd)
        print('wrote', d)
    except OSError as e:
        print('refused', d, e.errno)
`, out, dir)
		res := run(t, tr, src, Limits{})
		mustNotExist(t, filepath.Join(out, "pwned"), filepath.Join(dir, "pwned"))
		if strings.Contains(res.Stdout, "wrote") {
			t.Errorf("a write outside the scratch dir succeeded: %q", res.Stdout)
		}
	})
}

// open(f'/proc/{p}/environ') of ndb (and of any other host process).
func TestSandboxAncestorEnviron(t *testing.T) {
	secret := fmt.Sprintf("ndb-secret-%d", time.Now().UnixNano())
	// A host process with the secret in its environment (ndb's own
	// environment is fixed at its exec; this one is started with it).
	holder := exec.Command("sleep", "60")
	holder.Env = append(os.Environ(), "NDB_TEST_API_KEY="+secret)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	os.Setenv("NDB_TEST_API_KEY", secret)
	defer os.Unsetenv("NDB_TEST_API_KEY")
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		src := fmt.Sprintf(`import os
seen = []
def grab(pid):
    try:
        seen.append(open('/proc/%%s/environ' %% pid, 'rb').read().decode('latin-1'))
    except Exception as e:
        seen.append('%%s: %%s' %% (pid, type(e).__name__))
try:
    p = int(open(f'/proc/{os.getppid()}/stat').read().split()[3])
    grab(p)
except Exception as e:
    print('chain', type(e).__name__)
for pid in [%d, %d, 1, 2, os.getppid()] + [d for d in os.listdir('/proc') if d.isdigit()]:
    grab(pid)
print(seen)
`, os.Getpid(), holder.Process.Pid)
		res := run(t, tr, src, Limits{})
		if strings.Contains(traceText(res), secret) {
			t.Fatalf("the program read a host process's environment")
		}
	})
}

// signal.pidfd_send_signal(os.pidfd_open(p), 9) on ndb, and kill(-1).
func TestSandboxSignalNdb(t *testing.T) {
	canary := exec.Command("sleep", "60")
	if err := canary.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- canary.Wait() }()
	defer canary.Process.Kill()
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		src := fmt.Sprintf(`import os, signal
for p in (%d, %d):
    try:
        signal.pidfd_send_signal(os.pidfd_open(p), 9)
        print('pidfd sent', p)
    except OSError as e:
        print('pidfd refused', p, e.errno)
    try:
        os.kill(p, 9)
        print('kill sent', p)
    except OSError as e:
        print('kill refused', p, e.errno)
try:
    p = int(open(f'/proc/{os.getppid()}/stat').read().split()[3])
    signal.pidfd_send_signal(os.pidfd_open(p), 9)
    print('chain sent', p)
except Exception as e:
    print('chain', type(e).__name__)
try:
    os.kill(-1, 9)
except OSError as e:
    print('kill -1', e.errno)
`, os.Getpid(), canary.Process.Pid)
		run(t, tr, src, Limits{})
		select {
		case err := <-done:
			t.Fatalf("the program killed a host process: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	})
}

// _posixsubprocess.fork_exec (no audit event): a process that writes outside.
func TestSandboxForkExec(t *testing.T) {
	out := t.TempDir()
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		src := forkExec + fmt.Sprintf(`import time
pid = spawn(['/usr/bin/touch', %q])
pid2 = spawn(['/bin/sh', '-c', 'echo pwned > %s/sh; cat /etc/shadow > /tmp/shadow'])
time.sleep(0.5)
print(pid, pid2)
`, filepath.Join(out, "pwned"), out)
		run(t, tr, src, Limits{})
		mustNotExist(t, filepath.Join(out, "pwned"), filepath.Join(out, "sh"))
	})
}

// fork_exec with start_new_session (and fork + setsid): a daemon that
// would outlive the run.
func TestSandboxDaemonDies(t *testing.T) {
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		marker := fmt.Sprintf("59.%d", time.Now().UnixNano()%1000000)
		src := forkExec + fmt.Sprintf(`pid = spawn(['/usr/bin/sleep', %q], session=True)
try:
    if os.fork() == 0:
        os.setsid()
        os.execv('/usr/bin/sleep', ['sleep', %q])
except BaseException as e:
    print('fork', type(e).__name__)
print(pid)
`, marker, marker)
		run(t, tr, src, Limits{})
		time.Sleep(300 * time.Millisecond)
		if pids := processesWith(marker); len(pids) > 0 {
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("processes %v started by the program outlived its run", pids)
		}
	})
}

// processesWith returns the host processes whose command line holds s.
func processesWith(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// os.chmod(fd) / os.utime(fd) on a file the program may read but not change.
func TestSandboxChmodUtimeFd(t *testing.T) {
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		file := filepath.Join(hostileTracers(t)["audit"].opts.ReadOnlyDirs[0], "ro.txt")
		before, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		src := fmt.Sprintf(`import os
fd = os.open(%q, os.O_RDONLY)
print(os.read(fd, 100))
for what, f in [('chmod', lambda: os.chmod(fd, 0o777)), ('utime', lambda: os.utime(fd, (0, 0))),
                ('chown', lambda: os.chown(fd, 0, 0)), ('truncate', lambda: os.truncate(fd, 0))]:
    try:
        f()
        print(what, 'done')
    except OSError as e:
        print(what, 'refused', e.errno)
`, file)
		res := run(t, tr, src, Limits{})
		if !strings.Contains(res.Stdout, "read-only for programs") {
			t.Errorf("the program's read-only folder is not readable: %q", res.Stdout)
		}
		after, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
			t.Errorf("the program changed %s: %v %v -> %v %v", file, before.Mode(), before.ModTime(), after.Mode(), after.ModTime())
		}
	})
}

// ctypes setns into ndb's network namespace, then a loopback connection.
func TestSandboxSetns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	accepted := make(chan bool, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- true
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		src := fmt.Sprintf(`import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
for path in ['/proc/%d/ns/net', '/proc/1/ns/net', '/proc/self/ns/net']:
    try:
        fd = os.open(path, os.O_RDONLY)
        print('setns', path, libc.setns(fd, 0x40000000), ctypes.get_errno())
    except OSError as e:
        print('open', path, e.errno)
print('unshare', libc.unshare(0x10000000 | 0x40000000), ctypes.get_errno())
print('mount', libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno())
try:
    s = socket.create_connection(('127.0.0.1', %d), timeout=1)
    s.sendall(b'hi')
    print('connected')
except OSError as e:
    print('connect', e.errno)
`, os.Getpid(), port)
		res := run(t, tr, src, Limits{})
		if tr.opts.noAudit {
			for _, want := range []string{"unshare -1 1", "mount -1 1"} {
				if !strings.Contains(res.Stdout, want) {
					t.Errorf("stdout %q, want %q (seccomp: EPERM)", res.Stdout, want)
				}
			}
		}
		select {
		case <-accepted:
			t.Fatal("the program reached the test's listener")
		case <-time.After(200 * time.Millisecond):
		}
	})
}

// Switching off the tracer's own guard by walking frames, then writing
// outside, reading secrets, starting processes: the kernel still holds.
func TestSandboxGuardDisabled(t *testing.T) {
	out := t.TempDir()
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		src := fmt.Sprintf(`import sys, os
f = sys._getframe()
off = 0
while f is not None:
    g = f.f_locals.get('guard')
    if isinstance(g, list) and g:
        g[0] = False
        off += 1
    f = f.f_back
print('guards off', off)
for act in [lambda: open(%q, 'w').write('x'), lambda: os.system('touch %s'),
            lambda: print(open('/etc/shadow').read())]:
    try:
        act()
    except Exception as e:
        print(type(e).__name__, e)
`, filepath.Join(out, "pwned"), filepath.Join(out, "sh"))
		res := run(t, tr, src, Limits{})
		if !strings.Contains(res.Stdout, "guards off 1") {
			t.Logf("the guard was not found (the test program may need updating): %q", res.Stdout)
		}
		mustNotExist(t, filepath.Join(out, "pwned"), filepath.Join(out, "sh"))
		if strings.Contains(res.Stdout, "root:") {
			t.Errorf("the program read /etc/shadow")
		}
	})
}

// Any file was readable: /etc/shadow, files in the user's home.
func TestSandboxSecretFiles(t *testing.T) {
	home := t.TempDir()
	secret := fmt.Sprintf("home-secret-%d", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(home, ".token"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(home, 0o755)
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		src := fmt.Sprintf(`import os
for p in ['/etc/shadow', '/etc/passwd', %q, '/root/.bash_history', '/proc/1/environ']:
    try:
        print(p, open(p).read())
    except Exception as e:
        print(p, type(e).__name__)
for d in ['/', '/root', '/home', '/etc', %q]:
    try:
        print(d, sorted(os.listdir(d)))
    except Exception as e:
        print(d, type(e).__name__)
`, filepath.Join(home, ".token"), home)
		res := run(t, tr, src, Limits{})
		text := traceText(res)
		if strings.Contains(text, secret) || strings.Contains(text, "root:") {
			t.Errorf("the program read a host secret: %q", res.Stdout)
		}
	})
}

// Descriptors of the calling process reached the child.
func TestSandboxInheritedDescriptors(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1")
	}
	file := filepath.Join(t.TempDir(), "inherited.txt")
	if err := os.WriteFile(file, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Open without O_CLOEXEC (os.OpenFile always sets it), then start a
	// worker: a careless exec would hand this descriptor down.
	fd, err := syscall.Open(file, syscall.O_RDWR|syscall.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	for _, noAudit := range []bool{false, true} {
		tr, err := New(Options{Python: os.Getenv("NDB_PYTHON"), noAudit: noAudit})
		if err != nil {
			t.Fatal(err)
		}
		src := `import os
fds = sorted(int(f) for f in os.listdir('/proc/self/fd'))
print(fds)
for fd in range(3, 1024):
    try:
        if os.path.isfile('/proc/self/fd/%d' % fd) or os.fstat(fd).st_mode & 0o170000 == 0o100000:
            os.write(fd, b'pwned\n')
            print('wrote', fd)
    except OSError:
        pass
`
		res := run(t, tr, src, Limits{})
		healthy(t, tr)
		tr.Close()
		b, _ := os.ReadFile(file)
		if string(b) != "original\n" {
			t.Fatalf("the program wrote into an inherited descriptor: %q", b)
		}
		// 0, 1, 2, the record pipe and listdir's own descriptor
		if n := strings.Count(strings.Split(res.Stdout, "\n")[0], ","); n > 4 {
			t.Errorf("the program holds descriptors it did not open: %s", res.Stdout)
		}
	}
}

// Writing into the worker's stdout (/proc/<worker>/fd/1 via dir_fd) forged
// the result of later programs: try every descriptor the program can find,
// then check that the next program's trace is its own.
func TestSandboxForgeNextResult(t *testing.T) {
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		src := `import os, struct, json, zlib
payload = json.dumps({"elapsed": 0, "code": 0, "nonce": "x"}).encode()
forged = b'E' + struct.pack('>II', len(payload), zlib.crc32(payload)) + payload
recs = b'\x00\x00\x00\x00' * 4
targets = []
for pid in [d for d in os.listdir('/proc') if d.isdigit()] + ['self', '1', '2', str(os.getppid())]:
    for fd in range(0, 8):
        targets.append('/proc/%s/fd/%d' % (pid, fd))
hits = []
for p in targets:
    try:
        fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, forged)
        hits.append(p)
    except OSError:
        pass
try:
    root = os.open('/proc', os.O_RDONLY)
    fd = os.open('%d/fd/1' % os.getppid(), os.O_WRONLY, dir_fd=root)
    os.write(fd, forged)
    hits.append('dir_fd')
except OSError as e:
    print('dir_fd', e.errno)
print(hits)
`
		run(t, tr, src, Limits{})
		// the next program's result is its own (healthy checks its locals,
		// states and return value), several times over
		for i := 0; i < 3; i++ {
			healthy(t, tr)
		}
	})
}

// Nothing a program writes anywhere reaches the next program.
func TestSandboxNoLeakBetweenPrograms(t *testing.T) {
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		marker := fmt.Sprintf("leak-%d", time.Now().UnixNano())
		src := fmt.Sprintf(`import os
for d in ['.', os.environ.get('HOME', '.'), '/tmp', '/dev/shm', '/dev', '/', '/proc', os.path.dirname(os.getcwd())]:
    try:
        with open(os.path.join(d, %q), 'w') as f:
            f.write('x')
        print('wrote', d)
    except Exception as e:
        print(d, type(e).__name__)
`, marker)
		run(t, tr, src, Limits{})
		src = `import os
found = []
for top in ['/tmp', '/dev', '/', os.getcwd(), os.path.dirname(os.getcwd()), os.environ.get('HOME', '.')]:
    for root, dirs, files in os.walk(top):
        if root.startswith('/proc') or root.startswith('/sys') or root.startswith('/usr'):
            dirs[:] = []
            continue
        found += files
print(found)
`
		res := run(t, tr, src, Limits{})
		if strings.Contains(res.Stdout, marker) {
			t.Errorf("a file of the previous program is visible: %q", res.Stdout)
		}
	})
}

// ndb's own memory and output are bounded: 50,000 globals (3.2 GB before)
// and a loop over a 5 MB line (15 GB of JSON before).
func TestSandboxTraceBytesLimit(t *testing.T) {
	tr := sharedTracer(t)
	lim := Limits{MaxTraceBytes: 16 << 20, Timeout: 30 * time.Second}
	for name, src := range map[string]string{
		"globals": "for i in range(50000):\n    globals()['v%d' % i] = i\n",
		"line":    "for i in range(100000): x = i  # " + strings.Repeat("a", 5<<20) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			res, err := tr.TraceLimits(context.Background(), Program{Source: src}, lim)
			if err != nil {
				t.Fatal(err)
			}
			if res.Exit.Kind != ExitNever || res.Exit.Reason != "trace size" || !strings.Contains(res.Exit.Error, "MaxTraceBytes") {
				t.Errorf("exit %+v, want never/trace size", res.Exit)
			}
			var size int64
			for _, s := range res.States {
				size += int64(len(s.Src) + len(s.Arg))
				for _, v := range s.Locals {
					size += int64(len(v.Name) + len(v.Value))
				}
			}
			if size > lim.MaxTraceBytes {
				t.Errorf("kept %d bytes of states, limit %d", size, lim.MaxTraceBytes)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
			healthy(t, tr)
		})
	}
}

// The two-step program start (fork, unshare, fork) used where the one-step
// clone is not available gives the same sandbox.
func TestSandboxTwoStepStart(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1")
	}
	tr, err := New(Options{Python: os.Getenv("NDB_PYTHON"), noFastClone: true, noAudit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if info := tr.Info(); info.FastClone || !info.ProgramNS || !info.Seccomp || !info.ProgramProc {
		t.Fatalf("info %+v", info)
	}
	res := run(t, tr, "import os, ctypes\nprint(os.getuid(), os.getpid(), ctypes.CDLL(None).unshare(0x10000000))\n", Limits{})
	if res.Stdout != "65534 1 -1\n" {
		t.Errorf("stdout %q, want uid 65534, PID 1, unshare refused", res.Stdout)
	}
	marker := fmt.Sprintf("58.%d", time.Now().UnixNano()%1000000)
	run(t, tr, fmt.Sprintf("import os\nif os.fork() == 0:\n    os.setsid()\n    os.execv('/usr/bin/sleep', ['sleep', %q])\n", marker), Limits{})
	time.Sleep(300 * time.Millisecond)
	if pids := processesWith(marker); len(pids) > 0 {
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("a daemon outlived its run: %v", pids)
	}
	res = run(t, tr, "import time\nx = 1\ntime.sleep(30)\n", Limits{Timeout: time.Second})
	if res.Exit.Kind != ExitNever || res.Exit.Reason != "timeout" {
		t.Errorf("exit %+v, want never/timeout", res.Exit)
	}
	run(t, tr, "import os\nos._exit(3)\n", Limits{})
	healthy(t, tr)
}

// Each program's scratch tmpfs lives in its own mount namespace: nothing of
// it stays behind in the worker (no mount propagates back, every scratch
// folder is removed).
func TestSandboxScratchGone(t *testing.T) {
	eachLayer(t, func(t *testing.T, tr *Tracer) {
		for i := 0; i < 2; i++ {
			run(t, tr, "open('f', 'w').write('x' * 1000)\n", Limits{})
		}
		res := run(t, tr, "import os\nd = os.path.basename(os.getcwd())\nprint(os.listdir('..') == [d], os.listdir('.'))\n", Limits{})
		if res.Stdout != "True []\n" {
			t.Errorf("scratch folders left behind, or a scratch that is not new: %q", res.Stdout)
		}
	})
}

// RLIMIT_NPROC counts a program's own processes and threads (its user
// namespace), and is enforced: lowered to 20, the 50-fork bomb stops early;
// at the default, 10 threads (each reserves address space: the 1 GiB
// RLIMIT_AS allows about 20) and 40 processes run.
func TestSandboxProcessLimit(t *testing.T) {
	tr := hostileTracers(t)["kernel"]
	res := run(t, tr, `import os, resource, time
resource.setrlimit(resource.RLIMIT_NPROC, (20, 20))
n = 0
for i in range(50):
    try:
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
    except OSError:
        break
print(n)
`, Limits{})
	n, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
	if err != nil || n >= 50 || n < 5 {
		t.Errorf("forks under RLIMIT_NPROC 20: %q", res.Stdout)
	}
	res = run(t, tr, `import os, threading, time
ev = threading.Event()
ts = [threading.Thread(target=ev.wait) for i in range(10)]
for t in ts:
    t.start()
pids = []
for i in range(40):
    pid = os.fork()
    if pid == 0:
        time.sleep(0.5)
        os._exit(0)
    pids.append(pid)
ev.set()
for t in ts:
    t.join()
for p in pids:
    os.waitpid(p, 0)
print('ok')
`, Limits{})
	if res.Stdout != "ok\n" {
		t.Errorf("threads and processes at the default limit: %+v %q", res.Exit, res.Stdout)
	}
	healthy(t, tr)
}
