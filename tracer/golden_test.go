package tracer

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGoldenOutput pins both output formats (JSON lines and the readable
// view) on fixture programs. Run with -update after a deliberate change.
func TestGoldenOutput(t *testing.T) {
	for _, name := range []string{"recursion.py", "generator.py", "exceptions.py"} {
		tr := trace(t, fixture(t, name), Limits{})
		base := strings.TrimSuffix(name, ".py")
		for _, format := range []struct {
			ext   string
			write func(*bytes.Buffer, *Trace) error
		}{
			{".jsonl", func(b *bytes.Buffer, tr *Trace) error { return WriteJSONLines(b, tr) }},
			{".txt", func(b *bytes.Buffer, tr *Trace) error { return WriteText(b, tr) }},
		} {
			var got bytes.Buffer
			if err := format.write(&got, tr); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", base+format.ext)
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./tracer -run Golden -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the golden file:\n%s", path, got.String())
			}
		}
	}
}

// TestDecodeChunk decodes a chunk written by CPython's marshal (version 2):
// [(0, 1, 1, 0, [0, '1'], ['x'], 'f', 0), (1, 2, 1, 0, None), ('x', 'normal', ”, ”, 0)]
func TestDecodeChunk(t *testing.T) {
	payload := []byte("[\x03\x00\x00\x00(\x08\x00\x00\x00i\x00\x00\x00\x00i\x01\x00\x00\x00i\x01\x00\x00\x00i\x00\x00\x00\x00[\x02\x00\x00\x00i\x00\x00\x00\x00u\x01\x00\x00\x001[\x01\x00\x00\x00u\x01\x00\x00\x00xu\x01\x00\x00\x00fi\x00\x00\x00\x00(\x05\x00\x00\x00i\x01\x00\x00\x00i\x02\x00\x00\x00i\x01\x00\x00\x00i\x00\x00\x00\x00N(\x05\x00\x00\x00u\x01\x00\x00\x00xu\x06\x00\x00\x00normalu\x00\x00\x00\x00u\x00\x00\x00\x00i\x00\x00\x00\x00")
	tr := &Trace{}
	d := newDecoder("def f(x):\n    pass\n", tr, Limits{})
	var hdr [4]byte
	binary.LittleEndian.PutUint32(hdr[:], uint32(len(payload)))
	stream := append(hdr[:], payload...)
	d.feed(stream[:7]) // chunks may arrive split anywhere
	d.feed(stream[7:])
	d.finish(workerEnd{})
	want := []State{
		{Event: EventCall, Lineno: 1, Function: "f", Src: "def f(x):", Locals: Locals{{"x", "1"}}, Frame: 1},
		{Event: EventLine, Lineno: 2, Function: "f", Src: "    pass", Locals: Locals{{"x", "1"}}, Frame: 1},
	}
	if len(tr.States) != 2 || tr.Exit.Kind != ExitNormal {
		t.Fatalf("states %+v exit %+v", tr.States, tr.Exit)
	}
	for i := range want {
		g, w := tr.States[i], want[i]
		if g.Event != w.Event || g.Lineno != w.Lineno || g.Function != w.Function || g.Src != w.Src ||
			g.Frame != w.Frame || len(g.Locals) != 1 || g.Locals[0] != w.Locals[0] {
			t.Errorf("state %d: %+v, want %+v", i, g, w)
		}
	}
	// A truncated chunk (the child died mid-write) is dropped, not misread.
	tr2 := &Trace{}
	d2 := newDecoder("", tr2, Limits{})
	d2.feed(stream[:len(stream)-3])
	d2.finish(workerEnd{Code: new(int)})
	if len(tr2.States) != 0 || tr2.Exit.Kind != ExitError {
		t.Errorf("truncated chunk: %+v %+v", tr2.States, tr2.Exit)
	}
}

// TestTextViewOfDeepRecursion: the readable view indents at most
// maxTextIndent levels and marks deeper lines with their depth, so its size
// is linear in the states (it was quadratic: 5 GB for a 50,000-deep trace).
func TestTextViewOfDeepRecursion(t *testing.T) {
	tr := &Trace{Exit: Exit{Kind: ExitNever, Reason: "events"}}
	const depth = 2000
	for d := 0; d < depth; d++ {
		tr.States = append(tr.States, State{Event: EventCall, Lineno: 1, Function: "r", Depth: d, Src: "def r(n):", Frame: d + 1})
	}
	var b bytes.Buffer
	if err := WriteText(&b, tr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if want := strings.Repeat("  ", maxTextIndent) + "call "; !strings.HasPrefix(lines[maxTextIndent], want) {
		t.Errorf("line at the deepest indent %q, want prefix %q", lines[maxTextIndent], want)
	}
	if want := strings.Repeat("  ", maxTextIndent) + "[depth 1999] call "; !strings.HasPrefix(lines[depth-1], want) {
		t.Errorf("deepest line %q, want prefix %q", lines[depth-1], want)
	}
	if b.Len() > depth*200 {
		t.Errorf("%d bytes for %d states: the view grows faster than the states", b.Len(), depth)
	}
}
