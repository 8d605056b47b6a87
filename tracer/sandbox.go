package tracer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// The kernel sandbox (docs/tracer.md, "Limits and safety"). Two layers:
//
//  1. The warm worker itself runs under bubblewrap (bwrap): new PID, IPC,
//     UTS, network and cgroup namespaces (and a user namespace when ndb is
//     not root), a root file system that holds only what Python needs,
//     read-only, plus the folders the caller names (read-only), a private
//     /tmp, its own /proc, no descriptors but its stdin/stdout/stderr pipes,
//     a clean environment, --new-session, --die-with-parent, no_new_privs.
//     When ndb runs as root the worker starts as root inside it with only
//     CAP_SYS_ADMIN (to mount its /proc), CAP_SETUID and CAP_SETGID, and
//     drops to uid/gid 65534 (every capability gone) before it reads a
//     request: the kernel sees an unprivileged uid, also when ndb is root.
//  2. Each program runs in a child of the worker that enters new user,
//     PID, mount, network, IPC and UTS namespaces of its own, mounts its own
//     /proc and a fresh size-limited tmpfs as its scratch directory, closes
//     every descriptor but its record pipe, sets no_new_privs and installs
//     the seccomp filter of seccomp.go. It is PID 1 of its namespace: the
//     worker and the other programs are invisible to it, and everything it
//     starts dies with it.

// SandboxUID is the unprivileged uid (and gid) programs run as.
const SandboxUID = 65534

// UnsafeNoSandboxEnv, set to 1, lets ndb run programs without the kernel
// sandbox where bwrap is missing or unusable (Options.NoSandbox does the
// same from code). Only for code you trust.
const UnsafeNoSandboxEnv = "NDB_UNSAFE_NO_SANDBOX"

// ErrNoSandbox is returned (wrapped, with the reason) by New and
// SandboxCommand when no kernel sandbox can be built on this machine.
var ErrNoSandbox = errors.New("tracer: no kernel sandbox for untrusted programs")

// UnsafeNoSandbox reports whether the environment asks to run without the
// sandbox (NDB_UNSAFE_NO_SANDBOX=1).
func UnsafeNoSandbox() bool { return os.Getenv(UnsafeNoSandboxEnv) == "1" }

// SandboxConfig describes one sandboxed Python process.
type SandboxConfig struct {
	Python       string   // interpreter (resolved with ResolvePython)
	ReadOnlyDirs []string // host folders (or files) visible read-only at the same path
	Env          []string // the whole environment (NAME=value)
	TmpBytes     int64    // size of the private /tmp (default 256 MiB)

	paths []string // what to bind for Python; nil: pythonPaths(Python)
}

// pythonPaths is what an interpreter needs to see: its prefixes, the
// directories on its sys.path, its executable (pycache.go: found once).
func pythonPaths(python string) ([]string, error) {
	inst, err := lookupInstall(python)
	if err != nil {
		return nil, err
	}
	return inst.Paths, nil
}

// topDirs keeps the existing absolute paths that no other kept path
// contains, sorted; paths under /usr are covered by the /usr bind.
func topDirs(in []string) []string {
	var ps []string
	for _, p := range in {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) || p == "/" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ps = append(ps, p)
	}
	ps = append(ps, "/usr")
	sort.Strings(ps)
	var out []string
	for _, p := range ps {
		if len(out) > 0 {
			last := out[len(out)-1]
			if p == last || strings.HasPrefix(p, last+"/") {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

type bwrapState struct {
	path string
	err  error
}

var (
	bwrapOnce sync.Once
	bwrapRes  bwrapState
)

// bwrapPath locates bwrap.
var bwrapPath = sync.OnceValues(func() (string, error) {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return "", fmt.Errorf("%w: bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)", ErrNoSandbox)
	}
	return p, nil
})

// findBwrap locates bwrap and checks once that it can build a sandbox here.
func findBwrap() (string, error) {
	bwrapOnce.Do(func() {
		p, err := bwrapPath()
		if err != nil {
			bwrapRes.err = err
			return
		}
		args := append(bwrapBase(nil), "--ro-bind", "/usr", "/usr")
		args = append(args, rootLinks()...)
		args = append(args, "--", "/usr/bin/env", "true")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, p, args...).CombinedOutput()
		if err != nil {
			bwrapRes.err = fmt.Errorf("%w: bwrap cannot create namespaces here (%v: %s); user namespaces may be disabled",
				ErrNoSandbox, err, strings.TrimSpace(string(out)))
			return
		}
		bwrapRes.path = p
	})
	return bwrapRes.path, bwrapRes.err
}

func isRoot() bool { return os.Geteuid() == 0 }

// bwrapBase are the namespace and process options, by who runs ndb (sub:
// an unprivileged user's subordinate ids, see subuid.go).
func bwrapBase(sub *subIDs) []string {
	a := []string{"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session"}
	if sub != nil {
		// uid 0 of the namespace is the user (for bwrap's setup), the
		// worker drops to 65534, a subordinate uid, as the root path does
		a = append(a, subIDArgs()...)
		a = append(a, "--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID")
	} else if isRoot() {
		// No user namespace: the worker starts as root with three
		// capabilities and drops to SandboxUID itself (tracer.py, _enter_sandbox).
		a = append(a, "--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID")
	} else {
		a = append(a, "--unshare-user", "--uid", fmt.Sprint(SandboxUID), "--gid", fmt.Sprint(SandboxUID), "--cap-drop", "ALL")
	}
	return a
}

// rootLinks recreates /bin, /lib, /lib64, /sbin as on the host: symbolic
// links into /usr (merged /usr) or read-only binds.
func rootLinks() []string {
	var a []string
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		} else if fi.IsDir() {
			a = append(a, "--ro-bind", d, d)
		}
	}
	return a
}

