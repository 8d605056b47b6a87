package tracer

import (
	"bufio"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

//go:embed tracer.py
var workerScript string

// IsolationPython is tracer/isolate.py: the kernel isolation helpers the
// worker runs (it heads the worker script), for other Python processes
// that run untrusted code in the sandbox (the eval scorer imports it).
//
//go:embed isolate.py
var IsolationPython string

// SeccompFilterHex returns the seccomp filter programs run under, as the
// hex string isolate.py's _set_seccomp takes.
func SeccompFilterHex() (string, error) {
	f, err := hostSeccompFilter()
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(f), nil
}

// CutMarker follows a repr cut at Limits.ReprLimit characters. A cut value is
// exactly ReprLimit characters of the real repr plus this marker, so it is
// recognisable by its length alone (an uncut repr is at most ReprLimit long).
const CutMarker = "..."

// AddressPlaceholder replaces every memory address in a repr (" at 0x7f3a..."
// becomes " at 0x0") so reprs do not change from run to run.
const AddressPlaceholder = "0x0"

// OutputCutMarker ends Trace.Stdout when the program printed more than
// Limits.MaxOutput characters.
const OutputCutMarker = "\n[ndb: output cut]"

// Placeholders for values whose repr cannot be shown. ReprRaisedPrefix is
// followed by the exception's class name and ">".
const (
	ReprTimedOut     = "<repr timed out>"
	ReprRaisedPrefix = "<repr raised "
)

// Limits bound one traced run. A zero field means "use the default".
type Limits struct {
	Timeout     time.Duration // wall clock for the whole run (module body included): exit never/"timeout"
	MaxEvents   int           // recorded events; the next one ends the run: exit never/"events"
	MemoryBytes int64         // address space of the traced process (RLIMIT_AS): MemoryError -> exit never/"memory"
	ReprLimit   int           // characters of a repr kept before CutMarker
	MaxOutput   int           // characters of the program's stdout kept in Trace.Stdout
	// MaxTraceBytes bounds ndb's own memory and output for one run: the
	// trace's states counted as their JSON lines roughly cost (source line,
	// locals, arg, 64 bytes of fields; see docs/tracer.md), and the child's
	// record stream. Past it the run is stopped: exit never/"trace size",
	// with the limit in Exit.Error.
	MaxTraceBytes int64
	// LiveCPU bounds a live run's CPU time in all (RLIMIT_CPU of the
	// program's process: its threads, not its child processes), summed
	// over its resumes; a paused program uses none (docs/tracer.md, "Live
	// runs"). Past it: exit never/"cpu". Whole runs are bounded by Timeout
	// + 2 s instead.
	LiveCPU time.Duration
}

// DefaultLimits returns the limits used when a field is zero: 10 s, 100,000
// events, 1 GiB, reprs cut at 1,000 characters, 1 MiB (1,048,576 characters)
// of stdout, 128 MiB of trace, 5 minutes of CPU for a live run.
func DefaultLimits() Limits {
	return Limits{
		Timeout:       10 * time.Second,
		MaxEvents:     100000,
		MemoryBytes:   1 << 30,
		ReprLimit:     1000,
		MaxOutput:     1 << 20,
		MaxTraceBytes: 128 << 20,
		LiveCPU:       5 * time.Minute,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxEvents <= 0 {
		l.MaxEvents = d.MaxEvents
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.ReprLimit <= 0 {
		l.ReprLimit = d.ReprLimit
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = d.MaxOutput
	}
	if l.MaxTraceBytes <= 0 {
		l.MaxTraceBytes = d.MaxTraceBytes
	}
	if l.LiveCPU <= 0 {
		l.LiveCPU = d.LiveCPU
	}
	return l
}

// Options configure a Tracer.
type Options struct {
	Python string // interpreter name or path; default "python3"
	Limits Limits // zero fields take DefaultLimits

	// ReadOnlyDirs are host folders (or files) that programs see, read-only,
	// at the same path: the program's own folder, data it reads. Nothing
	// else of the host file system is visible but what Python needs.
	ReadOnlyDirs []string
	// NoSandbox runs programs without the kernel sandbox (so does
	// NDB_UNSAFE_NO_SANDBOX=1): only for code you trust. Without it, New
	// fails with ErrNoSandbox where bwrap is missing or cannot work.
	NoSandbox bool
	// ProgramDir is the folder of the program (Program.Context) to bind at
	// start, as the first program of that folder would (ProgramDir): saves
	// a worker restart when the caller knows it.
	ProgramDir string

	// HashSeed is the worker's PYTHONHASHSEED (a decimal in [0, 4294967295]);
	// "" is 0, deterministic set and str-hash order for traces and data sets.
	// Every run of a Tracer has the worker's seed (runs fork one interpreter,
	// whose hash secret is fixed when it starts), as restarts under one
	// `python3 -m pdb` share one.
	HashSeed string

	noMemView   bool // tests: use the portable list probe
	noAudit     bool // tests: no audit hooks, so that only the kernel sandbox guards
	noFastClone bool // tests: the two-step (fork, unshare, fork) program start
}

// Info describes a running worker.
type Info struct {
	Python         string `json:"python"`         // version, e.g. "3.11.7"
	Implementation string `json:"implementation"` // e.g. "cpython"
	Executable     string `json:"executable"`     // the real interpreter (sys.executable)
	NetNamespace   bool   `json:"netns"`          // runs in an empty network namespace
	ScratchTmpfs   bool   `json:"tmpfs"`          // scratch directories live on a private 128 MiB tmpfs
	Audit          bool   `json:"audit"`          // audit hooks guard the program
	MemView        bool   `json:"memview"`        // fast exact list probes (see docs/tracer.md)

	Sandbox     string `json:"sandbox"`      // "bwrap" (the worker runs under bubblewrap) or "none" (NoSandbox)
	UID         int    `json:"uid"`          // the worker's uid as the kernel sees it (SandboxUID when ndb is root)
	ProgramNS   bool   `json:"program_ns"`   // each program gets new user, PID, mount, net, IPC, UTS namespaces
	ProgramProc bool   `json:"program_proc"` // ... and a /proc of its own PID namespace (else an empty /proc)
	Seccomp     bool   `json:"seccomp"`      // each program runs under the seccomp filter (seccomp.go)
	Dumpable    bool   `json:"dumpable"`     // the worker's /proc entries are readable by its uid (false in the sandbox)
	FastClone   bool   `json:"fast_clone"`   // programs start with one clone (else fork + unshare + fork; docs/tracer.md)
	// OwnUID: ndb is not root and the sandbox's uid is the user's own
	// (no subordinate ids: docs/tracer.md, "Unprivileged users"); the
	// program reaches the bound folders with the user's identity.
	OwnUID bool `json:"own_uid"`
}

// ResolvePython returns the real interpreter behind name (its sys.executable),
// so that shims such as pyenv's (0.05-0.3 s a start) are paid once: per
// name for the life of the process, and across runs in the disk cache
// while it stays valid (pycache.go).
func ResolvePython(name string) (string, error) {
	inst, err := lookupInstall(name)
	if err != nil {
		return "", err
	}
	return inst.Executable, nil
}

type probeAnswer struct {
	inst pythonInstall
	err  error
}

// Tracer owns one persistent Python worker and traces programs with it, one
// after another. Trace calls are serialized by a mutex: a Tracer is safe to
// share, but runs one program at a time; use one Tracer per parallel worker.
type Tracer struct {
	opts    Options
	python  string
	scratch string // parent of the per-run scratch directories
	// progDir is the program folder (Context) the sandboxed worker
	// binds besides Options.ReadOnlyDirs: one at a time, the worker is
	// restarted for another one, and hidden from programs of other folders.
	progDir string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	info   Info
	last   workerEnd // how the last run ended, for benchmarks
	// guessPaths: the worker starts on a guessed interpreter (New) and
	// binds these for it
	guessPaths []string
	dead       bool
	closed     bool
}

// New resolves the interpreter and starts one worker.
func New(opts Options) (*Tracer, error) {
	if opts.Python == "" {
		opts.Python = "python3"
	}
	opts.Limits = opts.Limits.withDefaults()
	// The interpreter: known (pycache.go), else probed; while the probe
	// runs, the worker starts on the likely answer (guessInstall), kept
	// only where the probe agrees.
	inst, known := knownInstall(opts.Python)
	var probed chan probeAnswer
	if !known {
		guess, ok := guessInstall(opts.Python)
		if ok {
			probed = make(chan probeAnswer, 1)
			go func() {
				inst, err := lookupInstall(opts.Python)
				probed <- probeAnswer{inst, err}
			}()
			inst = guess
		} else {
			var err error
			if inst, err = lookupInstall(opts.Python); err != nil {
				return nil, err
			}
		}
	}
	dir, err := os.MkdirTemp("", "ndb-tracer-")
	if err != nil {
		return nil, fmt.Errorf("tracer: scratch directory: %w", err)
	}
	t := &Tracer{opts: opts, python: inst.Executable, scratch: dir}
	if opts.NoSandbox || UnsafeNoSandbox() {
		t.opts.NoSandbox = true
	} else if _, err := bwrapPath(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w; ndb refuses to run untrusted programs without it (set %s=1 or pass --no-sandbox to run trusted code unsandboxed)", err, UnsafeNoSandboxEnv)
	} else if d := opts.ProgramDir; d != "" && !withinDirs(d, opts.ReadOnlyDirs) {
		t.progDir = filepath.Clean(d)
	}
	if probed != nil {
		t.guessPaths = inst.Paths
	}
	err = t.start()
	if probed != nil {
		t.guessPaths = nil
		ans := <-probed
		if ans.err != nil || ans.inst.Executable != inst.Executable || !slices.Equal(ans.inst.Paths, inst.Paths) {
			if err == nil {
				t.kill()
			}
			if ans.err != nil {
				os.RemoveAll(dir)
				return nil, ans.err
			}
			// name runs another interpreter here: the worker on it
			t.python = ans.inst.Executable
			err = t.start()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		if t.sandboxed() {
			// Whether bwrap can build namespaces here is checked only
			// now (findBwrap: 5 ms), as the reason a worker did not start.
			if _, berr := findBwrap(); berr != nil {
				return nil, fmt.Errorf("%w; ndb refuses to run untrusted programs without it (set %s=1 or pass --no-sandbox to run trusted code unsandboxed)", berr, UnsafeNoSandboxEnv)
			}
		}
		return nil, err
	}
	return t, nil
}

func (t *Tracer) sandboxed() bool { return !t.opts.NoSandbox }

// Info reports the worker's interpreter and which guards are active.
func (t *Tracer) Info() Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.info
}

// hashSeed is the worker's PYTHONHASHSEED: Options.HashSeed when it is a
// valid seed, else 0.
func (t *Tracer) hashSeed() string {
	if n, err := strconv.ParseUint(t.opts.HashSeed, 10, 32); err == nil {
		return strconv.FormatUint(n, 10)
	}
	return "0"
}

// HashSeed is the PYTHONHASHSEED the tracer's programs run with.
func (t *Tracer) HashSeed() string { return t.hashSeed() }

// Limits returns the limits used when Trace is called without its own.
func (t *Tracer) Limits() Limits { return t.opts.Limits }

func (t *Tracer) start() error { return t.startWorker(true) }

// startWorker starts the worker; cached: from the compiled worker script
// when the cache has it (workercode.go).
func (t *Tracer) startWorker(cached bool) error {
	workerStarts.Add(1)
	filter, err := hostSeccompFilter()
	if err != nil && t.sandboxed() {
		return err
	}
	base := t.scratch
	dirs := t.opts.ReadOnlyDirs
	if t.progDir != "" {
		if _, err := os.Stat(t.progDir); err != nil {
			// the last program's folder is gone (a test's temporary one): a
			// worker started again for a program of none binds nothing
			t.progDir = ""
		}
	}
	if t.progDir != "" {
		dirs = append(append([]string{}, dirs...), t.progDir)
	}
	if t.sandboxed() {
		base = SandboxTmpDir(dirs) // the sandbox's private tmpfs
	}
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"PYTHONHASHSEED=" + t.hashSeed(), // 0: deterministic set-of-str order (see Options.HashSeed)
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONIOENCODING=utf-8",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"HOME=" + base,
		"TMPDIR=" + base,
		// one thread per numeric library: fits the address-space limit, deterministic
		"OPENBLAS_NUM_THREADS=1",
		"OMP_NUM_THREADS=1",
		"MKL_NUM_THREADS=1",
	}
	if t.opts.noMemView {
		env = append(env, "NDB_NO_MEMVIEW=1")
	}
	if t.opts.noAudit {
		env = append(env, "NDB_NO_AUDIT=1")
	}
	if t.opts.noFastClone || os.Getenv("NDB_NO_FAST_CLONE") == "1" {
		env = append(env, "NDB_NO_FAST_CLONE=1")
	}
	// The worker script compiled by this interpreter, from the cache
	// (workercode.go), else as source while it is compiled for the next
	// start.
	var code []byte
	if cached {
		code = workerCode(t.python)
	}
	// Either goes on stdin, ahead of the requests: the source as one -c
	// argument would pass the kernel's limit on one (128 KiB).
	script, boot := []byte(workerBody()), workerBootSource
	if code != nil {
		script, boot = code, workerBoot
	} else if cached {
		compileWorker(t.python)
	}
	args := []string{"-s", "-c", boot, strconv.Itoa(len(script)), base, hex.EncodeToString(filter)}
	var cmd *exec.Cmd
	if t.sandboxed() {
		cmd, err = sandboxCommand(SandboxConfig{Python: t.python, ReadOnlyDirs: dirs, Env: env, paths: t.guessPaths}, false, args...)
		if err != nil {
			return err
		}
	} else {
		cmd = exec.Command(t.python, args...)
		cmd.Dir = t.scratch
		cmd.Env = env
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 64 << 10}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("tracer: start %s: %w", t.python, err)
	}
	t.cmd, t.stdin, t.stdout, t.dead = cmd, stdin, bufio.NewReaderSize(stdout, 1<<20), false
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		// more than a pipe holds: written while the worker reads it
		stdin.Write(script)
	}()
	kind, payload, err := readFrameTimeout(t.stdout, 60*time.Second)
	if err != nil || kind != 'H' {
		t.kill()
		<-sent
		msg := strings.TrimSpace(stderr.String())
		if err == nil {
			err = fmt.Errorf("unexpected frame %q", kind)
		}
		if code != nil && t.startWorker(false) == nil {
			// the interpreter cannot run the cached code, but the source
			forgetWorkerCode(t.python)
			return nil
		}
		return fmt.Errorf("tracer: worker did not start (%s): %v %s", t.python, err, msg)
	}
	<-sent // the worker read the code before its hello: requests follow it
	if err := json.Unmarshal(payload, &t.info); err != nil {
		t.kill()
		return fmt.Errorf("tracer: bad hello from worker: %w", err)
	}
	t.info.OwnUID = t.sandboxed() && !isRoot() && subordinateIDs() == nil
	if t.sandboxed() && (t.info.Sandbox != "bwrap" || !t.info.ProgramNS || !t.info.Seccomp || (!t.info.OwnUID && t.info.UID != SandboxUID)) {
		t.kill()
		return fmt.Errorf("%w: the worker could not complete its sandbox (%+v)", ErrNoSandbox, t.info)
	}
	if !t.info.Audit {
		t.kill()
		return fmt.Errorf("tracer: Python %s (%s) has no audit hooks; ndb needs CPython 3.8 or newer", t.info.Python, t.python)
	}
	return nil
}

