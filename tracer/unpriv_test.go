package tracer

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSandboxUnprivilegedUser (issue 30, item 1): run by root, it runs
// itself again as an ordinary user (NDB_TEST_USER, default "ndbtest", with
// ranges in /etc/subuid and /etc/subgid; newuidmap, newgidmap and
// setpriv installed; a Python the user can run, NDB_UNPRIV_PYTHON,
// default /usr/bin/python3). As that user, the program runs under a
// subordinate uid: a 0600 file of the user in the program's own folder is
// not readable; with NDB_NO_SUBUID=1 (the fallback where the system has no
// subordinate ids) it is, and Info says so. It skips, saying why, where
// any of that is missing. scripts/setup-test-user.sh (run by .ci/run) sets
// it up.
func TestSandboxUnprivilegedUser(t *testing.T) {
	if os.Getenv("NDB_UNPRIV_CHILD") == "1" {
		unprivilegedChild(t)
		return
	}
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1")
	}
	if !isRoot() {
		t.Skip("runs as root, to switch to an ordinary user (ndb is not root here: the other tests check this user's own sandbox)")
	}
	name := os.Getenv("NDB_TEST_USER")
	if name == "" {
		name = "ndbtest"
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Skipf("no user %q to run as (see the setup in this test's comment): %v", name, err)
	}
	python := os.Getenv("NDB_UNPRIV_PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	for _, tool := range []string{"setpriv", "newuidmap", "newgidmap", python} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is missing: %v", tool, err)
		}
	}
	if _, ok := subRange("/etc/subuid", []string{u.Username, u.Uid}); !ok {
		t.Skipf("%s has no range of 65536 subordinate uids in /etc/subuid", name)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	// the test binary and the program's folder, where the user reaches them
	top, err := os.MkdirTemp("", "ndb-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	os.Chmod(top, 0o755)
	bin := filepath.Join(top, "tracer.test")
	if err := copyFile(os.Args[0], bin, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, "prog")
	os.Mkdir(dir, 0o755)
	for f, mode := range map[string]os.FileMode{"secret.txt": 0o600, "public.txt": 0o644, "prog.py": 0o644} {
		p := filepath.Join(dir, f)
		if err := os.WriteFile(p, []byte(f+" of the user\n"), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		os.Chown(p, uid, gid)
	}
	os.Chown(dir, uid, gid)
	home := filepath.Join(top, "home") // the user's own, for ndb's scratch
	os.Mkdir(home, 0o700)
	os.Chown(home, uid, gid)
	for _, noSub := range []string{"0", "1"} {
		cmd := exec.Command("setpriv", "--reuid", u.Uid, "--regid", u.Gid, "--clear-groups",
			bin, "-test.run", "^TestSandboxUnprivilegedUser$", "-test.v", "-test.count", "1")
		cmd.Dir = top
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home,
			"NDB_UNPRIV_CHILD=1", "NDB_PYTHON=" + python, "NDB_UNPRIV_DIR=" + dir, "NDB_NO_SUBUID=" + noSub}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
		c.Dir, c.Env = cmd.Dir, cmd.Env
		out, err := c.CombinedOutput()
		cancel()
		t.Logf("as %s (uid %d), NDB_NO_SUBUID=%s:\n%s", name, uid, noSub, out)
		if err != nil {
			t.Errorf("the run as %s failed: %v", name, err)
		}
	}
}

// unprivilegedChild is the test as the ordinary user (NDB_NO_SUBUID says
// which case).
func unprivilegedChild(t *testing.T) {
	dir := os.Getenv("NDB_UNPRIV_DIR")
	tt, err := New(Options{Python: os.Getenv("NDB_PYTHON"), ProgramDir: dir})
	if err != nil {
		t.Fatalf("New as uid %d: %v", os.Getuid(), err)
	}
	defer tt.Close()
	src := `for f in ['public.txt', 'secret.txt']:
    try:
        print(f, open(f).read().strip())
    except OSError as e:
        print(f, type(e).__name__)
`
	path := filepath.Join(dir, "prog.py")
	res, err := tt.Trace(context.Background(), Program{Path: path, Source: src, Context: &Context{}})
	if err != nil {
		t.Fatal(err)
	}
	info := tt.Info()
	t.Logf("uid %d, info %+v: %q", os.Getuid(), info, res.Stdout)
	sub := os.Getenv("NDB_NO_SUBUID") != "1"
	want := "public.txt public.txt of the user\nsecret.txt PermissionError\n"
	if !sub {
		// the fallback: the sandbox's uid is the user's; the owner's permissions apply
		want = "public.txt public.txt of the user\nsecret.txt secret.txt of the user\n"
	}
	if res.Stdout != want || info.OwnUID == sub {
		t.Errorf("subordinate ids %v: stdout %q, want %q; OwnUID %v", sub, res.Stdout, want, info.OwnUID)
	}
	if w := FolderWarning(path); w != "" {
		t.Errorf("FolderWarning for a 0755 folder: %s", w)
	}
	fmt.Println("child done")
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
