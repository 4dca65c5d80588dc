package helikon_test

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(rm)", "Read(.env)", "Edit(src/**)", "WebFetch(*.example.com)", "Bash(", "X()", "Bash(a(b))", "Bash(=npm run build)", "WebFetch(=example.com)", "Read(=x)"} {
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

// FuzzProtectedSpellings checks that every spelling of a protected file's
// path that cleans to it, given to a shell command or written by a tool, is
// refused by the policy-file guard.
func FuzzProtectedSpellings(f *testing.F) {
	for _, s := range []string{".claude/settings.json", "./.claude/../.claude/settings.json", ".CLAUDE/SETTINGS.JSON", "/w/root/.claude//settings.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		root := "/w/root"
		target := root + "/.claude/settings.json"
		abs := arg
		if !path.IsAbs(arg) {
			abs = root + "/" + arg
		}
		if !strings.EqualFold(path.Clean(abs), target) {
			return
		}
		p := helikon.Permissions{Protected: []helikon.ProtectedFile{{Path: target, Dir: root}}, NoGuards: true}
		for _, tg := range []helikon.Targets{
			{Commands: []helikon.Command{{Args: []string{"sed", "-i", "x", arg}}}},
			{Paths: []helikon.PathTarget{{Path: abs, Root: root, Access: helikon.AccessWrite}}},
		} {
			d := p.Check(context.Background(), helikon.Call{Tool: "Bash", Mode: helikon.ModeBypass, Targeter: fakeTargeter{t: tg}})
			if d.Allowed {
				t.Fatalf("%q names %s and was allowed", arg, target)
			}
		}
	})
}

// FuzzProtectedAfterUnknownCd checks the policy-file guard's fail-closed
// reading of a relative argument after a cd the line cannot follow: when
// some directory would make the argument name the protected file, the
// command is refused, and saying that the directory is unknown never lets
// through an argument refused without it.
func FuzzProtectedAfterUnknownCd(f *testing.F) {
	for _, s := range []string{"settings.json", "../.claude/settings.json", "../../x/../.CLAUDE/settings.json", ".claude", "./settings*.json", "a/b", "..", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		if path.IsAbs(arg) {
			return
		}
		root := "/w/root"
		target := root + "/.claude/settings.json"
		p := helikon.Permissions{Protected: []helikon.ProtectedFile{{Path: target, Dir: root}}, NoGuards: true}
		refused := func(dirs []string, unknown string) bool {
			tg := helikon.Targets{Commands: []helikon.Command{{Args: []string{"cp", "x", arg}, Dirs: dirs, DirUnknown: unknown}}}
			return !p.Check(context.Background(), helikon.Call{Tool: "Bash", Mode: helikon.ModeBypass, Targeter: fakeTargeter{t: tg}}).Allowed
		}
		// A directory deep enough for the argument's leading .. elements.
		up := 0
		for c := path.Clean(arg); c == ".." || strings.HasPrefix(c, "../"); c = strings.TrimPrefix(strings.TrimPrefix(c, ".."), "/") {
			up++
		}
		deep := root + strings.Repeat("/d", up+2)
		for _, d := range []string{root, root + "/.claude", deep} {
			known := refused([]string{d}, "")
			if known && !refused([]string{d}, `cd "$x"`) {
				t.Fatalf("%q in %s is refused, and allowed once a cd is unknown", arg, d)
			}
			if strings.EqualFold(path.Clean(d+"/"+arg), target) && !refused([]string{root}, `cd "$x"`) {
				t.Fatalf("%q names %s from %s and was allowed after an unknown cd", arg, target, d)
			}
		}
	})
}
