package tracer

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The interpreter cache (pycache.go, workercode.go): a valid entry spares
// the probe; any change of what decides the interpreter or its sys.path
// makes ndb probe again, and the answer is always what running the name
// says.

// realPython is the interpreter the tests' names lead to.
func realPython(t *testing.T) string {
	t.Helper()
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	return strings.TrimSpace(string(exe))
}

// isolatedCache gives the test a cache folder of its own and forgets what
// this process resolved.
func isolatedCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv(NoPythonCacheEnv, "")
	forgetInstalls()
	t.Cleanup(forgetInstalls)
	return filepath.Join(dir, "ndb")
}

func forgetInstalls() {
	installs.Range(func(k, _ any) bool {
		installs.Delete(k)
		return true
	})
}

// resolveFresh resolves name as a new ndb process would (nothing in
// memory) and reports whether it had to run the interpreter.
func resolveFresh(t *testing.T, name string) (pythonInstall, bool) {
	t.Helper()
	forgetInstalls()
	before := probes.Load()
	inst, err := lookupInstall(name)
	if err != nil {
		t.Fatalf("lookupInstall(%s): %v", name, err)
	}
	return inst, probes.Load() != before
}

// truth is sys.executable as running name says now.
func truth(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command(name, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// A link to the interpreter (as /usr/bin/python3 or a venv's python are):
// cached; a pyvenv.cfg appearing beside it, or the link moved to another
// interpreter, is seen.
func TestPythonCacheDirect(t *testing.T) {
	py := realPython(t)
	isolatedCache(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "bin", "python3")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, link); err != nil {
		t.Fatal(err)
	}
	first, probed := resolveFresh(t, link)
	if !probed || first.Executable != truth(t, link) || len(first.Paths) == 0 {
		t.Fatalf("first resolution: %+v probed=%v, want %s", first, probed, truth(t, link))
	}
	again, probed := resolveFresh(t, link)
	if probed || !reflect.DeepEqual(again, first) {
		t.Fatalf("second resolution: %+v probed=%v, want %+v from the cache", again, probed, first)
	}

	// a virtual environment made here: another sys.prefix, another layout
	writeFile(t, filepath.Join(dir, "pyvenv.cfg"), "home = "+filepath.Dir(py)+"\n", 0o644)
	venv, probed := resolveFresh(t, link)
	if !probed || !slices.Contains(venv.Paths, dir) {
		t.Fatalf("after pyvenv.cfg: %+v probed=%v, want a probe and %s bound", venv, probed, dir)
	}
	if err := os.Remove(filepath.Join(dir, "pyvenv.cfg")); err != nil {
		t.Fatal(err)
	}
	if back, probed := resolveFresh(t, link); !probed || !reflect.DeepEqual(back, first) {
		t.Fatalf("pyvenv.cfg removed: %+v probed=%v, want %+v", back, probed, first)
	}

	// the link now leads to another interpreter
	other, _ := filepath.EvalSymlinks("/usr/bin/python3")
	if real, _ := filepath.EvalSymlinks(py); other == "" || other == real {
		return
	}
	os.Remove(link)
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	moved, probed := resolveFresh(t, link)
	if !probed || reflect.DeepEqual(moved.Paths, first.Paths) {
		t.Fatalf("link moved to %s: %+v probed=%v, want a probe and its layout", other, moved, probed)
	}
}

// fakePyenv makes a pyenv root whose shim chooses, as pyenv does, from
// $PYENV_VERSION, the nearest .python-version up from the working
// directory, or the global version file, among versions a and b (links
// to py).
func fakePyenv(t *testing.T, py string) (root, shim string) {
	root = t.TempDir()
	shim = filepath.Join(root, "shims", "python3")
	writeFile(t, shim, `#!/bin/sh
set -e
program="${0##*/}"
export PYENV_ROOT="`+root+`"
exec "`+root+`/libexec/pyenv" exec "$program" "$@"
`, 0o755)
	writeFile(t, filepath.Join(root, "libexec", "pyenv"), `#!/bin/sh
set -e
shift
program="$1"; shift
v="$PYENV_VERSION"
d="$PWD"
while [ -z "$v" ] && [ -n "$d" ]; do
  [ -f "$d/.python-version" ] && v=$(cat "$d/.python-version")
  d="${d%/*}"
done
[ -n "$v" ] || v=$(cat "$PYENV_ROOT/version")
exec "$PYENV_ROOT/versions/$v/bin/$program" "$@"
`, 0o755)
	for _, v := range []string{"a", "b"} {
		bin := filepath.Join(root, "versions", v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(py, filepath.Join(bin, "python3")); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "version"), "a\n", 0o644)
	return root, shim
}

// A pyenv shim: cached, and every input pyenv chooses the version by is
// watched: the global version file, a .python-version above the working
// directory, $PYENV_VERSION, a version installed.
func TestPythonCachePyenvShim(t *testing.T) {
	py := realPython(t)
	isolatedCache(t)
	t.Setenv("PYENV_VERSION", "")
	root, shim := fakePyenv(t, py)
	work := t.TempDir()
	sub := filepath.Join(work, "project", "src")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	want := func(v string) string { return filepath.Join(root, "versions", v, "bin", "python3") }
	check := func(step, version string, wantProbe bool) {
		t.Helper()
		got, probed := resolveFresh(t, shim)
		if got.Executable != want(version) || got.Executable != truth(t, shim) {
			t.Fatalf("%s: resolved %s, pyenv runs %s, want %s", step, got.Executable, truth(t, shim), want(version))
		}
		if probed != wantProbe {
			t.Fatalf("%s: probed=%v, want %v", step, probed, wantProbe)
		}
	}
	check("first", "a", true)
	check("cached", "a", false)
	writeFile(t, filepath.Join(root, "version"), "b\n", 0o644)
	check("global version changed", "b", true)
	check("cached again", "b", false)
	writeFile(t, filepath.Join(work, "project", ".python-version"), "a\n", 0o644)
	check(".python-version above the working directory", "a", true)
	check("cached with it", "a", false)
	t.Setenv("PYENV_VERSION", "b")
	check("PYENV_VERSION", "b", true)
	t.Setenv("PYENV_VERSION", "")
	check("PYENV_VERSION unset: the entry made without it", "a", false)
	if err := os.MkdirAll(filepath.Join(root, "versions", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("a version installed", "a", true)
	t.Chdir(work)
	check("another working directory", "b", true)
	// a folder never seen chooses as one with the same version files on its
	// way up: no probe (the first prompt in a new folder)
	fresh := t.TempDir()
	t.Chdir(fresh)
	check("a new folder, no version file of its own", "b", false)
	other := filepath.Join(work, "project", "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(other)
	check("a new folder under project/.python-version", "a", false)
	writeFile(t, filepath.Join(fresh, ".python-version"), "a\n", 0o644)
	t.Chdir(fresh)
	check("the new folder's own .python-version", "a", true)
}

// A script that is no known shim is run at every start: ndb cannot know
// what it reads.
func TestPythonCacheUnknownWrapper(t *testing.T) {
	py := realPython(t)
	cache := isolatedCache(t)
	wrapper := filepath.Join(t.TempDir(), "python3")
	writeFile(t, wrapper, "#!/bin/sh\nexec "+py+" \"$@\"\n", 0o755)
	for i := range 2 {
		got, probed := resolveFresh(t, wrapper)
		if !probed || got.Executable != truth(t, wrapper) {
			t.Fatalf("run %d: %+v probed=%v, want a probe every time", i, got, probed)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cache, "python.json")); err == nil && strings.Contains(string(b), wrapper) {
		t.Fatalf("the wrapper was cached: %s", b)
	}
}

// A damaged cache file, or an entry that would bind the whole host, is
// never used; NDB_NO_PYTHON_CACHE=1 writes nothing.
func TestPythonCacheBadEntries(t *testing.T) {
	py := realPython(t)
	cache := isolatedCache(t)
	file := filepath.Join(cache, "python.json")
	first, _ := resolveFresh(t, py)
	writeFile(t, file, "{not json", 0o600)
	if got, probed := resolveFresh(t, py); !probed || !reflect.DeepEqual(got, first) {
		t.Fatalf("damaged file: %+v probed=%v", got, probed)
	}
	if _, probed := resolveFresh(t, py); probed {
		t.Fatal("the file was not written anew")
	}
	for _, paths := range [][]string{{"/"}, {"relative/dir"}, {"/usr/../"}} {
		var f cacheFile
		b, _ := os.ReadFile(file)
		if err := json.Unmarshal(b, &f); err != nil || len(f.Entries) != 1 {
			t.Fatalf("cache file: %v %s", err, b)
		}
		f.Entries[0].Paths = paths
		b, _ = json.Marshal(f)
		writeFile(t, file, string(b), 0o600)
		if got, probed := resolveFresh(t, py); !probed || !reflect.DeepEqual(got, first) {
			t.Fatalf("entry binding %q: %+v probed=%v, want it refused", paths, got, probed)
		}
	}

	// ndb runs what the cache names: not from a folder or file others may write
	if _, probed := resolveFresh(t, py); probed {
		t.Fatal("the refused entries were not replaced")
	}
	for _, path := range []string{file, cache} {
		if err := os.Chmod(path, 0o777); err != nil {
			t.Fatal(err)
		}
		if _, probed := resolveFresh(t, py); !probed {
			t.Fatalf("%s writable by others, and used", path)
		}
		if err := os.Chmod(path, 0o700); err != nil {
			t.Fatal(err)
		}
	}

	t.Setenv(NoPythonCacheEnv, "1")
	os.RemoveAll(cache)
	for i := range 2 {
		if _, probed := resolveFresh(t, py); !probed {
			t.Fatalf("run %d with %s=1 used a cache", i, NoPythonCacheEnv)
		}
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Fatalf("%s=1 wrote %s (%v)", NoPythonCacheEnv, cache, err)
	}
}

// The worker runs from its compiled script once the cache has it, and
// traces as it does from source; damaged or foreign code falls back to
// the source.
func TestWorkerCodeCache(t *testing.T) {
	py := realPython(t)
	isolatedCache(t)
	prog := Program{Source: "d = {}\nfor w in 'abca':\n    d[w] = d.get(w, 0) + 1\nprint(sorted(d.items()))\n"}
	// as deep as from source: the boot adds no frame below the program
	deep := Program{Source: "n = 0\ndef f():\n    global n\n    n += 1\n    f()\ntry:\n    f()\nexcept RecursionError:\n    print(n)\n"}
	var depths []string
	run := func(step string, wantCode bool) *Trace {
		t.Helper()
		tr, err := New(Options{Python: py})
		if err != nil {
			t.Fatalf("%s: New: %v", step, err)
		}
		defer tr.Close()
		if got := slices.Contains(tr.cmd.Args, workerBoot); got != wantCode || slices.Contains(tr.cmd.Args, workerBootSource) == wantCode {
			t.Fatalf("%s: worker started from compiled code: %v, want %v", step, got, wantCode)
		}
		// the script comes on stdin: no argument nears the kernel's limit
		// on one (MAX_ARG_STRLEN, 128 KiB), which the script outgrew
		for _, a := range tr.cmd.Args {
			if len(a) > 1<<14 {
				t.Fatalf("%s: an argument of %d bytes", step, len(a))
			}
		}
		out, err := tr.Trace(context.Background(), prog)
		if err != nil {
			t.Fatalf("%s: Trace: %v", step, err)
		}
		d, err := tr.TraceLimits(context.Background(), deep, Limits{MaxEvents: 1 << 20})
		if err != nil {
			t.Fatalf("%s: Trace: %v", step, err)
		}
		depths = append(depths, d.Stdout)
		return out
	}
	fromSource := run("empty cache", false)
	compiles.Wait()
	file := openPythonCache().codeFile(py)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no compiled worker after a start: %v", err)
	}
	fromCode := run("compiled", true)
	if !reflect.DeepEqual(fromSource, fromCode) || len(fromCode.States) < 10 {
		t.Fatalf("traces differ:\nsource %+v\ncode   %+v", fromSource, fromCode)
	}
	if depths[0] != depths[1] || depths[0] == "" {
		t.Fatalf("recursion depth from source %q, from compiled code %q", depths[0], depths[1])
	}

	// a damaged file fails its checksum: source, and a compile for next time
	b, _ := os.ReadFile(file)
	b[len(b)-1] ^= 0xff
	writeFile(t, file, string(b), 0o600)
	workerCodes.Delete(file)
	run("damaged", false)
	compiles.Wait()
	run("compiled again", true)

	// code with a valid checksum the interpreter refuses (another magic)
	b, _ = os.ReadFile(file)
	code := append([]byte("XXXX"), b[32+4:]...)
	writeWithSum(t, file, code)
	workerCodes.Delete(file)
	run("foreign magic", false) // it tries the code, then starts from source
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("refused code kept (%v)", err)
	}
}

func writeWithSum(t *testing.T, file string, code []byte) {
	t.Helper()
	sum := sha256.Sum256(code)
	writeFile(t, file, string(append(sum[:], code...)), 0o600)
}

// ndb processes that store at once keep each other's entries; a newer
// answer to the same question replaces the older one.
func TestPythonCacheConcurrentStores(t *testing.T) {
	isolatedCache(t)
	c := openPythonCache()
	const n = 8
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			c.store(installEntry{Name: fmt.Sprintf("python-%d", i), Kind: kindDirect, Made: int64(i)})
		}()
	}
	for range n {
		<-done
	}
	if got := len(c.read().Entries); got != n {
		t.Fatalf("%d entries after %d concurrent stores", got, n)
	}
	inputs := []fileStamp{{Path: "/x/.python-version"}, {Path: "/.python-version"}}
	newer := slices.Clone(inputs)
	newer[0].Exists, newer[0].Ino = true, 7
	c.store(installEntry{Name: "python-0", Kind: kindPyenv, Inputs: inputs, Made: 100})
	c.store(installEntry{Name: "python-0", Kind: kindPyenv, Inputs: newer, Made: 101})
	var same []installEntry
	for _, e := range c.read().Entries {
		if e.Name == "python-0" && e.Kind == kindPyenv {
			same = append(same, e)
		}
	}
	if len(same) != 1 || !slices.Equal(same[0].Inputs, newer) {
		t.Fatalf("entries for one question: %+v, want only the newer", same)
	}
}

