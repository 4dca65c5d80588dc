package openai

import (
	"encoding/json"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// OpenAI's strict mode (structured outputs for function calling) guarantees
// that the model's arguments match the schema, but only accepts a subset of
// JSON Schema: every object must list all of its properties as required and
// set additionalProperties to false, and some keywords are refused.
//
// adaptStrict rewrites a tool schema for strict mode:
//
//   - every object gets additionalProperties: false;
//   - a property that was optional becomes required and nullable (its type
//     gains "null", or it is wrapped in anyOf with {"type":"null"}); when the
//     model sends null for such a property, the provider removes the key
//     before the runner sees the arguments (see stripNulls), so the tool sees
//     the property as absent and applies its default, exactly as it would
//     without strict mode. A null the tool itself would have accepted for an
//     optional property is therefore indistinguishable from absence;
//   - "default", "minLength" and "maxLength" are dropped from what the model
//     sees (strict mode refuses them); the tool still applies the default
//     and enforces the lengths, and a violation goes back to the model.
//
// A schema that cannot be expressed in strict mode (an object open to extra
// properties, a map, allOf/oneOf/not/if, patternProperties and the like) is
// sent without strict mode, unchanged: the tool still validates the
// arguments, and invalid ones go back to the model for repair.

// unsupportedStrict are keywords strict mode rejects or that change meaning
// when every property becomes required.
var unsupportedStrict = []string{"allOf", "oneOf", "not", "if", "then", "else", "patternProperties",
	"dependentRequired", "dependentSchemas", "propertyNames", "unevaluatedProperties", "unevaluatedItems",
	"minProperties", "maxProperties", "contains"}

// schemaMap returns s as a generic JSON map.
func schemaMap(s *jsonschema.Schema) (map[string]any, error) {
	if s == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// adaptStrict returns the strict form of schema m (a fresh copy) and whether
// strict mode can be used.
func adaptStrict(m map[string]any) (map[string]any, bool) {
	out, ok := strictNode(m)
	if !ok {
		return nil, false
	}
	om, isMap := out.(map[string]any)
	return om, isMap
}

func strictNode(v any) (any, bool) {
	switch n := v.(type) {
	case map[string]any:
		for _, k := range unsupportedStrict {
			if _, has := n[k]; has {
				return nil, false
			}
		}
		out := make(map[string]any, len(n)+2)
		for k, val := range n {
			switch k {
			case "default", "$schema", "minLength", "maxLength":
				continue
			case "properties", "$defs", "definitions":
				props, ok := val.(map[string]any)
				if !ok {
					return nil, false
				}
				np := make(map[string]any, len(props))
				for pk, pv := range props {
					c, ok := strictNode(pv)
					if !ok {
						return nil, false
					}
					np[pk] = c
				}
				out[k] = np
			case "items", "anyOf", "prefixItems":
				c, ok := strictNode(val)
				if !ok {
					return nil, false
				}
				out[k] = c
			case "additionalProperties":
				if b, isBool := val.(bool); !isBool || b {
					return nil, false // an open object cannot be strict
				}
				out[k] = false
			default:
				out[k] = val
			}
		}
		if isObject(n) {
			props, _ := out["properties"].(map[string]any)
			if props == nil {
				props = map[string]any{}
				out["properties"] = props
			}
			req := requiredSet(n)
			all := make([]any, 0, len(props))
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				all = append(all, k)
				if !req[k] {
					props[k] = nullable(props[k])
				}
			}
			out["required"] = all
			out["additionalProperties"] = false
		}
		return out, true
	case []any:
		out := make([]any, len(n))
		for i, e := range n {
			c, ok := strictNode(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	default:
		return v, true
	}
}

func isObject(n map[string]any) bool {
	switch t := n["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	_, hasProps := n["properties"]
	return hasProps
}

func requiredSet(n map[string]any) map[string]bool {
	req := map[string]bool{}
	if rs, ok := n["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	return req
}

// nullable makes property schema v also accept null.
func nullable(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	switch t := m["type"].(type) {
	case string:
		if t == "null" {
			return m
		}
		m["type"] = []any{t, "null"}
		if e, ok := m["enum"].([]any); ok && !slices.Contains(e, nil) {
			m["enum"] = append(e, nil)
		}
		return m
	case []any:
		if !slices.Contains(t, any("null")) {
			m["type"] = append(t, "null")
		}
		return m
	}
	return map[string]any{"anyOf": []any{m, map[string]any{"type": "null"}}}
}

// stripNulls removes, from the arguments args of a tool whose original
// schema is schema, every key that was optional in the original and is null
// in args. It returns args unchanged when they are not a JSON object.
func stripNulls(args string, schema map[string]any) string {
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return args
	}
	if !stripNode(v, schema) {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return string(b)
}

// stripNode strips v in place and reports whether it changed anything.
func stripNode(v any, schema map[string]any) bool {
	if schema == nil {
		return false
	}
	changed := false
	switch n := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		req := requiredSet(schema)
		for k, val := range n {
			ps, _ := props[k].(map[string]any)
			if val == nil && !req[k] && ps != nil {
				delete(n, k)
				changed = true
				continue
			}
			if stripNode(val, ps) {
				changed = true
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for _, e := range n {
			if stripNode(e, items) {
				changed = true
			}
		}
	}
	return changed
}
