package tracer

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"ndb/internal/atomicfile"
)

// The worker script (isolate.py + tracer.py, ~130 KB) compiled by the
// interpreter that runs it, kept in the disk cache (pycache.go): CPython
// compiles it in ~15 ms at every worker start when it comes as source.
// With the compiled code cached, the worker starts as workerBoot, which
// reads it from its stdin before the requests and runs it as -c would
// have run the source; the first start of a new ndb build or interpreter
// compiles it in the background while the worker starts from the source,
// read from stdin the same way (workerBootSource: one -c argument may not
// pass 128 KiB).

// workerBoot runs the compiled worker script: argv[1] is its length in
// bytes on stdin (read with os.read, so that the requests after it stay
// unread for the worker), headed by the bytecode magic it was compiled
// for. The code is the script but its last line, main(), which the boot
// calls itself: main runs as deep in the stack as under -c, so that
// programs get as many frames before RecursionError.
const workerBoot = bootRead + `import marshal
try:
    from _frozen_importlib_external import MAGIC_NUMBER
except ImportError:
    from importlib.util import MAGIC_NUMBER
def _ndb_worker_code(b):
    if b[:len(MAGIC_NUMBER)] != MAGIC_NUMBER:
        raise SystemExit("ndb: worker code compiled for another Python")
    return marshal.loads(b[len(MAGIC_NUMBER):])
exec(_ndb_worker_code(_ndb_read(int(sys.argv.pop(1)), "code")))
main()`

// workerBootSource runs the worker script sent as source on stdin, but its
// last line, main(), which it calls itself, as workerBoot does (a start
// before the code is compiled): argv[1] is its length in bytes.
const workerBootSource = bootRead + `exec(compile(_ndb_read(int(sys.argv.pop(1)), "source").decode("utf-8"), "<string>", "exec", dont_inherit=True))
main()`

// bootRead reads the worker's script or code from stdin for the boots
// (with os.read, so that the requests after it stay unread for the
// worker).
const bootRead = `import os, sys
def _ndb_read(n, what):
    b = bytearray()
    while len(b) < n:
        d = os.read(0, n - len(b))
        if not d:
            raise SystemExit("ndb: worker " + what + " cut short")
        b += d
    return bytes(b)
`

// workerBody is workerSource but its last line, main() (workerBootSource
// calls it).
func workerBody() string {
	src := strings.TrimRight(workerSource(), "\n")
	body, ok := strings.CutSuffix(src, "\nmain()")
	if !ok {
		panic("tracer: the worker script does not end with main()")
	}
	return body + "\n"
}

// workerCompile writes the bytecode magic and the marshalled code of the
// script on its stdin but its last line, main() (see workerBoot), compiled
// as -c compiles it; it fails for a script that does not end so.
const workerCompile = `import ast, marshal, sys
try:
    from _frozen_importlib_external import MAGIC_NUMBER
except ImportError:
    from importlib.util import MAGIC_NUMBER
tree = ast.parse(sys.stdin.buffer.read().decode("utf-8"), "<string>")
last = tree.body[-1] if tree.body else None
if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and isinstance(last.value.func, ast.Name)
        and last.value.func.id == "main" and not last.value.args and not last.value.keywords):
    sys.exit("ndb: the worker script does not end with main()")
del tree.body[-1]
sys.stdout.buffer.write(MAGIC_NUMBER + marshal.dumps(compile(tree, "<string>", "exec", dont_inherit=True)))`

// workerSource is the worker script as the interpreter gets it.
func workerSource() string { return IsolationPython + "\n\n" + workerScript }

// workerSourceHash is the SHA-256 of workerSource, and of how it is
// compiled and run: a change of either needs a new compile.
var workerSourceHash = sync.OnceValue(func() [32]byte {
	return sha256.Sum256([]byte(workerSource() + "\x00" + workerCompile + "\x00" + workerBoot + "\x00" + workerBootSource))
})

var (
	workerCodes  sync.Map // code file -> []byte
	compilingMu  sync.Mutex
	compilingNow = map[string]bool{} // code files being compiled
	compiles     sync.WaitGroup      // tests: wait for the background compiles
)

// codeFile is where the compiled worker of python (an executable) lives:
// named by the script's text and the interpreter's stamp, so that another
// ndb build or a changed interpreter never finds it ("" when the cache is
// off).
func (c pythonCache) codeFile(python string) string {
	if c.dir == "" {
		return ""
	}
	stamp, _ := json.Marshal(stampOf(python))
	h := sha256.New()
	src := workerSourceHash()
	h.Write(src[:])
	h.Write(stamp)
	return filepath.Join(c.dir, "worker-"+hex.EncodeToString(h.Sum(nil)[:16])+".code")
}

// workerCode returns python's compiled worker from the cache, or nil.
// The file is a SHA-256 of the code and the code: a cut or damaged file
// is not run.
func workerCode(python string) []byte {
	f := openPythonCache().codeFile(python)
	if f == "" {
		return nil
	}
	if v, ok := workerCodes.Load(f); ok {
		return v.([]byte)
	}
	b := readPrivate(f)
	if len(b) < sha256.Size {
		return nil
	}
	sum, code := b[:sha256.Size], b[sha256.Size:]
	if h := sha256.Sum256(code); !bytes.Equal(h[:], sum) {
		return nil
	}
	workerCodes.Store(f, code)
	return code
}

// forgetWorkerCode drops python's compiled worker (it did not start).
func forgetWorkerCode(python string) {
	if f := openPythonCache().codeFile(python); f != "" {
		workerCodes.Delete(f)
		os.Remove(f)
	}
}

// compileWorker compiles the worker with python into the cache, in the
// background: the worker that starts meanwhile runs from source, the next
// one from the cache. One compile per file at a time; nothing when the
// cache is off.
func compileWorker(python string) {
	c := openPythonCache()
	f := c.codeFile(python)
	if f == "" {
		return
	}
	compilingMu.Lock()
	defer compilingMu.Unlock()
	if compilingNow[f] {
		return
	}
	compilingNow[f] = true
	compiles.Add(1)
	go func() {
		defer compiles.Done()
		defer func() {
			compilingMu.Lock()
			delete(compilingNow, f)
			compilingMu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// -I -S: nothing of site or the environment; compiling runs no code
		cmd := exec.CommandContext(ctx, python, "-I", "-S", "-c", workerCompile)
		cmd.Stdin = strings.NewReader(workerSource())
		out, err := cmd.Output()
		if err != nil || len(out) == 0 || !c.mkdir() {
			return
		}
		sum := sha256.Sum256(out)
		if atomicfile.WriteFile(f, append(sum[:], out...)) == nil {
			c.pruneCode()
		}
	}()
}

// keptCodes bounds the compiled workers kept (of other ndb builds and
// interpreters), 120 KB each.
const keptCodes = 8

// pruneCode removes all but the keptCodes newest compiled workers.
func (c pythonCache) pruneCode() {
	files, _ := filepath.Glob(filepath.Join(c.dir, "worker-*.code"))
	if len(files) <= keptCodes {
		return
	}
	mtime := map[string]int64{}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			mtime[f] = fi.ModTime().UnixNano()
		}
	}
	slices.SortFunc(files, func(a, b string) int { return cmp.Compare(mtime[b], mtime[a]) })
	for _, f := range files[keptCodes:] {
		os.Remove(f)
	}
}
