package dap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Limits of the framing: every buffer a client can fill is bounded.
const (
	// MaxHeaderLine bounds one header line (DAP has one short header).
	MaxHeaderLine = 4 << 10
	// MaxHeaderLines bounds the header lines of one message.
	MaxHeaderLines = 32
	// MaxBody bounds one message's body; a longer one is skipped unread.
	// Decoding JSON costs about 40 times its size in allocations (2 MB of
	// breakpoints: 77 MB), so the bound is what keeps one message's cost
	// under the server's memory budget; DAP's messages are small.
	MaxBody = 4 << 20
)

// FrameError is a malformed frame: the reader reports it and goes on with
// the next frame (it never ends the stream).
type FrameError struct{ Msg string }

func (e *FrameError) Error() string { return e.Msg }

// frameReader reads DAP frames: header lines "Name: value" ended by an
// empty line, then Content-Length bytes of body. It is lenient where that
// costs nothing (a line may end in "\n" without "\r"; header names are
// case-insensitive; headers other than Content-Length are ignored) and
// bounded everywhere. After a malformed header it skips lines up to the
// next Content-Length header, so one error is reported per bad frame, not
// per line of garbage.
type frameReader struct {
	r       *bufio.Reader
	resync  bool  // skipping to the next Content-Length line
	maxBody int   // bound of a body (MaxBody; less before a connection's token)
	skip    int64 // bytes of an over-long body still to skip (by the next call)
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, MaxHeaderLine), maxBody: MaxBody}
}

// next returns the next body, a *FrameError for a malformed frame (call
// next again), or the stream's error (io.EOF at its end).
func (f *frameReader) next() ([]byte, error) {
	if f.skip > 0 {
		// Skip an over-long body as it streams by (no buffer) to stay in
		// step; only now, so that a caller who closes on the error never
		// reads it.
		n := f.skip
		f.skip = 0
		if _, err := io.CopyN(io.Discard, f.r, n); err != nil {
			return nil, err
		}
	}
	length := -1
	lines := 0
	for {
		line, err := f.readLine()
		if err != nil {
			var fe *FrameError
			if errors.As(err, &fe) {
				f.resync = true
			}
			return nil, err
		}
		line = strings.TrimSuffix(line, "\r")
		name, value, isHeader := strings.Cut(line, ":")
		isLength := isHeader && strings.EqualFold(strings.TrimSpace(name), "Content-Length")
		if f.resync {
			if !isLength {
				continue
			}
			f.resync, length, lines = false, -1, 0
		}
		switch {
		case line == "" && lines == 0:
			continue // blank lines between frames
		case line == "":
			if length < 0 {
				return nil, f.fail("a header without Content-Length")
			}
			return f.body(length)
		case !isHeader:
			return nil, f.fail(fmt.Sprintf("malformed header line %q (want \"Content-Length: N\")", clip(line)))
		}
		lines++
		if lines > MaxHeaderLines {
			return nil, f.fail(fmt.Sprintf("more than %d header lines", MaxHeaderLines))
		}
		if !isLength {
			continue // DAP defines no other header; ignore it
		}
		v := strings.TrimSpace(value)
		n, err := strconv.Atoi(v)
		switch {
		case length >= 0:
			return nil, f.fail("two Content-Length headers")
		case err != nil && len(v) > 0 && len(v) <= 20 && strings.Trim(v, "0123456789") == "":
			n = math.MaxInt // digits only, but too many for an int: too long
		case err != nil || n < 0 || v == "" || v[0] == '+' || v[0] == '-':
			return nil, f.fail(fmt.Sprintf("bad Content-Length %q", clip(v)))
		}
		length = n
	}
}

// fail reports a malformed header and skips to the next frame.
func (f *frameReader) fail(msg string) error {
	f.resync = true
	return &FrameError{Msg: msg}
}

// body reads n bytes; over maxBody, it leaves them to the next call to
// skip and reports the frame.
func (f *frameReader) body(n int) ([]byte, error) {
	if n > f.maxBody {
		f.skip = int64(n)
		return nil, &FrameError{Msg: fmt.Sprintf("message of %d bytes is over the limit of %d bytes; skipped", n, f.maxBody)}
	}
	// Grow with what arrives: a client that declares 4 MiB and sends
	// nothing holds no 4 MiB buffer.
	var b bytes.Buffer
	b.Grow(min(n, 64<<10))
	if _, err := io.CopyN(&b, f.r, int64(n)); err != nil {
		return nil, err // io.EOF: the stream ended inside the body
	}
	return b.Bytes(), nil
}

// readLine returns the next line without its "\n". A line longer than
// MaxHeaderLine is skipped to its end and reported as a FrameError.
func (f *frameReader) readLine() (string, error) {
	line, err := f.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = f.r.ReadSlice('\n')
		}
		if err != nil {
			return "", err
		}
		return "", &FrameError{Msg: fmt.Sprintf("header line longer than %d bytes", MaxHeaderLine)}
	}
	if err != nil {
		return "", err // io.EOF, also in the middle of a line
	}
	return string(bytes.TrimSuffix(line, []byte("\n"))), nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
