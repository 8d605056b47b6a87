package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"ndb/tracer"
)

// TestScorerSandbox: data-set code scored by the scorer runs in the kernel
// sandbox: an unprivileged uid with no capabilities, PID 1 of its own PID
// namespace, nothing of the host file system to write to, no /etc/shadow.
func TestScorerSandbox(t *testing.T) {
	if tracer.UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1")
	}
	sc := newScorer(t)
	out := t.TempDir()
	code := fmt.Sprintf(`import os, ctypes
def uid(x):
    return os.getuid()
def pid(x):
    return os.getpid()
def write(x):
    try:
        ctypes.CDLL(None).system(b'touch %s/pwned')
        open(%q, 'w').write('x')
        return 'wrote'
    except OSError as e:
        return 'refused'
def shadow(x):
    try:
        return open('/etc/shadow').read()
    except OSError:
        return 'unreadable'
def unshare(x):
    return ctypes.CDLL(None).unshare(0x10000000)
`, out, filepath.Join(out, "pwned2"))
	jobs := []ScoreJob{
		{ID: "uid", Code: code, Func: "uid", Task: TaskOutput, Input: "0", Output: "65534", Pred: "65534"},
		{ID: "pid", Code: code, Func: "pid", Task: TaskOutput, Input: "0", Output: "1", Pred: "1"},
		{ID: "write", Code: code, Func: "write", Task: TaskOutput, Input: "0", Output: "'refused'", Pred: "'refused'"},
		{ID: "shadow", Code: code, Func: "shadow", Task: TaskOutput, Input: "0", Output: "'unreadable'", Pred: "'unreadable'"},
		{ID: "unshare", Code: code, Func: "unshare", Task: TaskOutput, Input: "0", Output: "-1", Pred: "-1"},
	}
	res, err := sc.Score(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.Pass {
			t.Errorf("%s: %+v", jobs[i].ID, r)
		}
	}
	for _, f := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("a scored program wrote %s outside its sandbox", f)
		}
	}
}
