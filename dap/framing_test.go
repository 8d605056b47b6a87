package dap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// rawServer serves one stdio-style session over pipes; the test writes
// raw bytes and reads the server's messages (which must be well-formed).
type rawServer struct {
	w    *io.PipeWriter
	in   chan []byte // written in order by one goroutine; nil closes
	msgs chan godap.Message
	bad  chan error // a message from the server that does not decode
	done chan error
}

func startRaw(t testing.TB) *rawServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rs := &rawServer{w: inW, in: make(chan []byte, 1024), msgs: make(chan godap.Message, 1024), bad: make(chan error, 1), done: make(chan error, 1)}
	go func() {
		rs.done <- NewServer(sharedReal(), nil).Serve(context.Background(), inR, outW)
		inR.Close()
		outW.Close()
	}()
	go func() {
		r := bufio.NewReader(outR)
		for {
			m, err := godap.ReadProtocolMessage(r)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
					rs.bad <- err
				}
				close(rs.msgs)
				return
			}
			rs.msgs <- m
		}
	}()
	go func() {
		for b := range rs.in {
			if b == nil {
				inW.Close()
				return
			}
			if _, err := inW.Write(b); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return rs
}

// write sends raw bytes, in order, without blocking the test on a server
// that is busy writing.
func (rs *rawServer) write(b []byte) {
	if b != nil {
		rs.in <- b
	}
}

// closeInput ends the server's input after what was written.
func (rs *rawServer) closeInput() { rs.in <- nil }

func frame(body string) []byte {
	return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// next returns the server's next message.
func (rs *rawServer) next(t testing.TB) godap.Message {
	t.Helper()
	select {
	case m, ok := <-rs.msgs:
		if !ok {
			t.Fatalf("the server ended its output")
		}
		return m
	case err := <-rs.bad:
		t.Fatalf("the server wrote a malformed message: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatalf("no message from the server")
	}
	return nil
}

// alive sends a threads request with seq and waits for its answer; it
// returns the messages before it.
func (rs *rawServer) alive(t testing.TB, seq int) []godap.Message {
	t.Helper()
	rs.write(frame(fmt.Sprintf(`{"seq":%d,"type":"request","command":"threads"}`, seq)))
	var before []godap.Message
	for {
		m := rs.next(t)
		if r, ok := m.(*godap.ThreadsResponse); ok && r.RequestSeq == seq {
			return before
		}
		before = append(before, m)
	}
}

// TestMalformedFrames sends each class of malformed input, checks what
// the server answers (an error response to a request it can name, else an
// output event), then that it still serves.
func TestMalformedFrames(t *testing.T) {
	rs := startRaw(t)
	const none, output, errResp = 0, 1, 2
	cases := []struct {
		name  string
		input []byte
		want  int    // none, output or errResp
		text  string // in the answer's message
		seq   int    // errResp: its request_seq
	}{
		{"not a header", []byte("hello\r\n"), output, "malformed header line", 0},
		{"a header without Content-Length", []byte("X-Other: 1\r\n\r\n"), output, "without Content-Length", 0},
		{"Content-Length not a number", []byte("Content-Length: ten\r\n\r\n"), output, "bad Content-Length", 0},
		{"Content-Length negative", []byte("Content-Length: -5\r\n\r\n"), output, "bad Content-Length", 0},
		{"Content-Length empty", []byte("Content-Length:\r\n\r\n"), output, "bad Content-Length", 0},
		{"two Content-Lengths", []byte("Content-Length: 2\r\nContent-Length: 2\r\n\r\n"), output, "two Content-Length", 0},
		{"header line over the limit", append(bytes.Repeat([]byte("A"), 3*MaxHeaderLine), '\n'), output, "longer than", 0},
		{"too many header lines", []byte(strings.Repeat("X: 1\r\n", MaxHeaderLines+1) + "\r\n"), output, "header lines", 0},
		{"body over the limit (skipped)", append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", MaxBody+1)), make([]byte, MaxBody+1)...), output, "over the limit", 0},
		{"Content-Length with 30 digits", []byte("Content-Length: 999999999999999999999999999999\r\n\r\n"), output, "bad Content-Length", 0},
		{"body not JSON", frame("not json"), output, "not a JSON object", 0},
		{"body a JSON array", frame(`[1,2]`), output, "not a JSON object", 0},
		{"body of another type", frame(`{"seq":3,"type":"banana"}`), output, "not a DAP request", 0},
		{"seq a string", frame(`{"seq":"4","type":"request","command":"threads"}`), output, "not a DAP request", 0},
		{"unknown command", frame(`{"seq":5,"type":"request","command":"fooBar"}`), errResp, "fooBar", 5},
		{"argument of the wrong type", frame(`{"seq":6,"type":"request","command":"setBreakpoints","arguments":{"source":{"path":"x.py"},"lines":"3"}}`), errResp, "bad request", 6},
		{"arguments a string", frame(`{"seq":7,"type":"request","command":"stackTrace","arguments":"x"}`), errResp, "bad request", 7},
		{"threadId a string", frame(`{"seq":8,"type":"request","command":"next","arguments":{"threadId":"1"}}`), errResp, "bad request", 8},
		{"launch arguments a number", frame(`{"seq":9,"type":"request","command":"launch","arguments":5}`), errResp, "launch arguments", 9},
		{"a malformed event from the client", frame(`{"seq":10,"type":"event","event":"stopped","body":{"threadId":"x"}}`), none, "", 0},
		{"a response from the client", frame(`{"seq":11,"type":"response","command":"runInTerminal","request_seq":1,"success":true}`), none, "", 0},
		{"missing \\r (tolerated)", []byte("Content-Length: 47\n\n" + `{"seq":12,"type":"request","command":"threads"}`), none, "", 0},
		{"lower-case header (tolerated)", []byte("content-length: 47\r\n\r\n" + `{"seq":13,"type":"request","command":"threads"}`), none, "", 0},
		{"blank lines between frames", []byte("\r\n\r\n"), none, "", 0},
	}
	for i, c := range cases {
		rs.write(c.input)
		before := rs.alive(t, 1000+i)
		var answers []string
		found := false
		for _, m := range before {
			switch m := m.(type) {
			case *godap.OutputEvent:
				answers = append(answers, "output: "+m.Body.Output)
				found = found || c.want == output && strings.Contains(m.Body.Output, c.text)
			case godap.ResponseMessage:
				r := m.GetResponse()
				answers = append(answers, fmt.Sprintf("response %d %v: %s", r.RequestSeq, r.Success, r.Message))
				found = found || c.want == errResp && !r.Success && r.RequestSeq == c.seq && strings.Contains(r.Message, c.text)
			}
		}
		tolerated := strings.Contains(c.name, "tolerated")
		switch {
		case tolerated && (len(answers) != 1 || !strings.HasPrefix(answers[0], "response 1") || !strings.Contains(answers[0], "true")):
			t.Errorf("%s: want the request answered, got %q", c.name, answers)
		case c.want == none && len(answers) > 0 && !tolerated:
			t.Errorf("%s: want no answer, got %q", c.name, answers)
		case c.want != none && (!found || len(answers) != 1):
			t.Errorf("%s: want one %s containing %q, got %q", c.name, map[int]string{output: "output event", errResp: "error response"}[c.want], c.text, answers)
		}
	}
}

// TestHeaderWithoutLimit is the 1.3 GB case: a header line that never
// ends is skipped in bounded memory, and the server still answers.
func TestHeaderWithoutLimit(t *testing.T) {
	rs := startRaw(t)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 64 { // 64 MiB, no newline
		rs.write(chunk) // the server reads it as it comes: it buffers none of it
	}
	rs.write([]byte("\r\n"))
	before := rs.alive(t, 1)
	if len(before) != 1 {
		t.Fatalf("want one output event, got %d messages", len(before))
	}
	if o, ok := before[0].(*godap.OutputEvent); !ok || !strings.Contains(o.Body.Output, "longer than") {
		t.Errorf("got %+v", before[0])
	}
}

// FuzzFrames feeds arbitrary bytes, then ends the stream: the server must
// neither panic nor hang, and all it writes must be well-formed messages.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{"", "Content-Length: 2\r\n\r\n{}", "Content-Length: 5\n\nhello", "Content-Length: x\r\n\r\n",
		"Content-Length: 99999999999\r\n\r\n", "\r\n\r\n\r\n", "Content-Length: 30\r\n\r\n{\"seq\":1,\"type\":\"request\"}   ",
		string(frame(`{"seq":1,"type":"request","command":"initialize","arguments":{"adapterID":"x"}}`)),
		string(frame(`{"seq":1,"type":"request","command":"setBreakpoints","arguments":{"lines":[1,"2"]}}`)),
		"Content-Length: 1\r\nContent-Length: 1\r\n\r\n{", strings.Repeat("A", 5000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if bytes.Contains(in, []byte(`launch`)) {
			return // the fuzzer must not run programs
		}
		rs := startRaw(t)
		rs.write(in)
		rs.closeInput()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case _, ok := <-rs.msgs:
				if !ok {
					select {
					case err := <-rs.bad:
						t.Fatalf("malformed output: %v", err)
					default:
					}
					if err := <-rs.done; err != nil {
						t.Fatalf("Serve: %v", err)
					}
					return
				}
			case err := <-rs.bad:
				t.Fatalf("malformed output: %v", err)
			case <-deadline:
				t.Fatalf("the server did not end with its input")
			}
		}
	})
}

