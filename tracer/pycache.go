package tracer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"ndb/internal/atomicfile"
)

// What ndb knows of an interpreter, found once and kept on disk between
// runs (docs/debugger.md, "Start-up and command latency"): a start through
// pyenv's shim costs 0.05-0.3 s, the layout probe (sysconfig) another
// 0.05 s, compiling the worker script 15 ms (workercode.go); the first
// prompt pays none of them while the cache is valid.
//
// The cache must never run the wrong Python: an entry is used only when
// everything that decides which interpreter name runs, and what it puts on
// sys.path, is as it was when the entry was made, checked by stat (inode,
// size, mtime, ctime) and by value:
//   - the file name resolves to on PATH, and the interpreter it ran;
//   - the environment that interpreters and version managers read (PATH,
//     HOME, PYTHON*, PYENV*, ASDF*, VIRTUAL_ENV*, CONDA*);
//   - the folders on its sys.path (a pip install changes site-packages)
//     and pyvenv.cfg;
//   - for a version manager's shim (pyenv's, asdf's: recognised by their
//     text), every file such a shim reads to choose the version: the
//     .python-version and .tool-versions files from the working directory
//     (and $PYENV_DIR) up to /, the global version files, and the folders
//     of installed versions.
// Anything else that is not the interpreter itself (a wrapper script, a
// shim of another manager) is resolved anew at every start. The cache is
// used only where no one else may write it (private).
// NDB_NO_PYTHON_CACHE=1 turns it off.

// NoPythonCacheEnv, set to 1, makes ndb resolve the interpreter and compile
// the worker at every start instead of using its cache on disk.
const NoPythonCacheEnv = "NDB_NO_PYTHON_CACHE"

// pythonInstall is what the tracer needs of an interpreter.
type pythonInstall struct {
	Executable string   // sys.executable: the real interpreter
	Paths      []string // what the sandbox binds for it (topDirs of its layout)
}

var (
	installs  sync.Map   // name as given, or an executable -> pythonInstall
	installMu sync.Mutex // one probe at a time
	// probes counts interpreter probes run (tests: a cache hit runs none),
	// workerStarts the workers started.
	probes, workerStarts atomic.Int64
)

// lookupInstall returns the interpreter behind name: from this process's
// cache, from the disk cache when it is still valid, else by running it.
func lookupInstall(name string) (pythonInstall, error) { return resolveInstall(name, true) }

// knownInstall is lookupInstall without running name: false when it would
// have to.
func knownInstall(name string) (pythonInstall, bool) {
	inst, err := resolveInstall(name, false)
	return inst, err == nil
}

var errNotKnown = errors.New("tracer: interpreter not in the cache")

func resolveInstall(name string, probe bool) (pythonInstall, error) {
	if name == "" {
		name = "python3"
	}
	if v, ok := installs.Load(name); ok {
		return v.(pythonInstall), nil
	}
	installMu.Lock()
	defer installMu.Unlock()
	if v, ok := installs.Load(name); ok {
		return v.(pythonInstall), nil
	}
	c := openPythonCache()
	inst, ok := c.lookup(name)
	if !ok {
		if !probe {
			return pythonInstall{}, errNotKnown
		}
		var err error
		if inst, err = c.probe(name); err != nil {
			return pythonInstall{}, err
		}
	}
	installs.Store(name, inst)
	installs.LoadOrStore(inst.Executable, inst)
	return inst, nil
}

// guessInstall is the newest cached answer for name, made in another
// folder or environment, whose files are unchanged: what name most likely
// runs here too. A worker may start on it while the probe runs (New); no
// program runs before the probe's answer is compared with it.
func guessInstall(name string) (pythonInstall, bool) {
	if name == "" {
		name = "python3"
	}
	c := openPythonCache()
	found := foundPath(name)
	if c.dir == "" || found == "" {
		return pythonInstall{}, false
	}
	for _, e := range c.read().Entries { // newest first
		if e.Name == name && e.Found.Path == found && e.valid() && stampOf(found) == e.Found &&
			stampOf(e.Executable.Path) == e.Executable && stampsUnchanged(e.Watch) {
			return pythonInstall{Executable: e.Executable.Path, Paths: topDirs(e.Paths)}, true
		}
	}
	return pythonInstall{}, false
}

