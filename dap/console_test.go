package dap

import (
	"strings"
	"testing"

	godap "github.com/google/go-dap"
)

// TestConsoleAttribute: a launch asking for a terminal console
// (integratedTerminal, externalTerminal) is told in an "important" output
// event that ndb cannot give one and what the program gets instead; the
// Debug Console (internalConsole, or none) has no such notice.
func TestConsoleAttribute(t *testing.T) {
	for _, tc := range []struct {
		console string
		want    []string // in the notice; nil: no notice
	}{
		{"", nil},
		{"internalConsole", nil},
		{"integratedTerminal", []string{`"integratedTerminal" is not supported`, "no runInTerminal", "stdin is empty", "ndb debug"}},
		{"externalTerminal", []string{`"externalTerminal" is not supported`, "stdin is empty"}},
		{"sideways", []string{`unknown value "sideways"`}},
	} {
		t.Run(tc.console, func(t *testing.T) {
			c, stop := startServer(t, sharedReal())
			defer stop()
			initialize(t, c)
			args := map[string]any{"program": program(t), "engine": "real", "stopOnEntry": true}
			if tc.console != "" {
				args["console"] = tc.console
			}
			c.ok("launch", args)
			_, evs := c.call("configurationDone", nil)
			var notices []string
			for _, e := range evs {
				if o, ok := e.(*godap.OutputEvent); ok && o.Body.Category == "important" {
					notices = append(notices, o.Body.Output)
				}
			}
			if tc.want == nil {
				if len(notices) > 0 {
					t.Errorf("notices %q, want none", notices)
				}
				return
			}
			if len(notices) != 1 {
				t.Fatalf("notices %q, want one", notices)
			}
			for _, w := range tc.want {
				if !strings.Contains(notices[0], w) {
					t.Errorf("notice %q lacks %q", notices[0], w)
				}
			}
			c.waitEvent("stopped")
		})
	}
}
