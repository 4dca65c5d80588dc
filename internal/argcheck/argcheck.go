// Package argcheck validates JSON values against a JSON schema and reports
// every violation in words a model can act on.
//
// github.com/google/jsonschema-go is the schema dialect and the authority on
// what is valid: it infers, resolves and checks schemas. Its Validate stops at
// the first violation and phrases it for programmers ("validating
// /properties/a: type: x has type "string", want "number""). A model repairs
// its call much better when it sees every problem at once, named by the JSON
// field, so this package compiles the keywords that inferred schemas use into
// a small tree and walks the value collecting problems. Schemas that use any
// other keyword (anyOf, $ref, patternProperties, …) are validated by
// jsonschema-go itself, and its first error is reported.
//
// Guaranteed: Compile rejects any schema jsonschema-go cannot resolve;
// [Validator.ValidRaw] never accepts a document [Validator.Validate] rejects
// (a fuzz target checks this), so the fast path can only send a call to the
// slow one, never let an invalid one through. Not guaranteed: for the
// keywords compiled here the verdict and the wording are this package's own
// code, not jsonschema-go's; and for schemas handled by jsonschema-go only its
// first problem is reported.
package argcheck

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Validator validates values against one schema. It is safe for concurrent
// use.
type Validator struct {
	resolved    *jsonschema.Resolved
	root        *node // nil: use resolved.Validate
	hasDefaults bool
}

type node struct {
	types      []string // empty: any type
	props      map[string]*node
	propOrder  []string
	required   []string
	additional *node // nil: allowed; see closed
	closed     bool  // additionalProperties: false
	items      *node
	enum       []any
	constVal   *any
	min, max   *float64
	exMin      *float64
	exMax      *float64
	minLen     *int
	maxLen     *int
	pattern    *regexp.Regexp
	minItems   *int
	maxItems   *int
	multipleOf *float64
}

// Compile resolves s (checking that it is a valid schema) and prepares it for
// validation.
func Compile(s *jsonschema.Schema) (*Validator, error) {
	if s == nil {
		return nil, fmt.Errorf("nil schema")
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	v := &Validator{resolved: rs, hasDefaults: hasDefaults(s)}
	if n, ok := compile(s); ok {
		v.root = n
	}
	return v, nil
}

func hasDefaults(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	if s.Default != nil {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(p) {
			return true
		}
	}
	return hasDefaults(s.Items) || hasDefaults(s.AdditionalProperties)
}

// compile translates the supported subset; ok is false when s uses a keyword
// outside it.
func compile(s *jsonschema.Schema) (*node, bool) {
	if s == nil {
		return nil, true
	}
	if s.Ref != "" || s.DynamicRef != "" || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || len(s.AllOf) > 0 ||
		s.Not != nil || s.If != nil || len(s.PatternProperties) > 0 || len(s.PrefixItems) > 0 ||
		s.Contains != nil || len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 ||
		s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil || s.PropertyNames != nil ||
		s.UniqueItems || s.MinProperties != nil || s.MaxProperties != nil || s.AdditionalItems != nil {
		return nil, false
	}
	n := &node{required: s.Required, min: s.Minimum, max: s.Maximum, exMin: s.ExclusiveMinimum,
		exMax: s.ExclusiveMaximum, minLen: s.MinLength, maxLen: s.MaxLength, minItems: s.MinItems,
		maxItems: s.MaxItems, multipleOf: s.MultipleOf, enum: s.Enum, constVal: s.Const}
	if s.Type != "" {
		n.types = []string{s.Type}
	} else {
		n.types = s.Types
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return nil, false
		}
		n.pattern = re
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*node, len(s.Properties))
		for name, ps := range s.Properties {
			pn, ok := compile(ps)
			if !ok {
				return nil, false
			}
			n.props[name] = pn
		}
		n.propOrder = s.PropertyOrder
		if len(n.propOrder) != len(s.Properties) {
			n.propOrder = make([]string, 0, len(s.Properties))
			for name := range s.Properties {
				n.propOrder = append(n.propOrder, name)
			}
			sort.Strings(n.propOrder)
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		if ap.Not != nil && isEmpty(ap.Not) {
			n.closed = true
		} else {
			an, ok := compile(ap)
			if !ok {
				return nil, false
			}
			n.additional = an
		}
	}
	if s.Items != nil {
		in, ok := compile(s.Items)
		if !ok {
			return nil, false
		}
		n.items = in
	}
	return n, true
}

