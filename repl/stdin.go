package repl

import (
	"errors"
	"io"
	"os"

	"github.com/chzyer/readline"
	"golang.org/x/sys/unix"
)

// The program's input (docs/debugger.md, "The program's input"): as under
// pdb, the program and the debugger share the user's terminal. At the
// prompt the terminal reads the commands; while a command runs (s, n, c,
// ..., until the next stop) the lines the user types go to the program's
// stdin (Options.Input: a pipe into the sandbox, tracer.Input), and Ctrl-D
// there ends it. Between two prompts the terminal is in its ordinary
// (cooked) mode, since readline puts it in raw mode only while it reads a
// command: the kernel echoes and edits the line, Ctrl-D is end of file and
// Ctrl-C stays the interrupt that stops the command (catchInterrupt), as
// for a program run under pdb.

// programInput forwards lines from the terminal's descriptor to the
// program's stdin while a command runs.
type programInput struct {
	fd int
	w  io.WriteCloser
}

// newProgramInput returns the forwarder of w from in, or nil when there is
// none: no Input, or an in that is not a terminal (a pipe or a script: the
// command reader reads ahead, so lines could not be told apart, and poll
// would not wait for whole lines).
func newProgramInput(in io.Reader, w io.WriteCloser) *programInput {
	f, ok := in.(*os.File)
	if w == nil || !ok || !readline.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &programInput{fd: int(f.Fd()), w: w}
}

// closed reports whether the program's stdin has ended (Ctrl-D): then the
// terminal keeps what is typed for the prompt. A restarted program has an
// open one again.
func (p *programInput) closed() bool {
	c, ok := p.w.(interface{ Closed() bool })
	return ok && c.Closed()
}

// inputPoll is how often a forwarder looks whether its command has ended:
// the bound of the wait before the next prompt reads the terminal.
const inputPoll = 20 // ms

// during runs f (one command) while lines typed go to the program.
func (p *programInput) during(f func()) {
	if p == nil || p.closed() {
		f()
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		p.forward(stop)
	}()
	defer func() {
		close(stop)
		<-done
	}()
	f()
}

// forward copies what the terminal has (a whole line in cooked mode, or
// what Ctrl-D pushed) to the program until stop, the end of the terminal,
// or the end of the program's stdin (Ctrl-D on an empty line: a read of 0
// bytes, which closes it). It reads only when poll says there is something
// to read, so that no read is left pending for the prompt's to race with.
func (p *programInput) forward(stop <-chan struct{}) {
	buf := make([]byte, 64<<10)
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	for {
		select {
		case <-stop:
			return
		default:
		}
		n, err := unix.Poll(fds, inputPoll)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 || fds[0].Revents&(unix.POLLIN|unix.POLLHUP) == 0 {
			if err != nil || fds[0].Revents&(unix.POLLERR|unix.POLLNVAL) != 0 {
				return
			}
			continue
		}
		k, err := unix.Read(p.fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if k > 0 {
			if _, werr := p.w.Write(buf[:k]); werr != nil {
				return // the program's stdin is closed: nothing more for it
			}
		}
		if k <= 0 || err != nil {
			if k == 0 && err == nil {
				p.w.Close() // Ctrl-D: the program reads end of file
			}
			return
		}
	}
}

// readlineOn makes cfg read the terminal f instead of os.Stdin: its raw
// mode only while a command is read, its width.
func readlineOn(cfg *readline.Config, f *os.File) {
	fd := int(f.Fd())
	var saved *readline.State
	cfg.Stdin = readline.NewCancelableStdin(f)
	cfg.FuncIsTerminal = func() bool { return readline.IsTerminal(fd) }
	cfg.FuncMakeRaw = func() error {
		st, err := readline.MakeRaw(fd)
		if err == nil {
			saved = st
		}
		return err
	}
	cfg.FuncExitRaw = func() error {
		if saved == nil {
			return nil
		}
		st := saved
		saved = nil
		return readline.Restore(fd, st)
	}
	cfg.FuncGetWidth = func() int {
		w, _, err := readline.GetSize(fd)
		if err != nil || w <= 0 {
			return 80
		}
		return w
	}
}
