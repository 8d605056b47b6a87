package eval

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"ndb/tracer"
)

//go:embed scorer.py
var scorerScript string

// ScoreJob is one CruxEval check: assert f(INPUT) == OUTPUT with the
// prediction standing for OUTPUT (Task "output": Pred, a repr) or for INPUT
// (Task "input": Args, the predicted call locals as name/repr pairs).
type ScoreJob struct {
	ID     string      `json:"id"`
	Code   string      `json:"code"`
	Func   string      `json:"func"`
	Task   string      `json:"task"`
	Input  string      `json:"input"`  // the data set's input (argument text)
	Output string      `json:"output"` // the data set's output (a literal)
	Pred   string      `json:"pred,omitempty"`
	Args   [][2]string `json:"args,omitempty"`
}

// ScoreResult is a check's outcome. Literal is false when the prediction is
// not made of Python literals (ast.literal_eval refuses it): it then fails.
type ScoreResult struct {
	ID      string `json:"id"`
	Pass    bool   `json:"pass"`
	Exact   bool   `json:"exact"`
	Literal bool   `json:"literal"`
	Answer  string `json:"answer,omitempty"` // the prediction as argument or value text
	Error   string `json:"error,omitempty"`
}

// Scorer runs checks in one persistent Python process, each in a forked,
// limited child (see scorer.py). The process runs in the tracer's kernel
// sandbox (tracer.SandboxCommand; each check in namespaces of its own, under
// the seccomp filter); where none can be built, NewScorer fails unless
// NDB_UNSAFE_NO_SANDBOX=1. It is safe for concurrent use; checks run one at
// a time.
type Scorer struct {
	mu      sync.Mutex
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	scratch string
	python  string
}

// NewScorer starts the scorer with the interpreter python ("" = python3,
// resolved once to its sys.executable).
func NewScorer(python string) (*Scorer, error) {
	exe, err := tracer.ResolvePython(python)
	if err != nil {
		return nil, err
	}
	s := &Scorer{python: exe}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Scorer) start() error {
	dir, err := os.MkdirTemp("", "ndb-scorer-")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		os.RemoveAll(dir)
		return err
	}
	script := dir + "/scorer.py"
	if err := os.WriteFile(script, []byte(scorerScript), 0o644); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(dir+"/ndb_isolate.py", []byte(tracer.IsolationPython), 0o644); err != nil {
		return fail(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONHASHSEED=0", "PYTHONIOENCODING=utf-8", "PYTHONDONTWRITEBYTECODE=1"}
	var cmd *exec.Cmd
	if tracer.UnsafeNoSandbox() {
		scratch := dir + "/work"
		if err := os.Mkdir(scratch, 0o700); err != nil {
			return fail(err)
		}
		cmd = exec.Command(s.python, "-I", "-S", script, scratch)
		cmd.Env = env
		cmd.Dir = scratch
	} else {
		filter, err := tracer.SeccompFilterHex()
		if err != nil {
			return fail(err)
		}
		// the script's folder is visible read-only; scratch is in the
		// sandbox's private /tmp
		os.Chmod(dir, 0o755)
		cmd, err = tracer.SandboxCommand(tracer.SandboxConfig{Python: s.python, ReadOnlyDirs: []string{dir}, Env: env},
			"-I", "-S", script, "/tmp", filter)
		if err != nil {
			return fail(fmt.Errorf("eval: the scorer runs data-set code: %w (set %s=1 to run it unsandboxed)", err, tracer.UnsafeNoSandboxEnv))
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("eval: start scorer: %w", err)
	}
	s.cmd, s.in, s.out, s.scratch = cmd, in, bufio.NewReaderSize(out, 1<<16), dir
	return nil
}

// Score runs jobs in order and returns their results in the same order.
func (s *Scorer) Score(ctx context.Context, jobs []ScoreJob) ([]ScoreResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil, errors.New("eval: scorer closed")
	}
	out := make([]ScoreResult, len(jobs))
	// Write from a goroutine: the pipe holds only so much.
	werr := make(chan error, 1)
	go func() {
		enc := json.NewEncoder(s.in)
		enc.SetEscapeHTML(false)
		for _, j := range jobs {
			if err := enc.Encode(j); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	for i := range jobs {
		if err := ctx.Err(); err != nil {
			s.kill()
			return nil, err
		}
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			s.kill()
			return nil, fmt.Errorf("eval: scorer died: %w", err)
		}
		if err := json.Unmarshal(line, &out[i]); err != nil {
			s.kill()
			return nil, fmt.Errorf("eval: scorer wrote %q: %w", line, err)
		}
		out[i].ID = jobs[i].ID
	}
	if err := <-werr; err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Scorer) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
	s.cmd = nil
	os.RemoveAll(s.scratch)
}

// Close stops the scorer process.
func (s *Scorer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.in.Close()
	err := s.cmd.Wait()
	s.cmd = nil
	os.RemoveAll(s.scratch)
	return err
}