// isEmpty reports whether s is the empty schema {} (true), so that
// {"not": {}} is the false schema jsonschema-go writes for
// additionalProperties: false.
func isEmpty(s *jsonschema.Schema) bool {
	return reflect.DeepEqual(*s, jsonschema.Schema{})
}

// HasDefaults reports whether the schema declares default values.
func (v *Validator) HasDefaults() bool { return v.hasDefaults }

// ApplyDefaults fills in defaults for missing optional properties of the
// decoded JSON object *m.
func (v *Validator) ApplyDefaults(m *map[string]any) error {
	if !v.hasDefaults {
		return nil
	}
	return v.resolved.ApplyDefaults(m)
}

// Validate checks instance, a value decoded from JSON into any (objects as
// map[string]any, numbers as float64), and returns every problem found, or
// nil when it is valid.
func (v *Validator) Validate(instance any) []string {
	if v.root == nil {
		if err := v.resolved.Validate(instance); err != nil {
			return []string{tidyLibraryError(err)}
		}
		return nil
	}
	var problems []string
	v.root.check("", instance, &problems)
	return problems
}

// tidyLibraryError strips jsonschema-go's "validating …:" prefixes.
func tidyLibraryError(err error) string {
	msg := err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		_, after, found := strings.Cut(rest, ": ")
		if !found {
			break
		}
		msg = after
	}
	return msg
}

func where(path string) string {
	if path == "" {
		return "the arguments"
	}
	return "field " + strconv.Quote(path)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func jsonType(x any) string {
	switch v := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", x)
}

func typeOK(want []string, got string) bool {
	if len(want) == 0 {
		return true
	}
	for _, w := range want {
		if w == got || w == "number" && got == "integer" {
			return true
		}
	}
	return false
}

// show renders a value for a message, briefly.
func show(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	s := string(b)
	if len(s) > 60 {
		cut := 57
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func describeTypes(ts []string) string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if t != "null" {
			out = append(out, article(t))
		}
	}
	if slices.Contains(ts, "null") {
		out = append(out, "null")
	}
	return strings.Join(out, " or ")
}

func article(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	}
	return "a " + t
}

func (n *node) check(path string, x any, problems *[]string) {
	got := jsonType(x)
	if !typeOK(n.types, got) {
		*problems = append(*problems, fmt.Sprintf("%s must be %s, got %s %s", where(path), describeTypes(n.types), got, show(x)))
		return
	}
	if n.constVal != nil && !equalJSON(*n.constVal, x) {
		*problems = append(*problems, fmt.Sprintf("%s must be %s, got %s", where(path), show(*n.constVal), show(x)))
	}
	if len(n.enum) > 0 {
		found := false
		for _, e := range n.enum {
			if equalJSON(e, x) {
				found = true
				break
			}
		}
		if !found {
			opts := make([]string, len(n.enum))
			for i, e := range n.enum {
				opts[i] = show(e)
			}
			*problems = append(*problems, fmt.Sprintf("%s must be one of %s, got %s", where(path), strings.Join(opts, ", "), show(x)))
		}
	}
	switch v := x.(type) {
	case float64:
		n.checkNumber(path, v, problems)
	case string:
		n.checkString(path, v, problems)
	case []any:
		if n.minItems != nil && len(v) < *n.minItems {
			*problems = append(*problems, fmt.Sprintf("%s must have at least %d items, got %d", where(path), *n.minItems, len(v)))
		}
		if n.maxItems != nil && len(v) > *n.maxItems {
			*problems = append(*problems, fmt.Sprintf("%s must have at most %d items, got %d", where(path), *n.maxItems, len(v)))
		}
		if n.items != nil {
			for i, e := range v {
				n.items.check(path+"["+strconv.Itoa(i)+"]", e, problems)
			}
		}
	case map[string]any:
		n.checkObject(path, v, problems)
	}
}