// FuzzRequestBody wraps arbitrary bytes in a correct frame, then sends a
// threads request: the server must answer it (a body of any shape, any
// argument of any type, never ends the session) unless the body was a
// disconnect.
func FuzzRequestBody(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"seq":1,"type":"request","command":"next","arguments":{"threadId":[]}}`,
		`{"seq":1,"type":"request","command":"variables","arguments":{"variablesReference":1e99}}`,
		`{"seq":1,"type":"request","command":"scopes","arguments":{"frameId":-1}}`,
		`{"seq":1,"type":"request","command":"evaluate","arguments":{"expression":"back","context":"repl"}}`,
		`{"seq":1,"type":"request","command":"setBreakpoints","arguments":{"source":{"path":"/nonexistent.py"},"breakpoints":[{"line":1,"condition":"x =="}]}}`,
		`{"seq":1,"type":"request","command":"configurationDone"}`, `{"seq":-1,"type":"request","command":"source","arguments":{"sourceReference":1}}`} {
		f.Add([]byte(s))
	}
	rs := startRaw(f)
	seq := 1 << 20
	f.Fuzz(func(t *testing.T, body []byte) {
		if bytes.Contains(body, []byte("launch")) {
			return // the fuzzer must not run programs
		}
		var m struct{ Command any }
		json.Unmarshal(body, &m)
		if s, _ := m.Command.(string); s == "disconnect" || s == "terminate" || strings.Contains(string(body), "disconnect") {
			return
		}
		rs.write(frame(string(body)))
		seq++
		rs.alive(t, seq)
	})
}
