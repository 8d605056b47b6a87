package dap

import (
	"encoding/json"
	"fmt"
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

// TestExtensionPackage: the extension has what `vsce package` and a user
// need (scripts/vsce-package.sh packages it): a main that exists (the
// manifest has activationEvents, so vsce requires one), an icon, LICENSE,
// a repository, the ndb.path setting; its README's launch.json examples
// parse, use only the adapter's launch attributes, and cover the real
// engine, the model engine and a server with its token; the README links
// to nothing outside the extension.
func TestExtensionPackage(t *testing.T) {
	b, err := os.ReadFile("vscode/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Main        string          `json:"main"`
		Icon        string          `json:"icon"`
		License     string          `json:"license"`
		Repository  json.RawMessage `json:"repository"`
		Contributes struct {
			Configuration struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{m.Main, m.Icon, "LICENSE", "README.md"} {
		if fi, err := os.Stat("vscode/" + f); f == "" || err != nil || fi.Size() == 0 {
			t.Errorf("extension file %q: %v", f, err)
		}
	}
	if m.License != "MIT" || len(m.Repository) == 0 {
		t.Errorf("license %q, repository %s", m.License, m.Repository)
	}
	if _, ok := m.Contributes.Configuration.Properties["ndb.path"]; !ok {
		t.Error("no ndb.path setting")
	}
	readme, err := os.ReadFile("vscode/README.md")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]bool{"name": true, "type": true, "request": true, "debugServer": true}
	lt := reflect.TypeOf(LaunchArgs{})
	for i := range lt.NumField() {
		tag, _, _ := strings.Cut(lt.Field(i).Tag.Get("json"), ",")
		args[tag] = true
	}
	seen := map[string]bool{}
	blocks := strings.Split(string(readme), "```json\n")
	for _, blk := range blocks[1:] {
		text, _, _ := strings.Cut(blk, "```")
		var cfg struct {
			Configurations []map[string]any `json:"configurations"`
		}
		var one map[string]any
		if err := json.Unmarshal([]byte(text), &cfg); err != nil || cfg.Configurations == nil {
			if err := json.Unmarshal([]byte(text), &one); err != nil {
				t.Errorf("README example does not parse: %v\n%s", err, text)
				continue
			}
			cfg.Configurations = []map[string]any{one}
		}
		for _, c := range cfg.Configurations {
			for k := range c {
				if !args[k] {
					t.Errorf("README example uses %q, which the adapter does not read", k)
				}
			}
			if c["type"] != "ndb" || c["program"] == nil {
				t.Errorf("README example %v: want type ndb and a program", c)
			}
			seen[fmt.Sprint(c["engine"])] = true
			if c["debugServer"] != nil && c["token"] != nil {
				seen["server"] = true
			}
		}
	}
	for _, k := range []string{"real", "model", "server"} {
		if !seen[k] {
			t.Errorf("no README launch.json example for %s", k)
		}
	}
	if strings.Contains(string(readme), "](../") || strings.Contains(string(readme), "docs/") {
		t.Error("the README points to a file outside the extension")
	}
}