func (n *node) checkNumber(path string, f float64, problems *[]string) {
	w := where(path)
	if n.min != nil && f < *n.min {
		*problems = append(*problems, fmt.Sprintf("%s must be at least %v, got %v", w, *n.min, f))
	}
	if n.max != nil && f > *n.max {
		*problems = append(*problems, fmt.Sprintf("%s must be at most %v, got %v", w, *n.max, f))
	}
	if n.exMin != nil && f <= *n.exMin {
		*problems = append(*problems, fmt.Sprintf("%s must be greater than %v, got %v", w, *n.exMin, f))
	}
	if n.exMax != nil && f >= *n.exMax {
		*problems = append(*problems, fmt.Sprintf("%s must be less than %v, got %v", w, *n.exMax, f))
	}
	if n.multipleOf != nil && *n.multipleOf > 0 {
		if q := f / *n.multipleOf; q != math.Trunc(q) {
			*problems = append(*problems, fmt.Sprintf("%s must be a multiple of %v, got %v", w, *n.multipleOf, f))
		}
	}
}

func (n *node) checkString(path, s string, problems *[]string) {
	w := where(path)
	if n.minLen != nil || n.maxLen != nil {
		c := utf8.RuneCountInString(s)
		if n.minLen != nil && c < *n.minLen {
			*problems = append(*problems, fmt.Sprintf("%s must have at least %d characters, got %d", w, *n.minLen, c))
		}
		if n.maxLen != nil && c > *n.maxLen {
			*problems = append(*problems, fmt.Sprintf("%s must have at most %d characters, got %d", w, *n.maxLen, c))
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		*problems = append(*problems, fmt.Sprintf("%s must match the pattern %s, got %s", w, n.pattern, show(s)))
	}
}

func (n *node) checkObject(path string, m map[string]any, problems *[]string) {
	for _, r := range n.required {
		if _, ok := m[r]; !ok {
			kind := ""
			if p := n.props[r]; p != nil && len(p.types) > 0 {
				kind = " (" + describeTypes(p.types) + ")"
			}
			*problems = append(*problems, fmt.Sprintf("missing required field %s%s", strconv.Quote(join(path, r)), kind))
		}
	}
	if len(m) == 0 {
		return
	}
	var unknown []string
	for _, name := range n.propOrder {
		if x, ok := m[name]; ok {
			n.props[name].check(join(path, name), x, problems)
		}
	}
	for name, x := range m {
		if _, ok := n.props[name]; ok {
			continue
		}
		switch {
		case n.closed:
			unknown = append(unknown, name)
		case n.additional != nil:
			n.additional.check(join(path, name), x, problems)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		for _, u := range unknown {
			msg := fmt.Sprintf("unknown field %s", strconv.Quote(join(path, u)))
			if len(n.propOrder) > 0 {
				msg += " (allowed fields: " + strings.Join(n.propOrder, ", ") + ")"
			} else {
				msg += " (this object takes no fields)"
			}
			*problems = append(*problems, msg)
		}
	}
}

func equalJSON(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func toFloat(x any) (float64, bool) {
	switch v := x.(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// InvalidJSON is the problem reported for arguments that are not JSON. It is
// defined here, at the bottom, and exported by the root package as
// helikon.ErrorInvalidJSON, so that every place a call arrives uses the same
// words without this package depending on the one it serves.
const InvalidJSON = "the arguments are not valid JSON; send one JSON object that matches the tool's schema"

// ParseObject decodes a call's raw arguments for [Validator.Validate]. When
// they are not valid JSON or not a JSON object it returns a problem worded
// for the model instead, the same words wherever arguments are checked
// (function tools and MCP tools alike, and helikon.CheckCall): for arguments
// that are not JSON, [InvalidJSON] with the parser's reason added.
func ParseObject(args []byte) (map[string]any, string) {
	var generic any
	if err := json.Unmarshal(args, &generic); err != nil {
		return nil, InvalidJSON + " (" + err.Error() + ")"
	}
	m, ok := generic.(map[string]any)
	if !ok {
		return nil, "the arguments must be a JSON object, got " + jsonKind(generic)
	}
	return m, ""
}

// jsonKind names the JSON type of a decoded value, with an article.
func jsonKind(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", x)
}
