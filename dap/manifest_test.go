package dap

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestManifestMatchesLaunchArgs: the VS Code extension manifest
// (dap/vscode/package.json) declares the `ndb` debugger type with exactly
// the launch attributes the adapter reads (LaunchArgs), so a launch.json
// written from docs/dap.md validates in VS Code and reaches the adapter.
func TestManifestMatchesLaunchArgs(t *testing.T) {
	b, err := os.ReadFile("vscode/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Contributes struct {
			Debuggers []struct {
				Type                    string `json:"type"`
				ConfigurationAttributes struct {
					Launch struct {
						Required   []string                   `json:"required"`
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"launch"`
				} `json:"configurationAttributes"`
			} `json:"debuggers"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Contributes.Debuggers) != 1 || m.Contributes.Debuggers[0].Type != "ndb" {
		t.Fatalf("debuggers %+v, want one of type ndb", m.Contributes.Debuggers)
	}
	launch := m.Contributes.Debuggers[0].ConfigurationAttributes.Launch
	var declared, read []string
	for name := range launch.Properties {
		declared = append(declared, name)
	}
	lt := reflect.TypeOf(LaunchArgs{})
	for i := range lt.NumField() {
		if tag, _, _ := strings.Cut(lt.Field(i).Tag.Get("json"), ","); tag != "" && tag != "-" {
			read = append(read, tag)
		}
	}
	sort.Strings(declared)
	sort.Strings(read)
	if !reflect.DeepEqual(declared, read) {
		t.Errorf("manifest declares %v, the adapter reads %v", declared, read)
	}
	if !reflect.DeepEqual(launch.Required, []string{"program"}) {
		t.Errorf("required %v, want [program]", launch.Required)
	}
}