// In a folder with the version files of one the cache has an answer for,
// that answer holds. In a folder with other version files, the worker
// starts on the newest answer of another folder while the probe runs:
// kept where the probe agrees, replaced before any program runs where it
// does not.
func TestPythonCacheGuessedStart(t *testing.T) {
	py := realPython(t)
	isolatedCache(t)
	t.Setenv("PYENV_VERSION", "")
	root, shim := fakePyenv(t, py)
	want := func(v string) string { return filepath.Join(root, "versions", v, "bin", "python3") }
	work := t.TempDir()
	prog := Program{Source: "import sys\nprint(sys.executable)\n"}
	for _, step := range []struct {
		name, dir, version string
		probes, starts     int64
	}{
		{"first start", "one", "a", 1, 1},
		{"cached", "one", "a", 0, 1},
		{"another folder, the same version files on its way up: cached", "two", "a", 0, 1},
		{"a folder of version b: the guess replaced", "three", "b", 1, 2},
		{"a folder below it, a version file of its own: the guess kept", "three/sub", "b", 1, 1},
	} {
		dir := filepath.Join(work, step.dir)
		if step.dir != "one" && step.dir != "two" {
			writeFile(t, filepath.Join(dir, ".python-version"), step.version+"\n", 0o644)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(dir)
		forgetInstalls()
		probes0, starts0 := probes.Load(), workerStarts.Load()
		tr, err := New(Options{Python: shim})
		if err != nil {
			t.Fatalf("%s: New: %v", step.name, err)
		}
		out, err := tr.Trace(context.Background(), prog)
		tr.Close()
		if err != nil {
			t.Fatalf("%s: Trace: %v", step.name, err)
		}
		if got := strings.TrimSpace(out.Stdout); got != want(step.version) || tr.python != got {
			t.Fatalf("%s: the program ran on %s (worker on %s), want %s", step.name, got, tr.python, want(step.version))
		}
		if p, s := probes.Load()-probes0, workerStarts.Load()-starts0; p != step.probes || s != step.starts {
			t.Fatalf("%s: %d probes and %d worker starts, want %d and %d", step.name, p, s, step.probes, step.starts)
		}
	}
}

// Compiled workers of other builds and interpreters are dropped, the
// oldest first, beyond keptCodes.
func TestWorkerCodePrune(t *testing.T) {
	isolatedCache(t)
	c := openPythonCache()
	if !c.mkdir() {
		t.Fatal("no cache folder")
	}
	now := time.Now()
	var names []string
	for i := range keptCodes + 3 {
		f := filepath.Join(c.dir, fmt.Sprintf("worker-%02d.code", i))
		writeFile(t, f, "x", 0o600)
		mt := now.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(f, mt, mt); err != nil {
			t.Fatal(err)
		}
		names = append(names, f)
	}
	c.pruneCode()
	for i, f := range names {
		_, err := os.Stat(f)
		if kept := err == nil; kept != (i >= 3) {
			t.Fatalf("%s (the %d. oldest) kept: %v", f, i+1, kept)
		}
	}
}