func (t *Tracer) kill() {
	t.dead = true
	if t.cmd != nil && t.cmd.Process != nil {
		syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
		t.cmd.Process.Kill()
		t.cmd.Wait()
	}
}

// Close stops the worker and removes its scratch directory.
func (t *Tracer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	if t.stdin != nil {
		t.stdin.Close()
	}
	done := make(chan struct{})
	go func() {
		if t.cmd != nil {
			t.cmd.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.kill()
		<-done
	}
	t.dead = true
	return os.RemoveAll(t.scratch)
}

// WrapperHead is what WrapCall writes between the source and the call.
const WrapperHead = "\n\ndef main():\n    return "

// WrapCall returns the source traced for a Program with Call, exactly
// Trace.Source: the source with CRLF and CR line endings made LF, a newline
// if it does not end with one, then WrapperHead + the
// call with surrounding spaces trimmed + "\n".
func WrapCall(source, call string) string {
	source = NormalizeNewlines(source)
	var b strings.Builder
	b.WriteString(source)
	if source != "" && !strings.HasSuffix(source, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(WrapperHead)
	b.WriteString(strings.TrimSpace(call))
	b.WriteByte('\n')
	return b.String()
}

// TracedSource returns what Trace.Source will be for p: WrapCall for a
// call, else (Call empty or blank) the source with line endings made LF.
func TracedSource(p Program) string {
	if strings.TrimSpace(p.Call) != "" {
		return WrapCall(p.Source, p.Call)
	}
	return NormalizeNewlines(p.Source)
}

// NormalizeNewlines makes every line ending LF ("\r\n" and a lone "\r"),
// as the tracer reads a program's text; the one place ndb does it.
func NormalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

type request struct {
	Source string         `json:"source"`
	Call   string         `json:"call,omitempty"`
	Limits map[string]any `json:"limits"`
	Nonce  string         `json:"nonce"` // echoed in the end frame: a frame of another run cannot pass for this one's
	// Program context (Program.Context; docs/tracer.md, "Program context")
	File     string   `json:"file,omitempty"`     // the name the code is compiled under ("" : <program>)
	Argv     []string `json:"argv,omitempty"`     // sys.argv
	Dir      string   `json:"dir,omitempty"`      // working directory and sys.path[0]
	Stdin    []byte   `json:"stdin,omitempty"`    // standard input (base64 in JSON)
	Writable bool     `json:"writable,omitempty"` // Dir becomes a writable copy
	Hide     []string `json:"hide,omitempty"`     // bound folders this program must not see
	Live     bool     `json:"live,omitempty"`     // pause and take requests (live.go)
	Input    bool     `json:"input,omitempty"`    // a live run's stdin is a pipe ndb writes (Context.Input)
}

// MaxStdin bounds Context.Stdin.
const MaxStdin = 64 << 20

// contextRequest fills the context fields of req for p. It returns the
// program folder the worker must bind ("" when none is needed).
func contextRequest(p Program, req *request) (string, error) {
	c := p.Context
	if c == nil {
		return "", nil
	}
	if p.Path == "" {
		return "", errors.New("tracer: Program.Context needs Path, the program's file")
	}
	fi, err := os.Stat(p.Path)
	if err != nil {
		return "", fmt.Errorf("tracer: program file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("tracer: program file %s is not a regular file", p.Path)
	}
	file, err := PythonFileName(p.Path)
	if err != nil {
		return "", err
	}
	req.File = file
	if strings.TrimSpace(p.Call) != "" {
		if len(c.Args) > 0 || c.Stdin != nil || c.Writable {
			return "", errors.New("tracer: arguments, stdin and a writable folder need a script (Call empty)")
		}
		return "", nil
	}
	if len(c.Stdin) > MaxStdin {
		return "", fmt.Errorf("tracer: stdin of %d bytes (at most %d)", len(c.Stdin), MaxStdin)
	}
	dir, err := ProgramDir(p.Path)
	if err != nil {
		return "", err
	}
	req.Argv = append([]string{p.Path}, c.Args...)
	req.Stdin = c.Stdin
	if req.Stdin == nil {
		req.Stdin = []byte{}
	}
	req.Dir = dir
	req.Writable = c.Writable
	return dir, nil
}

// ContextDir is the folder a program's run binds: its script's folder
// (ProgramDir) when it has a Context and no Call, else "".
func ContextDir(p Program) string {
	if p.Context == nil || strings.TrimSpace(p.Call) != "" || p.Path == "" {
		return ""
	}
	d, err := ProgramDir(p.Path)
	if err != nil {
		return ""
	}
	return d
}

// PythonFileName is the name CPython gives the script path on its command
// line (__file__, co_filename, tracebacks): path itself when absolute,
// else the working directory, "/" and path, not normalised.
func PythonFileName(path string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("tracer: working directory: %w", err)
	}
	if wd == "/" {
		return "/" + path, nil
	}
	return wd + "/" + path, nil
}

// ProgramDir is a script's folder as CPython puts it in sys.path[0]: the
// folder of the file, symbolic links resolved. The root folder is refused
// (its binding would show the whole host to the program).
func ProgramDir(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("tracer: program file: %w", err)
	}
	dir := filepath.Dir(real)
	if dir == "/" {
		return "", fmt.Errorf("tracer: %s is in the root folder; ndb shows a program its own folder, so put it in a folder of its own", path)
	}
	return dir, nil
}

// FolderWarning says why a sandboxed program will not be able to read its
// folder (Context), or "" when it can: when ndb runs as root, or as a user
// with subordinate ids, programs run as uid SandboxUID (a subordinate uid),
// which reads the folder as "others" do.
func FolderWarning(path string) string {
	if !isRoot() && subordinateIDs() == nil {
		return ""
	}
	dir, err := ProgramDir(path)
	if err != nil {
		return ""
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return ""
	}
	if fi.Mode().Perm()&0o005 != 0o005 {
		return fmt.Sprintf("%s (mode %04o) is not readable by the sandbox's uid %d: the program runs in an empty folder and cannot import or open its files (chmod o+rx it, or use --no-sandbox for trusted code)",
			dir, fi.Mode().Perm(), SandboxUID)
	}
	return ""
}

// withinDirs reports whether dir is one of dirs or below one of them.
func withinDirs(dir string, dirs []string) bool {
	for _, d := range dirs {
		d, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if dir == d || strings.HasPrefix(dir, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// Trace runs p under the tracer's limits. It returns an error only for ndb's
// own failures (a bad Program, a dead worker, a cancelled ctx); everything the
// program does, including crashing its process, is reported in Trace.Exit.
func (t *Tracer) Trace(ctx context.Context, p Program) (*Trace, error) {
	return t.TraceLimits(ctx, p, t.opts.Limits)
}

// TraceLimits is Trace with limits for this run only (zero fields: defaults).
func (t *Tracer) TraceLimits(ctx context.Context, p Program, lim Limits) (*Trace, error) {
	lim = lim.withDefaults()
	if strings.ContainsAny(p.Call, "\r\n") {
		return nil, fmt.Errorf("tracer: call %q must be a single line", p.Call)
	}
	source := TracedSource(p)
	tr := &Trace{Source: source, Call: p.Call, States: []State{}}
	if !utf8.ValidString(source) {
		off := invalidUTF8Offset(source)
		tr.Exit = Exit{Kind: ExitError, Reason: "syntax error",
			Error: fmt.Sprintf("SyntaxError('Non-UTF-8 code starting with %q at byte %d')", source[off:off+1], off)}
		return tr, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	req, line, err := t.request(p, source, lim, false)
	if err != nil {
		return nil, err
	}

	// The worker enforces the wall clock itself; this watchdog only catches a
	// stuck worker, and ctx lets the caller abandon the run.
	watch := make(chan struct{})
	var abandoned error
	var abandonMu sync.Mutex
	go func() {
		timer := time.NewTimer(lim.Timeout + 30*time.Second)
		defer timer.Stop()
		select {
		case <-watch:
			return
		case <-ctx.Done():
			abandonMu.Lock()
			abandoned = ctx.Err()
			abandonMu.Unlock()
		case <-timer.C:
			abandonMu.Lock()
			abandoned = errors.New("tracer: worker did not answer within the timeout")
			abandonMu.Unlock()
		}
		syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	}()
	defer close(watch)

	fail := func(err error) (*Trace, error) {
		abandonMu.Lock()
		a := abandoned
		abandonMu.Unlock()
		t.kill()
		if a != nil {
			return nil, a
		}
		return nil, err
	}
	if _, err := t.stdin.Write(line); err != nil {
		return fail(fmt.Errorf("tracer: worker gone: %w", err))
	}
	dec := newDecoder(source, tr, lim)
	dec.cpuLimit = float64(int(lim.Timeout.Seconds()) + 2) // as tracer.py sets it
	stopped := false
	var frameBuf []byte
	for {
		kind, payload, err := readFrameInto(t.stdout, frameBuf)
		if cap(payload) > cap(frameBuf) && cap(payload) <= 1<<20 {
			frameBuf = payload // the next frame reuses it (the worker sends at most 1 MiB)
		}
		if err != nil {
			return fail(fmt.Errorf("tracer: worker gone: %w", err))
		}
		switch kind {
		case 'D':
			dec.feed(payload)
			if dec.stopNow() && !stopped {
				// a full trace or a bad record: ask the worker to end this
				// run now (it reads stdin while it runs)
				stopped = true
				if _, err := fmt.Fprintf(t.stdin, "{\"stop\":%q}\n", req.Nonce); err != nil {
					return fail(fmt.Errorf("tracer: worker gone: %w", err))
				}
			}
		case 'E':
			var end workerEnd
			if err := json.Unmarshal(payload, &end); err != nil {
				return fail(fmt.Errorf("tracer: bad end frame: %w", err))
			}
			if end.Nonce != req.Nonce && end.WorkerError == "" {
				return fail(fmt.Errorf("tracer: end frame of another run (nonce %q, want %q)", end.Nonce, req.Nonce))
			}
			if end.WorkerError != "" {
				return nil, fmt.Errorf("tracer: worker: %s", end.WorkerError)
			}
			dec.finish(end)
			t.last = end
			return tr, nil
		default:
			return fail(fmt.Errorf("tracer: unexpected frame %q", kind))
		}
	}
}

// request starts the worker if needed, binds p's folder, and returns the
// request line for a run of p (live: a run that pauses; see live.go).
// The caller holds t.mu.
func (t *Tracer) request(p Program, source string, lim Limits, live bool) (request, []byte, error) {
	if t.closed {
		return request{}, nil, errors.New("tracer: Trace after Close")
	}
	if t.dead {
		if err := t.start(); err != nil {
			return request{}, nil, err
		}
	}
	req := request{Source: source, Call: strings.TrimSpace(p.Call), Live: live, Limits: map[string]any{
		"timeout": lim.Timeout.Seconds(),
		"events":  lim.MaxEvents,
		"memory":  lim.MemoryBytes,
		"repr":    lim.ReprLimit,
		"output":  lim.MaxOutput,
		// the raw record stream is more compact than the decoded trace
		"trace_bytes": lim.MaxTraceBytes,
	}, Nonce: newNonce()}
	if live {
		req.Limits["cpu"] = liveCPUSeconds(lim)
	}
	dir, err := contextRequest(p, &req)
	if err != nil {
		return request{}, nil, err
	}
	if live && p.Context != nil && p.Context.Input != nil {
		if p.Context.Stdin != nil {
			return request{}, nil, errors.New("tracer: a program's stdin is Context.Stdin or Context.Input, not both")
		}
		req.Input, req.Stdin = true, nil // the worker's pipe, fed by Input
	}
	if t.sandboxed() {
		// The worker sees only the folders it was started with: bind the
		// program's (one at a time), hide it from programs of others.
		if dir != "" && !withinDirs(dir, t.opts.ReadOnlyDirs) && dir != t.progDir {
			if !t.dead {
				t.kill()
			}
			t.progDir = dir
			if err := t.start(); err != nil {
				t.progDir = "" // the next run starts a worker without it
				return request{}, nil, fmt.Errorf("tracer: binding the program's folder %s: %w", dir, err)
			}
		}
		if t.progDir != "" && dir != t.progDir {
			req.Hide = []string{t.progDir}
		}
	}
	line, err := json.Marshal(req)
	if err != nil {
		return request{}, nil, fmt.Errorf("tracer: encode request: %w", err)
	}
	line = append(line, '\n')

	return req, line, nil
}

// liveCPUSeconds is a live run's RLIMIT_CPU.
func liveCPUSeconds(lim Limits) int { return max(1, int(lim.LiveCPU.Seconds())) }

type workerEnd struct {
	Elapsed     float64 `json:"elapsed"`
	CPU         float64 `json:"cpu"` // the child's user+system seconds
	Timeout     bool    `json:"timeout"`
	TooBig      bool    `json:"too_big"`
	Killed      bool    `json:"killed"` // still running at the end of its stream: killed by the worker
	Code        *int    `json:"code"`
	Signal      int     `json:"signal"`
	WorkerError string  `json:"worker_error"`
	Nonce       string  `json:"nonce"`
}

func newNonce() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

func invalidUTF8Offset(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// maxFrame bounds one worker frame (the worker sends at most 1 MiB of
// records per frame).
const maxFrame = 64 << 20

// readFrame reads one worker frame: type byte, 4-byte big-endian length,
// 4-byte big-endian CRC-32 (IEEE) of the payload, payload.
func readFrame(r *bufio.Reader) (byte, []byte, error) { return readFrameInto(r, nil) }

// readFrameInto is readFrame into buf when it is large enough: a run's
// frames (up to 1 MiB of records each) reuse one buffer, which the decoder
// has copied what it keeps out of before the next frame is read.
func readFrameInto(r *bufio.Reader, buf []byte) (byte, []byte, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	if uint32(cap(buf)) >= n {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, err
	}
	if crc32.ChecksumIEEE(buf) != binary.BigEndian.Uint32(hdr[5:]) {
		return 0, nil, errors.New("frame checksum mismatch")
	}
	return hdr[0], buf, nil
}

func readFrameTimeout(r *bufio.Reader, d time.Duration) (byte, []byte, error) {
	type res struct {
		k byte
		p []byte
		e error
	}
	ch := make(chan res, 1)
	go func() {
		k, p, e := readFrame(r)
		ch <- res{k, p, e}
	}()
	select {
	case x := <-ch:
		return x.k, x.p, x.e
	case <-time.After(d):
		return 0, nil, errors.New("timed out waiting for the worker")
	}
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		q := p
		if len(q) > l.n {
			q = q[:l.n]
		}
		l.w.Write(q)
		l.n -= len(q)
	}
	return len(p), nil
}
