package argcheck

import (
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// ValidRaw reports whether data, one JSON document, is valid against the
// schema, without decoding it into Go values and without allocating. It is
// the fast path for the common case of a valid call: a false result means
// "invalid, or not decidable here" (an escaped property name, an enum of
// objects, a schema outside the compiled subset), and the caller then
// decodes the value and uses [Validator.Validate], which is authoritative
// and explains every problem.
func (v *Validator) ValidRaw(data []byte) bool {
	if v.root == nil {
		return false
	}
	s := scanner{data: data}
	s.ws()
	if !s.value(v.root) {
		return false
	}
	s.ws()
	return s.i == len(s.data)
}

type scanner struct {
	data []byte
	i    int
}

func (s *scanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// value checks one value against n (nil: any value, syntax only).
func (s *scanner) value(n *node) bool {
	switch c := s.peek(); {
	case c == '{':
		return s.object(n)
	case c == '[':
		return s.array(n)
	case c == '"':
		return s.stringValue(n)
	case c == 't':
		return s.literal("true") && n.allows("boolean") && n.noValueConstraints()
	case c == 'f':
		return s.literal("false") && n.allows("boolean") && n.noValueConstraints()
	case c == 'n':
		return s.literal("null") && n.allows("null") && n.noValueConstraints()
	case c == '-' || c >= '0' && c <= '9':
		return s.number(n)
	}
	return false
}

func (n *node) allows(t string) bool { return n == nil || typeOK(n.types, t) }

// noValueConstraints reports whether n has no enum or const, which the fast
// path checks only for strings and numbers.
func (n *node) noValueConstraints() bool { return n == nil || n.enum == nil && n.constVal == nil }

func (s *scanner) literal(lit string) bool {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// rawString scans a string token and returns its raw contents (without the
// quotes) and whether it contains escapes.
func (s *scanner) rawString() (raw []byte, escaped, ok bool) {
	s.i++ // opening quote
	start := s.i
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			raw = s.data[start:s.i]
			s.i++
			return raw, escaped, true
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.data) {
				return nil, false, false
			}
			switch s.data[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.data) {
					return nil, false, false
				}
				for _, h := range s.data[s.i+2 : s.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return nil, false, false
					}
				}
				s.i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			s.i++
		}
	}
	return nil, false, false
}

func (s *scanner) stringValue(n *node) bool {
	raw, escaped, ok := s.rawString()
	if !ok || !n.allows("string") {
		return false
	}
	if n == nil {
		return true
	}
	if n.constVal != nil {
		return false
	}
	hasChecks := n.enum != nil || n.minLen != nil || n.maxLen != nil || n.pattern != nil
	if !hasChecks {
		return true
	}
	if escaped {
		return false // needs unescaping: leave it to the slow path
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if es, isStr := e.(string); isStr && es == string(raw) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if n.minLen != nil || n.maxLen != nil {
		c := utf8.RuneCount(raw)
		if n.minLen != nil && c < *n.minLen || n.maxLen != nil && c > *n.maxLen {
			return false
		}
	}
	return n.pattern == nil || n.pattern.Match(raw)
}

func (s *scanner) number(n *node) bool {
	start := s.i
	if s.peek() == '-' {
		s.i++
	}
	digits := func() int {
		d := 0
		for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
			s.i++
			d++
		}
		return d
	}
	if s.peek() == '0' {
		s.i++
	} else if digits() == 0 {
		return false
	}
	plain := true
	if s.peek() == '.' {
		s.i++
		plain = false
		if digits() == 0 {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		plain = false
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	if n == nil {
		return true
	}
	if n.constVal != nil {
		return false
	}
	needValue := n.min != nil || n.max != nil || n.exMin != nil || n.exMax != nil || n.multipleOf != nil || n.enum != nil
	isInt := plain
	var f float64
	if needValue || !plain {
		// The bytes are not retained past the call; unsafe.String avoids
		// copying them to parse.
		lit := s.data[start:s.i]
		var err error
		f, err = strconv.ParseFloat(unsafe.String(unsafe.SliceData(lit), len(lit)), 64)
		if err != nil {
			return false
		}
		isInt = f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	t := "number"
	if isInt {
		t = "integer"
	}
	if !n.allows(t) {
		return false
	}
	if !needValue {
		return true
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if ef, ok := toFloat(e); ok && ef == f {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	var problems []string
	n.checkNumber("", f, &problems)
	return problems == nil
}

func (s *scanner) array(n *node) bool {
	if !n.allows("array") || !n.noValueConstraints() {
		return false
	}
	s.i++
	var items *node
	if n != nil {
		items = n.items
	}
	count := 0
	s.ws()
	if s.peek() == ']' {
		s.i++
	} else {
		for {
			s.ws()
			if !s.value(items) {
				return false
			}
			count++
			s.ws()
			if s.peek() == ',' {
				s.i++
				continue
			}
			if s.peek() != ']' {
				return false
			}
			s.i++
			break
		}
	}
	if n != nil && (n.minItems != nil && count < *n.minItems || n.maxItems != nil && count > *n.maxItems) {
		return false
	}
	return true
}

func (s *scanner) object(n *node) bool {
	if !n.allows("object") || !n.noValueConstraints() {
		return false
	}
	if n != nil && len(n.required) > 64 {
		return false
	}
	s.i++
	var seen uint64
	s.ws()
	if s.peek() == '}' {
		s.i++
	} else {
		for {
			s.ws()
			if s.peek() != '"' {
				return false
			}
			key, escaped, ok := s.rawString()
			if !ok || escaped {
				return false
			}
			s.ws()
			if s.peek() != ':' {
				return false
			}
			s.i++
			s.ws()
			var child *node
			if n != nil {
				if p, known := n.props[string(key)]; known {
					child = p
					for bit, r := range n.required {
						if r == string(key) {
							seen |= 1 << bit
						}
					}
				} else if n.closed {
					return false
				} else {
					child = n.additional
				}
			}
			if !s.value(child) {
				return false
			}
			s.ws()
			if s.peek() == ',' {
				s.i++
				continue
			}
			if s.peek() != '}' {
				return false
			}
			s.i++
			break
		}
	}
	if n != nil && len(n.required) > 0 && seen != 1<<len(n.required)-1 {
		return false
	}
	return true
}
