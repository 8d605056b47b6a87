package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// lineServer serves NewServer over a LineTransport on pipes and returns
// the client's ends: write lines to w, read answers from r.
type lineServer struct {
	w    *io.PipeWriter
	r    *bufio.Reader
	done chan error
}

func startLineServer(t testing.TB, maxLine int) *lineServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ls := &lineServer{w: inW, r: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		ls.done <- NewServer(testRegistry(), "real").Run(ctx, &LineTransport{Reader: inR, Writer: outW, MaxLine: maxLine})
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		select {
		case <-ls.done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return ls
}

// rpcAnswer is one JSON-RPC response as the client sees it.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (ls *lineServer) send(t testing.TB, line string) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { _, err := io.WriteString(ls.w, line); errc <- err }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("write: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("write blocked: the server stopped reading")
	}
}

func (ls *lineServer) read(t testing.TB) rpcAnswer {
	t.Helper()
	type res struct {
		s   string
		err error
	}
	c := make(chan res, 1)
	go func() { s, err := ls.r.ReadString('\n'); c <- res{s, err} }()
	select {
	case r := <-c:
		if r.err != nil {
			t.Fatalf("read: %v", r.err)
		}
		var a rpcAnswer
		if err := json.Unmarshal([]byte(r.s), &a); err != nil {
			t.Fatalf("answer %q: %v", r.s, err)
		}
		return a
	case <-time.After(20 * time.Second):
		t.Fatalf("no answer")
	}
	return rpcAnswer{}
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// alive checks that the server still answers a ping with id.
func (ls *lineServer) alive(t testing.TB, id int) { t.Helper(); ls.aliveAfter(t, "", id) }

// aliveAfter writes prefix (lines) and a ping with id, and reads answers up
// to the ping's.
func (ls *lineServer) aliveAfter(t testing.TB, prefix string, id int) {
	t.Helper()
	// Write while reading: the server may still be writing an earlier
	// answer (pipes have no buffer).
	go io.WriteString(ls.w, prefix+`{"jsonrpc":"2.0","id":`+itoa(id)+`,"method":"ping"}`+"\n")
	for {
		a := ls.read(t)
		if string(a.ID) == itoa(id) {
			if a.Error != nil {
				t.Fatalf("ping: %+v", a.Error)
			}
			return
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestMalformedLines sends one line of each malformed class and checks the
// JSON-RPC error it gets, then that the server still answers.
func TestMalformedLines(t *testing.T) {
	ls := startLineServer(t, 1<<10)
	ls.send(t, initLine)
	if a := ls.read(t); a.Error != nil || string(a.ID) != "0" {
		t.Fatalf("initialize: %+v", a)
	}
	cases := []struct {
		name, line string
		code       int64 // 0: no answer at all
		id         string
	}{
		{"not JSON", "hello", -32700, "null"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700, "null"},
		{"two values", `{} {}`, -32700, "null"},
		{"invalid UTF-8 in a string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", -32601, "1"},
		{"a number", `5`, -32600, "null"},
		{"a string", `"ping"`, -32600, "null"},
		{"null", `null`, -32600, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null"},
		{"no jsonrpc", `{"id":2,"method":"ping"}`, -32600, "2"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600, "3"},
		{"method a number", `{"jsonrpc":"2.0","id":4,"method":4}`, -32600, "4"},
		{"no method", `{"jsonrpc":"2.0","id":5}`, -32600, "5"},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, "null"},
		{"id a fraction", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
		{"id huge", `{"jsonrpc":"2.0","id":1e300,"method":"ping"}`, -32600, "null"},
		{"id true", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
		{"params a string", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"x"}`, -32600, "6"},
		{"params wrong shape", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}`, -32602, "7"},
		{"unknown method", `{"jsonrpc":"2.0","id":8,"method":"nope"}`, -32601, "8"},
		{"line too long", `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"` + strings.Repeat("a", 2000) + `"}}`, -32600, "null"},
		{"response without request", `{"jsonrpc":"2.0","id":99,"result":{}}`, 0, ""},
		{"malformed response", `{"jsonrpc":"2.0","result":{},"error":{}}`, 0, ""},
		{"blank line", "   \r", 0, ""},
	}
	for i, c := range cases {
		ls.send(t, c.line+"\n")
		if c.code != 0 {
			a := ls.read(t)
			if a.Error == nil || a.Error.Code != c.code || string(a.ID) != c.id {
				t.Errorf("%s: got %s %+v, want code %d id %s", c.name, a.ID, a.Error, c.code, c.id)
			}
		}
		ls.alive(t, 1000+i) // also checks that no-answer cases sent nothing first
	}
	// A tool's arguments of the wrong type are a tool error the agent can
	// correct (isError), as MCP asks, not a protocol error.
	ls.send(t, `{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"debug_step","arguments":{"session":5,"mode":"into"}}}`+"\n")
	a := ls.read(t)
	if a.Error != nil || !strings.Contains(string(a.Result), `"isError":true`) {
		t.Errorf("wrong-typed tool argument: %s %+v", a.Result, a.Error)
	}
}

// TestHugeLineIsBounded sends a line far over the limit in pieces: the
// server answers once and resynchronises at the newline.
func TestHugeLineIsBounded(t *testing.T) {
	ls := startLineServer(t, 4<<10)
	ls.send(t, initLine)
	ls.read(t)
	chunk := strings.Repeat("x", 64<<10)
	for range 64 { // 4 MiB without a newline
		ls.send(t, chunk)
	}
	ls.send(t, "\n")
	if a := ls.read(t); a.Error == nil || a.Error.Code != -32600 {
		t.Fatalf("huge line: %+v", a)
	}
	ls.alive(t, 7)
}

// FuzzLineTransport feeds arbitrary bytes as one line; the server must
// answer a ping on the next line (it never exits or hangs on input).
func FuzzLineTransport(f *testing.F) {
	for _, s := range []string{"", "x", "{}", "[]", "null", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"debug_context","arguments":{"session":"s1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":5}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r", "\xff\xfe", `{"id":-0,"jsonrpc":"2.0","method":"ping"}`} {
		f.Add(s)
	}
	ls := startLineServer(f, 1<<12)
	ls.send(f, initLine)
	ls.read(f)
	id := 100000
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ReplaceAll(line, "\n", " ") // one line
		id++
		ls.aliveAfter(t, line+"\n", id)
	})
}

// FuzzClassify checks the classifier alone: no panic, and a message it
// passes on encodes again.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"{}", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":1}`, `[1]`, `{"jsonrpc":"2.0","id":9007199254740993,"method":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, _, code, why := Classify(line)
		if msg != nil && why != "" || why != "" && code == 0 {
			t.Fatalf("Classify(%q) = %v %d %q", line, msg, code, why)
		}
	})
}
