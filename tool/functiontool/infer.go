package functiontool

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// infer builds the schema of t with jsonschema-go and then applies the tags
// that jsonschema-go does not read (see the package documentation).
func infer(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	if err := applyTags(t, s, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	return s, nil
}

func applyTags(t reflect.Type, s *jsonschema.Schema, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil || seen[t] {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTags(t.Elem(), s.Items, seen)
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties, seen)
	case reflect.Struct:
	default:
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if ps.Description == "" {
			if d := f.Tag.Get("jsonschema_description"); d != "" {
				ps.Description = d
			} else if d := f.Tag.Get("description"); d != "" {
				ps.Description = d
			}
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if e, ok := f.Tag.Lookup("enum"); ok {
			vals, err := parseEnum(e, ft)
			if err != nil {
				return fmt.Errorf("field %s.%s: enum tag: %w", t, f.Name, err)
			}
			target := ps
			if ft.Kind() == reflect.Slice && ps.Items != nil {
				target = ps.Items
			}
			target.Enum = vals
		}
		if d, ok := f.Tag.Lookup("default"); ok {
			raw := json.RawMessage(d)
			if !json.Valid(raw) {
				b, _ := json.Marshal(d)
				raw = b
			}
			ps.Default = raw
		}
		if err := applyTags(f.Type, ps, seen); err != nil {
			return err
		}
	}
	return nil
}

func parseEnum(tag string, t reflect.Type) ([]any, error) {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	var out []any
	for _, part := range strings.Split(tag, ",") {
		part = strings.TrimSpace(part)
		switch t.Kind() {
		case reflect.String:
			out = append(out, part)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			f, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a number", part)
			}
			out = append(out, f)
		case reflect.Bool:
			b, err := strconv.ParseBool(part)
			if err != nil {
				return nil, fmt.Errorf("%q is not a boolean", part)
			}
			out = append(out, b)
		default:
			return nil, fmt.Errorf("enum is not supported on %s fields", t)
		}
	}
	return out, nil
}

// openObjects removes additionalProperties: false from every object schema
// in s, for Options.AllowUnknownFields.
func openObjects(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		openObjects(p)
	}
	openObjects(s.Items)
	openObjects(s.AdditionalProperties)
}