// SandboxTmpDir is where the sandbox's private tmpfs is mounted: /tmp,
// unless one of the folders bound read-only is /tmp (a program whose
// folder is /tmp itself) or a folder above it: the bind would cover the
// tmpfs, so it goes to /ndb-tmp (or the first free /ndb-tmp-N) instead.
func SandboxTmpDir(readOnlyDirs []string) string {
	for i := 0; ; i++ {
		cand := "/tmp"
		if i > 0 {
			cand = "/ndb-tmp"
		}
		if i > 1 {
			cand = fmt.Sprintf("/ndb-tmp-%d", i)
		}
		free := true
		for _, d := range readOnlyDirs {
			d, err := filepath.Abs(d)
			if err == nil && (cand == d || strings.HasPrefix(cand, strings.TrimSuffix(d, "/")+"/")) {
				free = false
			}
		}
		if free {
			return cand
		}
	}
}

// SandboxCommand returns a command that runs Python with args inside the
// outer sandbox (layer 1 above). The caller sets Stdin/Stdout/Stderr; the
// working directory inside is the private tmpfs (SandboxTmpDir: /tmp but
// where a bound folder covers it). It fails with ErrNoSandbox when bwrap is
// missing or cannot work here. The Python process sees NDB_SANDBOX=root or
// NDB_SANDBOX=sub (an ordinary user's subordinate ids, subuid.go): it must
// drop to SandboxUID itself, see isolate.py's _enter_sandbox; or
// NDB_SANDBOX=user (bwrap made it SandboxUID, the user's own uid outside).
func SandboxCommand(cfg SandboxConfig, args ...string) (*exec.Cmd, error) {
	return sandboxCommand(cfg, true, args...)
}

// sandboxCommand is SandboxCommand; without probe, bwrap's namespaces are
// not tried first (the tracer's worker checks its sandbox itself, and New
// asks findBwrap why only when it did not start).
func sandboxCommand(cfg SandboxConfig, probe bool, args ...string) (*exec.Cmd, error) {
	find := bwrapPath
	if probe {
		find = findBwrap
	}
	bw, err := find()
	if err != nil {
		return nil, err
	}
	paths := cfg.paths
	if paths == nil {
		if paths, err = pythonPaths(cfg.Python); err != nil {
			return nil, err
		}
	}
	tmp := cfg.TmpBytes
	if tmp <= 0 {
		tmp = 256 << 20
	}
	sub := subordinateIDs()
	a := bwrapBase(sub)
	a = append(a, "--ro-bind", "/usr", "/usr")
	a = append(a, rootLinks()...)
	// What the dynamic loader and numeric libraries read from /etc; not the
	// rest of it (no passwd, shadow, hosts, ssl keys).
	a = append(a, "--perms", "0755", "--dir", "/etc")
	for _, f := range []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"} {
		a = append(a, "--ro-bind-try", f, f)
	}
	a = append(a, "--dev", "/dev")
	if isRoot() {
		a = append(a, "--dir", "/proc") // the worker mounts a plain /proc itself
	} else {
		a = append(a, "--proc", "/proc")
	}
	tmpDir := SandboxTmpDir(cfg.ReadOnlyDirs)
	a = append(a, "--perms", "01777", "--size", fmt.Sprint(tmp), "--tmpfs", tmpDir)
	// bwrap creates the parents of a bind's destination with the modes of
	// the host's (/root is 0700): make them 0755, so that the sandbox uid
	// can reach what is bound below them.
	made := map[string]bool{"/": true, tmpDir: true, "/usr": true, "/dev": true, "/proc": true}
	bind := func(p string) {
		var parents []string
		for d := filepath.Dir(p); !made[d]; d = filepath.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			a = append(a, "--perms", "0755", "--dir", parents[i])
			made[parents[i]] = true
		}
		a = append(a, "--ro-bind", p, p)
		made[p] = true
	}
	for _, p := range paths {
		if p != "/usr" {
			bind(p)
		}
	}
	for _, d := range cfg.ReadOnlyDirs {
		d, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("tracer: read-only folder: %w", err)
		}
		bind(d)
	}
	mode := "user"
	if isRoot() {
		mode = "root" // the worker drops to SandboxUID itself
	} else if sub != nil {
		mode = "sub" // so it does, from uid 0 of its user namespace (the user)
	}
	a = append(a, "--chdir", tmpDir, "--", cfg.Python)
	a = append(a, args...)
	cmd := exec.Command(bw, a...)
	cmd.Env = append(append([]string{}, cfg.Env...), "NDB_SANDBOX="+mode, fmt.Sprintf("NDB_SANDBOX_UID=%d", SandboxUID))
	if sub != nil {
		if err := sub.mapIDs(cmd); err != nil {
			return nil, err
		}
	}
	return cmd, nil
}
