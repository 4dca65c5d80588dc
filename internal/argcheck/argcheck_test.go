package argcheck

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type inner struct {
	Name string `json:"name"`
}

type sample struct {
	S    string            `json:"s"`
	I    int               `json:"i,omitempty"`
	F    float64           `json:"f,omitempty"`
	B    bool              `json:"b,omitempty"`
	P    *string           `json:"p,omitempty"`
	L    []inner           `json:"l,omitempty"`
	M    map[string]int    `json:"m,omitempty"`
	Any  any               `json:"any,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}

func sampleValidator(t testing.TB) *Validator {
	s, err := jsonschema.For[sample](nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Properties["s"].Enum = []any{"a", "b", "é"}
	s.Properties["i"].Minimum = jsonschema.Ptr(1.0)
	s.Properties["i"].Maximum = jsonschema.Ptr(10.0)
	s.Properties["f"].ExclusiveMinimum = jsonschema.Ptr(0.0)
	s.Properties["l"].MaxItems = jsonschema.Ptr(2)
	v, err := Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	if v.root == nil {
		t.Fatal("sample schema not compiled to the fast subset")
	}
	return v
}

func TestValidRawAgreesWithValidate(t *testing.T) {
	v := sampleValidator(t)
	cases := []string{
		`{"s":"a"}`, `{"s":"c"}`, `{"s":"\u0061"}`, `{"s":"é"}`, `{}`, `{"s":"a","x":1}`,
		`{"s":"a","i":5}`, `{"s":"a","i":0}`, `{"s":"a","i":11}`, `{"s":"a","i":5.5}`, `{"s":"a","i":5.0}`, `{"s":"a","i":1e1}`,
		`{"s":"a","f":0}`, `{"s":"a","f":-1}`, `{"s":"a","f":0.1}`, `{"s":"a","b":true}`, `{"s":"a","b":"true"}`,
		`{"s":"a","p":null}`, `{"s":"a","p":"x"}`, `{"s":"a","p":1}`, `{"s":"a","l":[]}`, `{"s":"a","l":[{"name":"x"}]}`,
		`{"s":"a","l":[{"name":"x"},{"name":"y"},{"name":"z"}]}`, `{"s":"a","l":[{}]}`, `{"s":"a","l":[{"name":1}]}`,
		`{"s":"a","l":null}`, `{"s":"a","m":{"x":1}}`, `{"s":"a","m":{"x":"1"}}`, `{"s":"a","any":[1,{"a":null}]}`,
		`{"s":"a"} x`, `{"s":"a",}`, `{"s" "a"}`, `[1]`, `"s"`, `{"s":"a","i":01}`, `{"s":"a","i":-}`, `{"\u0073":"a"}`,
		`{"s":"a","s":"b"}`, ` {"s" : "b" } `, `{"s":"a","tags":{"k":"v"}}`, `{"s":"a","i":1.}`, `{"s":"a\x01"}`,
	}
	for _, c := range cases {
		checkAgreement(t, v, []byte(c))
	}
}

func checkAgreement(t *testing.T, v *Validator, data []byte) {
	t.Helper()
	fast := v.ValidRaw(data)
	var x any
	err := json.Unmarshal(data, &x)
	slowOK := err == nil && len(v.Validate(x)) == 0
	if fast && !slowOK {
		t.Errorf("ValidRaw accepted %q, which Validate rejects (%v, %q)", data, err, v.Validate(x))
	}
}

func FuzzValidRaw(f *testing.F) {
	for _, s := range []string{`{"s":"a"}`, `{"s":"a","i":5,"l":[{"name":"x"}]}`, `{"s":"b","p":null,"m":{"a":1}}`, `{}`, `[]`} {
		f.Add([]byte(s))
	}
	v := sampleValidator(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgreement(t, v, data)
	})
}

func TestValidateMessages(t *testing.T) {
	v := sampleValidator(t)
	var x any
	json.Unmarshal([]byte(`{"s":"z","i":20,"l":[{"name":3},{},{}],"zz":1}`), &x)
	got := strings.Join(v.Validate(x), "\n")
	for _, want := range []string{
		`field "s" must be one of "a", "b", "é", got "z"`,
		`field "i" must be at most 10, got 20`,
		`field "l" must have at most 2 items, got 3`,
		`field "l[0].name" must be a string, got integer 3`,
		`missing required field "l[1].name" (a string)`,
		`unknown field "zz"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

func TestFallbackToLibrary(t *testing.T) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"v": {AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}},
	}}
	v, err := Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	if v.root != nil || v.ValidRaw([]byte(`{"v":"x"}`)) {
		t.Fatal("anyOf compiled into the fast subset")
	}
	var ok, bad any
	json.Unmarshal([]byte(`{"v":"x"}`), &ok)
	json.Unmarshal([]byte(`{"v":true}`), &bad)
	if p := v.Validate(ok); p != nil {
		t.Errorf("valid value rejected: %v", p)
	}
	if p := v.Validate(bad); len(p) != 1 || strings.HasPrefix(p[0], "validating") {
		t.Errorf("problems %q", p)
	}
}

func BenchmarkValidRaw(b *testing.B) {
	v := sampleValidator(b)
	data := []byte(`{"s":"a","i":5,"l":[{"name":"x"}],"m":{"k":1}}`)
	b.ReportAllocs()
	for b.Loop() {
		if !v.ValidRaw(data) {
			b.Fatal("invalid")
		}
	}
}
