package engine

import (
	"context"
	"testing"

	"ndb/tracer"
)

// TestStdlibModulesAsTheTracerShowsThem: the reprs stdlibModules reads
// from the interpreter are the values the tracer shows for the modules in
// a module frame (built-in, frozen, a file, a package, an extension, a
// submodule); a module outside the standard library is not pinned.
func TestStdlibModulesAsTheTracerShowsThem(t *testing.T) {
	src := "import sys\nimport os\nimport glob\nimport json\nimport math\nimport xml.etree.ElementTree as ET\nimport not_a_module_here\n"
	p := Program{Path: "mods.py", Source: src}
	got := stdlibModules(context.Background(), "python3", []string{"sys", "os", "glob", "json", "math", "xml.etree.ElementTree", "not_a_module_here"})
	if got == nil {
		t.Skip("no python3 that names its standard library")
	}
	if _, ok := got["not_a_module_here"]; ok || len(got) != 6 {
		t.Fatalf("reprs %v, want the 6 standard-library modules", got)
	}
	re := NewReal(Options{Workers: 1})
	defer re.Close()
	tr, err := re.Trace(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	last := tr.States[len(tr.States)-1] // the module's return: every import done
	if last.Event != tracer.EventReturn || last.Function != "<module>" {
		t.Fatalf("last state %+v", last)
	}
	mods := map[string]string{"sys": "sys", "os": "os", "glob": "glob", "json": "json", "math": "math", "ET": "xml.etree.ElementTree"}
	for _, v := range last.Locals {
		mod, ok := mods[v.Name]
		if !ok {
			continue
		}
		if got[mod] != v.Value {
			t.Errorf("%s: stdlibModules %q, the tracer %q", v.Name, got[mod], v.Value)
		}
		delete(mods, v.Name)
	}
	if len(mods) > 0 {
		t.Errorf("not in the trace: %v", mods)
	}
}
