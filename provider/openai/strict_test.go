package openai

import (
	"encoding/json"
	"reflect"
	"testing"
)

func parse(t testing.TB, s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAdaptStrict(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want "" means: not strict-compatible
	}{
		{"required only", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`},
		{"optional becomes nullable", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","default":3}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["integer","null"]}},"required":["a","b"],"additionalProperties":false}`},
		{"optional enum", `{"type":"object","properties":{"e":{"type":"string","enum":["x","y"]}}}`,
			`{"type":"object","properties":{"e":{"type":["string","null"],"enum":["x","y",null]}},"required":["e"],"additionalProperties":false}`},
		{"untyped optional", `{"type":"object","properties":{"u":{"description":"any"}}}`,
			`{"type":"object","properties":{"u":{"anyOf":[{"description":"any"},{"type":"null"}]}},"required":["u"],"additionalProperties":false}`},
		{"nested", `{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"number"}}}},"required":["o"]}`,
			`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":["number","null"]}},"required":["x"],"additionalProperties":false}},"required":["o"],"additionalProperties":false}`},
		{"array of objects", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}}},"required":["l"]}`,
			`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}}},"required":["l"],"additionalProperties":false}`},
		{"map", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},"required":["m"]}`, ""},
		{"open object", `{"type":"object","additionalProperties":true}`, ""},
		{"oneOf", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := adaptStrict(parse(t, tc.in))
			if tc.want == "" {
				if ok {
					t.Fatalf("adapted to %v; want non-strict", got)
				}
				return
			}
			if !ok || !reflect.DeepEqual(got, parse(t, tc.want)) {
				g, _ := json.Marshal(got)
				t.Fatalf("got %s (ok=%v)\nwant %s", g, ok, tc.want)
			}
		})
	}
}

func TestStripNulls(t *testing.T) {
	schema := parse(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"o":{"type":"object","properties":{"x":{"type":"number"}}},"l":{"type":"array","items":{"type":"object","properties":{"y":{"type":"number"}}}}},"required":["a"]}`)
	for in, want := range map[string]string{
		`{"a":null,"b":null}`:                `{"a":null}`,
		`{"a":"x","b":"y"}`:                  `{"a":"x","b":"y"}`,
		`{"a":"x","o":{"x":null}}`:           `{"a":"x","o":{}}`,
		`{"a":"x","l":[{"y":null},{"y":1}]}`: `{"a":"x","l":[{},{"y":1}]}`,
		`{"a":"x","unknown":null}`:           `{"a":"x","unknown":null}`,
		`not json`:                           `not json`,
	} {
		got := stripNulls(in, schema)
		if in == "not json" {
			if got != want {
				t.Errorf("%s -> %s", in, got)
			}
			continue
		}
		if !reflect.DeepEqual(parse(t, got), parse(t, want)) {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
}

// FuzzStrictSchema checks that adaptation never panics, that an adapted
// schema requires every property and closes every object, and that
// stripNulls never panics and returns valid JSON for valid input.
func FuzzStrictSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"a":null}`)
	f.Add(`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{}}}}}`, `{"o":{"x":null}}`)
	f.Add(`{"properties":{"l":{"items":{"properties":{"y":{"enum":[1]}}}}}}`, `{"l":[{"y":null}]}`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		var m map[string]any
		if json.Unmarshal([]byte(schema), &m) != nil || m == nil {
			return
		}
		orig := parse(t, schema)
		if out, ok := adaptStrict(m); ok {
			if isObject(orig) {
				props, _ := out["properties"].(map[string]any)
				req, _ := out["required"].([]any)
				if len(req) != len(props) || out["additionalProperties"] != false {
					t.Fatalf("not strict: %v", out)
				}
			}
		}
		got := stripNulls(args, orig)
		if json.Valid([]byte(args)) && !json.Valid([]byte(got)) {
			t.Fatalf("stripNulls(%q) = %q", args, got)
		}
	})
}