// installProbe prints what ndb needs of the interpreter running it, as
// JSON: sys.executable, the folders the sandbox binds (prefixes, the
// executable's folder, sys.path, the install paths, LIBDIR, each as given
// and resolved) and the folders whose change may change sys.path.
const installProbe = `import sys, os, json, sysconfig
ps = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
      os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))]
ps += [p for p in sys.path if p]
ps += [v for k, v in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib", "platlib")]
ld = sysconfig.get_config_var("LIBDIR")
if ld: ps.append(ld)
print(json.dumps({"executable": sys.executable, "paths": [os.path.realpath(p) for p in ps] + ps,
                  "watch": [p for p in sys.path if p]}))`

type probeResult struct {
	Executable string   `json:"executable"`
	Paths      []string `json:"paths"`
	Watch      []string `json:"watch"`
}

// runProbe runs installProbe with name (one interpreter start, through its
// shim if it is one).
func runProbe(name string) (probeResult, error) {
	probes.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, "-s", "-c", installProbe).Output()
	if err != nil {
		return probeResult{}, fmt.Errorf("tracer: cannot run Python %q: %w", name, err)
	}
	var r probeResult
	if err := json.Unmarshal(out, &r); err != nil {
		return probeResult{}, fmt.Errorf("tracer: Python %q: bad layout: %w", name, err)
	}
	if r.Executable == "" || !filepath.IsAbs(r.Executable) {
		return probeResult{}, fmt.Errorf("tracer: Python %q reports no sys.executable", name)
	}
	return r, nil
}

// fileStamp identifies a file's state: a file that changed, or another
// file at the path, has another stamp. A path with nothing there has
// Exists false.
type fileStamp struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists,omitempty"`
	Dev    uint64 `json:"dev,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Mode   uint32 `json:"mode,omitempty"`
	Mtime  int64  `json:"mtime,omitempty"` // ns
	Ctime  int64  `json:"ctime,omitempty"` // ns: no tool can set it back
}

// stampOf stats path, following symbolic links (a link moved to another
// target stamps as that target).
func stampOf(path string) fileStamp {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return fileStamp{Path: path}
	}
	return fileStamp{Path: path, Exists: true, Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size, Mode: st.Mode,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

func stampsOf(paths []string) []fileStamp {
	out := make([]fileStamp, len(paths))
	for i, p := range paths {
		out[i] = stampOf(p)
	}
	return out
}

func stampsUnchanged(s []fileStamp) bool {
	for _, f := range s {
		if stampOf(f.Path) != f {
			return false
		}
	}
	return true
}

// Kinds of interpreter names the disk cache keeps.
const (
	kindDirect = "direct" // name runs the interpreter itself (a link to it included)
	kindPyenv  = "pyenv"  // pyenv's shim
	kindAsdf   = "asdf"   // asdf's shim
)

// shimKind tells a version manager's shim by its text ("" when it is not one).
func shimKind(path string) (kind, pyenvRoot string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", ""
	}
	switch {
	case pyenvExec.Match(head):
		if m := pyenvRootLine.FindSubmatch(head); m != nil {
			return kindPyenv, string(m[1])
		}
		return kindPyenv, ""
	case asdfExec.Match(head):
		return kindAsdf, ""
	}
	return "", ""
}

var (
	// the last line of pyenv's and asdf's shims: exec ".../pyenv" exec "$program" "$@"
	pyenvExec = regexp.MustCompile(`(?m)^exec \S*pyenv"? exec `)
	asdfExec  = regexp.MustCompile(`(?m)^exec \S*asdf"? exec `)
	// the PYENV_ROOT pyenv's shims export
	pyenvRootLine = regexp.MustCompile(`(?m)^export PYENV_ROOT="([^"\n]+)"`)
)

