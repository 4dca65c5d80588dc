package policyfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error about a policy file's content: JSON
// that does not parse, a field of the wrong type or unknown, a rule helikon
// cannot read or cannot honour exactly.
var ErrInvalid = errors.New("invalid policy file")

// Error is a problem at a place in a policy file.
type Error struct {
	Path         string // the file
	Line, Column int    // 1-based; 0 when the place is not known
	Msg          string // what is wrong
}

// Error returns "path:line:column: msg".
func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Path + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Column, e.Msg)
}

// Unwrap returns [ErrInvalid].
func (e *Error) Unwrap() error { return ErrInvalid }

// doc is a JSON file and the byte offset where each of its values starts,
// by path ("permissions.allow[2]").
type doc struct {
	path string
	data []byte
	at   map[string]int
}

// parseDoc checks that data is one JSON object and indexes its values.
func parseDoc(path string, data []byte) (*doc, error) {
	d := &doc{path: path, data: data, at: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := d.walk(dec, ""); err != nil {
		return nil, d.jsonErr(err, dec)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, d.errAt(int(dec.InputOffset()), "unexpected data after the top-level object")
	}
	if d.data[d.at[""]] != '{' {
		return nil, d.errAt(d.at[""], "the file must hold one JSON object")
	}
	return d, nil
}

// walk reads one value at dec, recording where it starts under key.
func (d *doc) walk(dec *json.Decoder, key string) error {
	d.at[key] = d.skipSpace(int(dec.InputOffset()))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	for i := 0; dec.More(); i++ {
		sub := key + "[" + strconv.Itoa(i) + "]"
		if delim == '{' {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			sub = k.(string)
			if key != "" {
				sub = key + "." + sub
			}
		}
		if err := d.walk(dec, sub); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// skipSpace returns the offset of the first byte at or after off that is
// not white space or a separator.
func (d *doc) skipSpace(off int) int {
	for off < len(d.data) && bytes.IndexByte([]byte(" \t\r\n,:"), d.data[off]) >= 0 {
		off++
	}
	return off
}

func (d *doc) jsonErr(err error, dec *json.Decoder) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return d.errAt(int(se.Offset), "%s", err.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return d.errAt(len(d.data), "unexpected end of JSON input")
	}
	return d.errAt(int(dec.InputOffset()), "%s", err.Error())
}

// errAt returns an *Error at byte offset off.
func (d *doc) errAt(off int, format string, args ...any) *Error {
	off = min(max(off, 0), len(d.data))
	line, col := 1, 1
	for _, b := range d.data[:bytes.LastIndexByte(d.data[:off], '\n')+1] {
		if b == '\n' {
			line++
		}
	}
	col += utf8.RuneCount(d.data[bytes.LastIndexByte(d.data[:off], '\n')+1 : off])
	return &Error{Path: d.path, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// errKey returns an *Error at the value of key (the file's start when the key
// is not in it).
func (d *doc) errKey(key, format string, args ...any) *Error {
	return d.errAt(d.at[key], format, args...)
}

// decode decodes the value at key into v, reporting a wrong type at its
// place; known lists the keys an object at key may hold (nil: any).
func (d *doc) decode(key string, raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			k := key
			if te.Field != "" {
				k = key + "." + te.Field
				if key == "" {
					k = te.Field
				}
			}
			if _, ok := d.at[k]; !ok {
				k = key
			}
			return d.errKey(k, "%s must be %s, not %s", orTop(k), kindOf(te.Type.Kind().String()), te.Value)
		}
		return d.errKey(key, "%v", err)
	}
	return nil
}

func orTop(k string) string {
	if k == "" {
		return "the file"
	}
	return k
}

func kindOf(k string) string {
	switch k {
	case "slice":
		return "a list"
	case "struct", "map":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int64", "int", "float64":
		return "a number"
	case "ptr":
		return "a value"
	}
	return k
}

// checkKeys reports the first key of the object at key that is not one of
// known.
func (d *doc) checkKeys(key string, obj map[string]json.RawMessage, known ...string) error {
	bad, badAt := "", -1
	for k := range obj {
		if slices.Contains(known, k) {
			continue
		}
		full := k
		if key != "" {
			full = key + "." + k
		}
		if badAt < 0 || d.at[full] < badAt {
			bad, badAt = full, d.at[full]
		}
	}
	if badAt < 0 {
		return nil
	}
	return d.errAt(badAt, "unknown setting %q (known here: %s)", bad, strings.Join(known, ", "))
}
