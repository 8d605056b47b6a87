package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultMaxLine bounds one inbound JSON-RPC line (16 MiB, as the SDK's
// own stdio transport).
const DefaultMaxLine = 16 << 20

// LineTransport serves MCP as newline-delimited JSON over Reader and Writer
// (stdio in `ndb mcp`), like the SDK's StdioTransport, except that no input
// ends the connection: a line that is not JSON is answered with a JSON-RPC
// parse error (-32700), one that is JSON but not a valid JSON-RPC 2.0
// request (a batch, a wrong "jsonrpc", "id", "method" or "params") with an
// invalid request error (-32600), a line longer than MaxLine with -32600
// after skipping to the next newline; then the next line is read. Params
// that do not fit the method (-32602) and unknown methods (-32601) are
// answered by the SDK, which sees only well-formed messages. A malformed
// response from the client is dropped (JSON-RPC never answers a response).
// Only the end of Reader (or Close) ends the connection.
type LineTransport struct {
	Reader  io.Reader
	Writer  io.Writer
	MaxLine int       // bytes per line; 0 = DefaultMaxLine
	Log     io.Writer // one line per malformed input (nil: none)
}

// Connect implements sdk.Transport.
func (t *LineTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	max := t.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	log := t.Log
	if log == nil {
		log = io.Discard
	}
	c := &lineConn{w: t.Writer, log: log, incoming: make(chan jsonrpc.Message), closed: make(chan struct{}), readDone: make(chan struct{})}
	go c.readLoop(t.Reader, max)
	return c, nil
}

type lineConn struct {
	w   io.Writer
	log io.Writer

	writeMu sync.Mutex

	incoming  chan jsonrpc.Message
	readDone  chan struct{} // closed when the input ended
	readErr   error         // why (set before readDone is closed)
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m, nil
	case <-c.readDone:
		return nil, c.readErr
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// readLoop reads lines until the input ends, answering malformed ones and
// handing the others to Read.
func (c *lineConn) readLoop(r io.Reader, max int) {
	defer close(c.readDone)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		// A fresh buffer per line: the SDK may keep slices of a message.
		line, err := readLine(br, nil, max)
		if errors.Is(err, errLineTooLong) {
			c.reject(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("request line longer than %d bytes (the limit); skipped to the next line", max))
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			msg, id, code, why := Classify(line)
			if why != "" {
				c.reject(id, code, why)
			} else if msg != nil {
				select {
				case c.incoming <- msg:
				case <-c.closed:
					c.readErr = io.EOF
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			c.readErr = err
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine appends the next line of br (without its newline) to buf. A line
// longer than max is skipped up to its newline and reported as
// errLineTooLong; at the end of the input it returns what was left and
// io.EOF.
func readLine(br *bufio.Reader, buf []byte, max int) ([]byte, error) {
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+1 { // +1: the newline itself
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			if tooLong {
				return buf, errLineTooLong
			}
			return buf, err
		}
		if tooLong {
			return buf[:0], errLineTooLong
		}
		return bytes.TrimSuffix(buf, []byte("\n")), nil
	}
}

// reject answers a malformed line with a JSON-RPC error (id null when the
// line's id could not be read).
func (c *lineConn) reject(id json.RawMessage, code int64, why string) {
	fmt.Fprintf(c.log, "ndb mcp: %s\n", why)
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: why}})
	if err == nil {
		c.writeLine(b)
	}
}

// Classify reads one line of input. It returns the message to hand to the
// SDK, or the error to answer with: the JSON-RPC code, the id to answer
// (nil: null) and why. A malformed response yields neither (msg nil, why
// ""): it is dropped.
func Classify(line []byte) (msg jsonrpc.Message, id json.RawMessage, code int64, why string) {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		return nil, nil, jsonrpc.CodeParseError, "parse error: the line is not one JSON value"
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported (MCP 2025-06-18 removed them); send one request per line"
	default:
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: a request is a JSON object"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, nil, jsonrpc.CodeParseError, "parse error: " + err.Error()
	}
	rawID, hasID := m["id"]
	idOK := !hasID || validID(rawID)
	if idOK && hasID {
		id = rawID
	}
	_, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if !hasMethod && (hasResult || hasError) {
		// A response from the client. JSON-RPC never answers a response:
		// pass a well-formed one on, drop the rest.
		if string(m["jsonrpc"]) != `"2.0"` || !hasID || !idOK || string(rawID) == "null" || hasResult == hasError {
			return nil, nil, 0, ""
		}
		if hasError {
			var we jsonrpc.Error
			if json.Unmarshal(m["error"], &we) != nil {
				return nil, nil, 0, ""
			}
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return nil, nil, 0, ""
		}
		return msg, nil, 0, ""
	}
	invalid := func(format string, args ...any) (jsonrpc.Message, json.RawMessage, int64, string) {
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: " + fmt.Sprintf(format, args...)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if !idOK {
		return invalid(`"id" must be a string, an integer or null`)
	}
	var method string
	if !hasMethod || json.Unmarshal(m["method"], &method) != nil {
		return invalid(`"method" must be a string`)
	}
	if p, ok := m["params"]; ok {
		if t := bytes.TrimSpace(p); len(t) == 0 || (t[0] != '{' && t[0] != '[' && string(t) != "null") {
			return invalid(`"params" must be an object or an array`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return invalid("%v", err)
	}
	return msg, nil, 0, ""
}

// validID reports whether raw is an id the SDK keeps exactly: a string, an
// integer within ±2^53 (it decodes numbers as float64) or null.
func validID(raw json.RawMessage) bool {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	switch v := v.(type) {
	case nil, string:
		return true
	case json.Number:
		n, err := v.Int64()
		return err == nil && n <= 1<<53 && n >= -(1<<53)
	}
	return false
}