// shimInputs are the paths a pyenv or asdf shim reads to choose the
// version: version files from the working directory (and $PYENV_DIR) up to
// /, the global ones, and the folders of installed versions.
func shimInputs(pyenvRoot string) []string {
	home := os.Getenv("HOME")
	if pyenvRoot == "" {
		pyenvRoot = os.Getenv("PYENV_ROOT")
	}
	if pyenvRoot == "" && home != "" {
		pyenvRoot = filepath.Join(home, ".pyenv")
	}
	asdfDir := os.Getenv("ASDF_DATA_DIR")
	if asdfDir == "" && home != "" {
		asdfDir = filepath.Join(home, ".asdf")
	}
	var ps []string
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if d := os.Getenv("PYENV_DIR"); d != "" {
		starts = append(starts, d)
	}
	for _, d := range starts {
		for d = filepath.Clean(d); ; d = filepath.Dir(d) {
			ps = append(ps, filepath.Join(d, ".python-version"), filepath.Join(d, ".tool-versions"))
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	if pyenvRoot != "" {
		// versions: one installed or removed; plugins and libexec: hooks
		// that may choose another executable, pyenv itself
		for _, f := range []string{"version", "global", "default", "versions", "plugins", "libexec"} {
			ps = append(ps, filepath.Join(pyenvRoot, f))
		}
	}
	if home != "" {
		ps = append(ps, filepath.Join(home, ".tool-versions"), filepath.Join(home, ".asdfrc"))
	}
	if asdfDir != "" {
		ps = append(ps, filepath.Join(asdfDir, "installs", "python"))
	}
	for _, v := range []string{"ASDF_DEFAULT_TOOL_VERSIONS_FILENAME", "ASDF_CONFIG_FILE"} {
		if p := os.Getenv(v); filepath.IsAbs(p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// shimStamps stamps the shim's inputs that exist: a shim is decided by the
// nearest version file and the global ones, so a folder with no version
// file of its own on the way up to the same ones chooses as the folder the
// entry was made in (a new folder reuses the entry), while one created
// anywhere on the way is a new input, and the entry is not used.
func shimStamps(pyenvRoot string) []fileStamp {
	return slices.DeleteFunc(stampsOf(shimInputs(pyenvRoot)), func(f fileStamp) bool { return !f.Exists })
}

// envFingerprint hashes the environment variables that may change which
// interpreter a name runs or its sys.path.
func envFingerprint() string {
	var kept []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "HOME" || strings.HasPrefix(k, "PYTHON") || strings.HasPrefix(k, "PYENV") ||
			strings.HasPrefix(k, "ASDF") || strings.HasPrefix(k, "VIRTUAL_ENV") || strings.HasPrefix(k, "CONDA") {
			kept = append(kept, kv)
		}
	}
	sort.Strings(kept)
	h := sha256.Sum256([]byte(strings.Join(kept, "\x00")))
	return hex.EncodeToString(h[:16])
}

// installEntry is one cached resolution of a name.
type installEntry struct {
	Name       string      `json:"name"`
	Kind       string      `json:"kind"`
	Found      fileStamp   `json:"found"` // the file name resolves to on PATH
	Env        string      `json:"env"`
	Executable fileStamp   `json:"executable"`
	Paths      []string    `json:"paths"`
	Watch      []fileStamp `json:"watch"`            // sys.path folders, pyvenv.cfg
	Inputs     []fileStamp `json:"inputs,omitempty"` // a shim's version files
	Made       int64       `json:"made"`             // unix seconds, to drop the oldest
}

type cacheFile struct {
	Version int            `json:"version"`
	Entries []installEntry `json:"entries"`
}

const (
	cacheVersion    = 1
	cacheMaxEntries = 32
)

// pythonCache is the disk cache in a user's cache folder ("" dir: off).
type pythonCache struct{ dir string }

func openPythonCache() pythonCache {
	if os.Getenv(NoPythonCacheEnv) == "1" {
		return pythonCache{}
	}
	d, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(d) {
		return pythonCache{}
	}
	dir := filepath.Join(d, "ndb")
	// What the cache names is run (as root, when ndb is): it is used only
	// where no one else can write it.
	if _, err := os.Lstat(dir); err == nil && !(private(dir) && private(d)) {
		return pythonCache{}
	}
	return pythonCache{dir: dir}
}

// private: path is no link, and of this user (or root), and no one else
// may write it.
func private(path string) bool {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil || st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		return false
	}
	return (st.Uid == uint32(os.Geteuid()) || st.Uid == 0) && st.Mode&0o022 == 0
}

// readPrivate reads a cache file (nil when it is missing or not private).
func readPrivate(path string) []byte {
	if !private(path) {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

// mkdir makes the cache folder (false when it cannot, or it is not private).
func (c pythonCache) mkdir() bool {
	return c.dir != "" && os.MkdirAll(c.dir, 0o700) == nil && private(c.dir)
}

func (c pythonCache) file() string { return filepath.Join(c.dir, "python.json") }

func (c pythonCache) read() cacheFile {
	var f cacheFile
	if c.dir == "" {
		return f
	}
	b := readPrivate(c.file())
	if b == nil || json.Unmarshal(b, &f) != nil || f.Version != cacheVersion {
		return cacheFile{}
	}
	return f
}

// foundPath is the file name resolves to, absolute ("" when none).
func foundPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return ""
}

// lookup returns the cached install of name when every input it was made
// from is unchanged.
func (c pythonCache) lookup(name string) (pythonInstall, bool) {
	if c.dir == "" {
		return pythonInstall{}, false
	}
	f := c.read()
	if len(f.Entries) == 0 {
		return pythonInstall{}, false
	}
	found := foundPath(name)
	if found == "" {
		return pythonInstall{}, false
	}
	env := envFingerprint()
	for _, e := range f.Entries {
		if e.Name != name || e.Found.Path != found || e.Env != env || !e.valid() {
			continue
		}
		if stampOf(found) != e.Found || stampOf(e.Executable.Path) != e.Executable || !stampsUnchanged(e.Watch) {
			continue
		}
		if e.Kind != kindDirect {
			_, root := shimKind(found)
			if !slices.Equal(shimStamps(root), e.Inputs) {
				continue
			}
		}
		paths := topDirs(e.Paths)
		return pythonInstall{Executable: e.Executable.Path, Paths: paths}, true
	}
	return pythonInstall{}, false
}

// valid: an entry read from disk names absolute paths, never /.
func (e installEntry) valid() bool {
	if !e.Executable.Exists || !filepath.IsAbs(e.Executable.Path) || !e.Found.Exists {
		return false
	}
	switch e.Kind {
	case kindDirect, kindPyenv, kindAsdf:
	default:
		return false
	}
	for _, p := range e.Paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) == "/" {
			return false
		}
	}
	return true
}

// probe runs name and keeps the answer on disk when its kind is one the
// cache can check.
func (c pythonCache) probe(name string) (pythonInstall, error) {
	found := foundPath(name)
	before := stampOf(found)
	kind, root := shimKind(found)
	var inputs []fileStamp
	if kind != "" {
		inputs = shimStamps(root)
	}
	r, err := runProbe(name)
	if err != nil {
		return pythonInstall{}, err
	}
	inst := pythonInstall{Executable: r.Executable, Paths: topDirs(r.Paths)}
	if c.dir == "" || found == "" || stampOf(found) != before {
		return inst, nil
	}
	if kind == "" {
		if !sameFile(found, r.Executable) {
			return inst, nil // a wrapper the cache cannot check
		}
		kind = kindDirect
	}
	e := installEntry{Name: name, Kind: kind, Found: before, Env: envFingerprint(),
		Executable: stampOf(r.Executable), Paths: inst.Paths, Watch: stampsOf(watchPaths(r)),
		Made: time.Now().Unix()}
	if kind != kindDirect {
		if !slices.Equal(shimStamps(root), inputs) {
			return inst, nil // a version file changed while it ran
		}
		e.Inputs = inputs
	}
	c.store(e)
	return inst, nil
}

// supersedes: e is the newer answer to o's question.
func (e installEntry) supersedes(o installEntry) bool {
	if o.Name != e.Name || o.Found.Path != e.Found.Path || o.Env != e.Env || len(o.Inputs) != len(e.Inputs) {
		return false
	}
	for i := range o.Inputs {
		if o.Inputs[i].Path != e.Inputs[i].Path {
			return false
		}
	}
	return true
}

// watchPaths: sys.path's folders and where a virtual environment's
// pyvenv.cfg would be.
func watchPaths(r probeResult) []string {
	var ps []string
	for _, p := range r.Watch {
		if filepath.IsAbs(p) {
			ps = append(ps, filepath.Clean(p))
		}
	}
	bin := filepath.Dir(r.Executable)
	return append(ps, filepath.Join(bin, "pyvenv.cfg"), filepath.Join(filepath.Dir(bin), "pyvenv.cfg"))
}

// sameFile: a and b resolve to the same file.
func sameFile(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// store adds e, in place of the entries it supersedes (the same name,
// file, environment and inputs, whatever their stamps were: a stamp never
// comes back), keeps the newest cacheMaxEntries, and writes the file
// atomically under a lock, so that ndb processes storing at once lose
// none of each other's entries. A failure only costs a later start its
// probe.
func (c pythonCache) store(e installEntry) {
	if !c.mkdir() {
		return
	}
	lock, err := os.OpenFile(filepath.Join(c.dir, "python.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return
	}
	defer lock.Close()
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX) != nil {
		return
	}
	f := c.read()
	kept := []installEntry{e}
	for _, o := range f.Entries {
		if !e.supersedes(o) {
			kept = append(kept, o)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].Made > kept[j].Made })
	if len(kept) > cacheMaxEntries {
		kept = kept[:cacheMaxEntries]
	}
	b, err := json.Marshal(cacheFile{Version: cacheVersion, Entries: kept})
	if err != nil {
		return
	}
	atomicfile.WriteFile(c.file(), b)
}
