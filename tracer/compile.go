package tracer

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"ndb/internal/pysource"
)

//go:embed compile.py
var compileScript string

// maxCompileAnswer bounds what Compile reads back (a 291-line realworld
// file's answer is 1.5 KB).
const maxCompileAnswer = 32 << 20

// Compile compiles each source with python (compile() only: nothing of
// the program runs) and returns, per source, what its compiled code says
// about its lines (pysource.Compiled): the lines an instruction is located
// on (every code object's, and each one's first line, where its call event
// fires), and, on CPython 3.11, where each line's event can be followed by
// its frame's next line event (compile.py reads the bytecode's jumps and
// 3.11's rule for firing one); nil for a source that does not compile. The
// compiler reads untrusted text, so it runs in the sandbox programs run in
// (bubblewrap, the sandbox uid, the seccomp filter, 1 GiB of memory, 20 s
// of CPU); where none can be built it fails, unless
// NDB_UNSAFE_NO_SANDBOX=1.
func Compile(ctx context.Context, python string, sources []string) ([]*pysource.Compiled, error) {
	exe, err := ResolvePython(python)
	if err != nil {
		return nil, err
	}
	script := IsolationPython + "\n\n" + compileScript
	var cmd *exec.Cmd
	if UnsafeNoSandbox() {
		cmd = exec.Command(exe, "-I", "-S", "-c", script, "--no-sandbox")
	} else {
		filter, err := SeccompFilterHex()
		if err != nil {
			return nil, err
		}
		if cmd, err = SandboxCommand(SandboxConfig{Python: exe, Env: []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}}, "-I", "-S", "-c", script, filter); err != nil {
			return nil, err
		}
	}
	req, err := json.Marshal(sources)
	if err != nil {
		return nil, err
	}
	// bounded: a compiler the text broke into could write without end
	// (a cut answer does not parse: an error, the text alone then)
	var out, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), &limitedWriter{w: &out, n: maxCompileAnswer}, &limitedWriter{w: &stderr, n: 4 << 10}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pdeathsig = true, syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("tracer: compile: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("tracer: compile: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var got []*pysource.Compiled
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != len(sources) {
		return nil, fmt.Errorf("tracer: compile: bad answer (%d bytes)", out.Len())
	}
	return got, nil
}
