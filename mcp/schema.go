package mcp

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor infers T's JSON schema as the SDK would, then makes it fit
// clients that map a schema to one type: every nullable field (a Go slice,
// map or pointer: "type": ["null", "array"]) becomes anyOf [{the type},
// {"type": "null"}]; enums names the allowed values of string properties
// (top level).
func schemaFor[T any](enums map[string][]string) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema: %v", err)) // a programming error, caught by the tests
	}
	fixNullable(s)
	for name, vals := range enums {
		p := s.Properties[name]
		if p == nil {
			panic("mcp: schema: no property " + name)
		}
		p.Enum = nil
		for _, v := range vals {
			p.Enum = append(p.Enum, v)
		}
	}
	return s
}

// fixNullable rewrites nullable types below s as anyOf, in place.
func fixNullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for k, p := range s.Properties {
		s.Properties[k] = nullableAnyOf(p)
	}
	s.Items = nullableAnyOf(s.Items)
	s.AdditionalProperties = nullableAnyOf(s.AdditionalProperties)
	for _, d := range s.Defs {
		fixNullable(d)
	}
}

func nullableAnyOf(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	fixNullable(s)
	if len(s.Types) != 2 || !slices.Contains(s.Types, "null") {
		return s
	}
	inner := *s
	inner.Types = nil
	inner.Type = s.Types[0]
	if inner.Type == "null" {
		inner.Type = s.Types[1]
	}
	inner.Description = ""
	return &jsonschema.Schema{Description: s.Description, AnyOf: []*jsonschema.Schema{&inner, {Type: "null"}}}
}
