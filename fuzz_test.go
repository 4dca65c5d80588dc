package helikon_test

import (
	"context"
	"encoding/json"
	"path"
	"testing"

	"github.com/paigasus/helikon"
)

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(rm)", "Read(.env)", "Edit(src/**)", "WebFetch(*.example.com)", "Bash(", "X()", "Bash(a(b))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := helikon.ParseRule(s)
		if err != nil {
			return
		}
		back, err := helikon.ParseRule(r.String())
		if err != nil || back != r {
			t.Fatalf("%q parsed to %+v, which does not round-trip: %+v, %v", s, r, back, err)
		}
	})
}

// FuzzPathRules checks that path rules match on the lexically clean path:
// a deny rule that matches root/rel also matches every spelling of it with
// "." and ".." segments, so such spellings cannot slip past a deny rule.
func FuzzPathRules(f *testing.F) {
	for _, s := range [][2]string{{".env", "a/.env"}, {"src/**", "src/x/../y.go"}, {"//etc/**", "../../etc/passwd"}, {"*.pem", "k.PEM"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		r, err := helikon.ParseRule("Read(" + pattern + ")")
		if err != nil {
			return
		}
		root := "/w/root"
		check := func(p string) bool {
			perms := helikon.Permissions{Deny: []helikon.Rule{r}, NoGuards: true}
			tg := targeterFunc(func(json.RawMessage) (helikon.Targets, error) {
				return helikon.Targets{Paths: []helikon.PathTarget{{Path: p, Root: root}}}, nil
			})
			return !perms.Check(context.Background(), helikon.Call{Tool: "Read", Mode: helikon.ModeBypass, Targeter: tg}).Allowed
		}
		clean := path.Join(root, rel)
		if check(clean) != check(root+"/"+rel) {
			t.Fatalf("rule %s matches %q and %q differently", r, clean, root+"/"+rel)
		}
	})
}
