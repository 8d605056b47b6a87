package tracer

import (
	"encoding/binary"
	"reflect"
	"testing"
)

// mw writes Python marshal (version 2) values for decoder tests: int, string,
// nil (None), []any (list) and tup (tuple).
type tup []any

func mw(b []byte, v any) []byte {
	le := func(n int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(n)) }
	switch x := v.(type) {
	case nil:
		return append(b, 'N')
	case int:
		return append(append(b, 'i'), le(x)...)
	case string:
		return append(append(append(b, 'u'), le(len(x))...), x...)
	case []any:
		b = append(append(b, '['), le(len(x))...)
		for _, e := range x {
			b = mw(b, e)
		}
		return b
	case tup:
		b = append(append(b, '('), le(len(x))...)
		for _, e := range x {
			b = mw(b, e)
		}
		return b
	}
	panic("mw: unsupported value")
}

func decodeRecords(t *testing.T, recs ...any) *Trace {
	t.Helper()
	payload := mw(nil, recs)
	tr := &Trace{}
	d := newDecoder("def f(x):\n    y = x\n    return y\n", tr, Limits{})
	d.feed(append(binary.LittleEndian.AppendUint32(nil, uint32(len(payload))), payload...))
	d.finish(workerEnd{})
	if d.bad != nil {
		t.Fatal(d.bad)
	}
	return tr
}

// TestDecodeExitLocals: return and exception records carry the frame's
// locals delta (issue 20), new keys included; the older shape without it
// still decodes, with no locals.
func TestDecodeExitLocals(t *testing.T) {
	exit := tup{"x", "normal", "", "", 0}
	tr := decodeRecords(t,
		tup{0, 1, 1, 0, []any{0, "1"}, []any{"x"}, "f", 0},
		tup{1, 2, 1, 0, nil},
		tup{3, 2, 1, 0, "ValueError()", nil},                         // exception, nothing changed
		tup{2, 3, 1, 0, "1", []any{0, "1", 1, "1"}, []any{"x", "y"}}, // return, y is new: new keys come with every value
		tup{0, 1, 2, 0, []any{0, "2"}, []any{"x"}, "f", 0},
		tup{2, 3, 2, 0, "2"}, // the old shape
		exit)
	if len(tr.States) != 6 || tr.Exit.Kind != ExitNormal {
		t.Fatalf("states %+v exit %+v", tr.States, tr.Exit)
	}
	x1 := Locals{{"x", "1"}}
	for i, want := range []Locals{x1, x1, x1, {{"x", "1"}, {"y", "1"}}, {{"x", "2"}}, nil} {
		if got := tr.States[i].Locals; !reflect.DeepEqual(got, want) {
			t.Errorf("state %d (%s): locals %v, want %v", i, tr.States[i].Event, got, want)
		}
	}
	if tr.States[2].Arg != "ValueError()" || tr.States[3].Arg != "1" || tr.States[5].Arg != "2" {
		t.Errorf("args %q %q %q", tr.States[2].Arg, tr.States[3].Arg, tr.States[5].Arg)
	}
	if &tr.States[2].Locals[0] != &tr.States[1].Locals[0] {
		t.Error("an unchanged exception state should share the line state's locals")
	}
}
