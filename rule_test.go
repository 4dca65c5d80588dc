package helikon_test

import (
	"context"
	"slices"
	"testing"

	"github.com/paigasus/helikon"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in      string
		want    helikon.Rule
		wantErr bool
	}{
		{"Bash", helikon.Rule{Tool: "Bash"}, false},
		{"Bash(rm)", helikon.Rule{Tool: "Bash", Pattern: "rm"}, false},
		{" Bash( git push ) ", helikon.Rule{Tool: "Bash", Pattern: "git push"}, false},
		{"Read(.env)", helikon.Rule{Tool: "Read", Pattern: ".env"}, false},
		{"Edit(src/**)", helikon.Rule{Tool: "Edit", Pattern: "src/**"}, false},
		{"WebFetch(example.com)", helikon.Rule{Tool: "WebFetch", Pattern: "example.com"}, false},
		{"WebFetch(*.example.com)", helikon.Rule{Tool: "WebFetch", Pattern: "*.example.com"}, false},
		{"mcp_tool-1(x)", helikon.Rule{Tool: "mcp_tool-1", Pattern: "x"}, false},
		{"", helikon.Rule{}, true},
		{"Bash(", helikon.Rule{}, true},
		{"Bash()", helikon.Rule{}, true},
		{"Bash(rm", helikon.Rule{}, true},
		{"Bash(rm) x", helikon.Rule{}, true},
		{"1Bash", helikon.Rule{}, true},
		{"Ba sh", helikon.Rule{}, true},
		{"WebFetch(http://example.com/)", helikon.Rule{}, true},
	}
	for _, tt := range tests {
		got, err := helikon.ParseRule(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v, err=%v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err == nil {
			if back, err := helikon.ParseRule(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q: %+v, %v", got.String(), back, err)
			}
		}
	}
}

func TestRuleMatching(t *testing.T) {
	root := "/work/proj"
	path := func(p string, a helikon.Access) helikon.Targets {
		return helikon.Targets{Paths: []helikon.PathTarget{{Path: p, Root: root, Access: a}}}
	}
	cmds := func(argvs ...[]string) helikon.Targets {
		var t helikon.Targets
		for _, a := range argvs {
			t.Commands = append(t.Commands, helikon.Command{Args: a})
		}
		return t
	}
	host := func(h string) helikon.Targets { return helikon.Targets{Hosts: []string{h}} }
	r, w := helikon.AccessRead, helikon.AccessWrite
	tests := []struct {
		rule    string
		tool    string
		targets helikon.Targets
		match   bool
	}{
		{"Read(.env)", "Read", path(root+"/.env", r), true},
		{"Read(.env)", "Read", path(root+"/config/.env", r), true},
		{"Read(.env)", "Read", path(root+"/.ENV", r), true},
		{"Read(.env)", "Read", path(root+"/.envrc", r), false},
		{"Read(.env*)", "Read", path(root+"/a/.env.local", r), true},
		{"Read(.env)", "Write", path(root+"/.env", w), false},
		{"Read(secrets)", "Read", path(root+"/secrets/key.pem", r), true},
		{"Read(*.pem)", "Read", path(root+"/a/b/key.pem", r), true},
		{"Read(/etc/**)", "Read", path("/etc/passwd", r), false},
		{"Read(//etc/**)", "Read", path("/etc/passwd", r), true},
		{"Edit(src/**)", "Edit", path(root+"/src/a/b.go", w), true},
		{"Edit(src/**)", "Write", path(root+"/src/x.go", w), true},
		{"Edit(src/**)", "Write", path(root+"/lib/src/x.go", w), false},
		{"Edit(src/**)", "Edit", path(root+"/src/../lib/x.go", w), false},
		{"Edit(src/**)", "Edit", path(root+"/lib/../src/x.go", w), true},
		{"Write(/docs/*.md)", "Edit", path(root+"/docs/a.md", w), true},
		{"Write(/docs/*.md)", "Edit", path(root+"/docs/sub/a.md", w), false},
		{"Write(docs/**/*.md)", "Edit", path(root+"/docs/sub/x/a.md", w), true},
		{"Edit(src/**)", "Edit", path("/other/src/x.go", w), false},
		{"Bash(rm)", "Bash", cmds([]string{"rm", "-rf", "x"}), true},
		{"Bash(rm)", "Bash", cmds([]string{"/bin/rm", "x"}), true},
		{"Bash(rm)", "Bash", cmds([]string{"./rm"}), true},
		{"Bash(rm)", "Bash", cmds([]string{"ls"}, []string{"rm", "x"}), true},
		{"Bash(rm)", "Bash", cmds([]string{"rmdir", "x"}), false},
		{"Bash(git push)", "Bash", cmds([]string{"git", "push", "origin"}), true},
		{"Bash(git push)", "Bash", cmds([]string{"git", "pull"}), false},
		{"WebFetch(example.com)", "WebFetch", host("example.com"), true},
		{"WebFetch(example.com)", "WebFetch", host("API.Example.com."), true},
		{"WebFetch(example.com)", "WebFetch", host("notexample.com"), false},
		{"WebFetch(*.example.com)", "WebFetch", host("example.com"), false},
		{"WebFetch(*.example.com)", "WebFetch", host("a.example.com"), true},
		{"WebFetch(example.com)", "WebFetch", host("93.184.216.34"), false},
	}
	for _, tt := range tests {
		p := helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule(tt.rule)}, NoGuards: true}
		d := p.Check(context.Background(), call(tt.tool, helikon.EffectSideEffect, helikon.ModeBypass, fakeTargeter{t: tt.targets}))
		if got := !d.Allowed; got != tt.match {
			t.Errorf("deny %s on %s %+v: matched=%v, want %v", tt.rule, tt.tool, tt.targets, got, tt.match)
		}
	}
}

func TestAllowRulesMustCoverEveryTarget(t *testing.T) {
	ctx := context.Background()
	tg := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{{Args: []string{"git", "status"}}, {Args: []string{"ls"}}}}}
	tests := []struct {
		allow []string
		want  bool
	}{
		{[]string{"Bash(git)"}, false},
		{[]string{"Bash(git)", "Bash(ls)"}, true},
		{[]string{"Bash"}, true},
		{[]string{"Read"}, false},
	}
	for _, tt := range tests {
		p := helikon.Permissions{Allow: must(helikon.ParseRules(tt.allow...))}
		if d := p.Check(ctx, call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, tg)); d.Allowed != tt.want {
			t.Errorf("allow %v: %v, want %v (%s)", tt.allow, d.Allowed, tt.want, d.Reason)
		}
	}
	// A call that reports no targets is not permitted by pattern rules.
	p := helikon.Permissions{Allow: must(helikon.ParseRules("Bash(git)"))}
	if d := p.Check(ctx, call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, fakeTargeter{})); d.Allowed {
		t.Error("empty targets allowed by a pattern rule")
	}
}

func TestGuards(t *testing.T) {
	home := "/home/alice"
	argv := func(a ...string) helikon.Targets { return helikon.Targets{Commands: []helikon.Command{{Args: a}}} }
	write := func(p string) helikon.Targets {
		return helikon.Targets{Paths: []helikon.PathTarget{{Path: p, Root: "/", Access: helikon.AccessWrite}}}
	}
	read := func(p string) helikon.Targets {
		return helikon.Targets{Paths: []helikon.PathTarget{{Path: p, Root: "/", Access: helikon.AccessRead}}}
	}
	tests := []struct {
		name  string
		t     helikon.Targets
		fires bool
	}{
		{"rm -rf /", argv("rm", "-rf", "/"), true},
		{"rm -fr /*", argv("rm", "-fr", "/*"), true},
		{"rm -r -f ~", argv("rm", "-r", "-f", "~"), true},
		{"rm --recursive --force $HOME", argv("rm", "--recursive", "--force", "$HOME"), true},
		{"rm -R ${HOME}/", argv("rm", "-R", "${HOME}/"), true},
		{"/bin/rm -rf /home/alice/", argv("/bin/rm", "-rf", "/home/alice/"), true},
		{"rm -rf -- /", argv("rm", "-rf", "--", "/"), true},
		{"rm -rf --no-preserve-root x", argv("rm", "-rf", "--no-preserve-root", "x"), true},
		{"rm -rf /./", argv("rm", "-rf", "/./"), true},
		{"rm -rf build", argv("rm", "-rf", "build"), false},
		{"rm -f /", argv("rm", "-f", "/"), false},
		{"rm -rf /home/alice/tmp", argv("rm", "-rf", "/home/alice/tmp"), false},
		{"ls -r /", argv("ls", "-r", "/"), false},
		{"write /etc/passwd", write("/etc/passwd"), true},
		{"write /usr/bin/x", write("/usr/bin/x"), true},
		{"write /", write("/"), true},
		{"write /dev/sda", write("/dev/sda"), true},
		{"write /dev/null", write("/dev/null"), false},
		{"write /dev/fd/3", write("/dev/fd/3"), false},
		{"write /sys/x", write("/sys/kernel/x"), true},
		{"write /etcetera", write("/etcetera/x"), false},
		{"write .git/config", write("/w/.git/config"), true},
		{"write .ssh/authorized_keys", write("/home/a/.ssh/authorized_keys"), true},
		{"write .env", write("/w/.env"), true},
		{"write .env.local", write("/w/app/.env.local"), true},
		{"write .gitignore", write("/w/.gitignore"), false},
		{"read /etc/passwd", read("/etc/passwd"), false},
		{"read .git/config", read("/w/.git/config"), false},
		{"write /usr via ..", write("/w/../usr/x"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := helikon.Permissions{Home: home}
			d := p.Check(context.Background(), call("X", helikon.EffectSideEffect, helikon.ModeBypass, fakeTargeter{t: tt.t}))
			if fired := !d.Allowed; fired != tt.fires {
				t.Errorf("fired=%v, want %v (%s)", fired, tt.fires, d.Reason)
			}
			if fired := d.Stage == helikon.StageGuard; fired != tt.fires {
				t.Errorf("stage %s", d.Stage)
			}
			off := helikon.Permissions{Home: home, NoGuards: true}
			if d := off.Check(context.Background(), call("X", helikon.EffectSideEffect, helikon.ModeBypass, fakeTargeter{t: tt.t})); !d.Allowed {
				t.Errorf("guards off still denied: %s", d.Reason)
			}
		})
	}
}

func TestCommandRulesFailClosedOnComputedWords(t *testing.T) {
	ctx := context.Background()
	dyn := helikon.Command{Args: []string{"git", "$x"}, Dynamic: []bool{false, true}}
	shifted := helikon.Command{Args: []string{"git", "$opt", "push"}, Dynamic: []bool{false, true, false}}
	upper := helikon.Command{Args: []string{"RM", "-r", "x"}}
	for _, tt := range []struct {
		rule  string
		c     helikon.Command
		deny  bool // the deny rule matches
		allow bool // the allow rule permits
	}{
		{"Bash(git push)", dyn, true, false},
		{"Bash(git push)", shifted, true, false},
		{"Bash(git)", dyn, true, true},
		{"Bash(rm)", upper, true, false},
		{"Bash(git push)", helikon.Command{Args: []string{"git", "push"}}, true, true},
	} {
		tg := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{tt.c}}}
		d := (&helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule(tt.rule)}}).Check(ctx, call("Bash", helikon.EffectSideEffect, helikon.ModeBypass, tg))
		if got := !d.Allowed; got != tt.deny {
			t.Errorf("deny %s on %v: matched=%v, want %v", tt.rule, tt.c.Args, got, tt.deny)
		}
		a := (&helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule(tt.rule)}}).Check(ctx, call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, tg))
		if a.Allowed != tt.allow {
			t.Errorf("allow %s on %v: allowed=%v, want %v", tt.rule, tt.c.Args, a.Allowed, tt.allow)
		}
	}
}

// TestDecisionNamesTheAllowRulesThatMatched: the rule a decision names is
// one that matched the call, never merely the first allow rule for the
// tool, and a call several rules allowed together names each with its
// target.
func TestDecisionNamesTheAllowRulesThatMatched(t *testing.T) {
	cmds := func(argvs ...[]string) helikon.Targets {
		var tg helikon.Targets
		for _, a := range argvs {
			tg.Commands = append(tg.Commands, helikon.Command{Args: a})
		}
		return tg
	}
	allow := []helikon.Rule{helikon.MustParseRule("Bash(git status)"), helikon.MustParseRule("Bash(touch)"), helikon.MustParseRule("Bash(ls)")}
	tests := []struct {
		name    string
		t       helikon.Targets
		rule    string
		matches []helikon.RuleMatch
		reason  string
	}{
		{"the second rule", cmds([]string{"touch", "x"}), "Bash(touch)",
			[]helikon.RuleMatch{{Rule: allow[1], Target: "touch x"}}, "allowed by rule Bash(touch)"},
		{"two rules for two commands", cmds([]string{"ls"}, []string{"touch", "x"}), "Bash(ls)",
			[]helikon.RuleMatch{{Rule: allow[2], Target: "ls"}, {Rule: allow[1], Target: "touch x"}}, `allowed by rules Bash(ls) for "ls", Bash(touch) for "touch x"`},
		{"one rule twice", cmds([]string{"touch", "a"}, []string{"touch", "b"}), "Bash(touch)",
			[]helikon.RuleMatch{{Rule: allow[1], Target: "touch a"}, {Rule: allow[1], Target: "touch b"}}, "allowed by rule Bash(touch)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := (&helikon.Permissions{Allow: allow, NoGuards: true}).Check(context.Background(), call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, fakeTargeter{t: tt.t}))
			if !d.Allowed || d.Stage != helikon.StageAllowRule || d.Rule.String() != tt.rule || !slices.Equal(d.Matches, tt.matches) || d.Reason != tt.reason {
				t.Errorf("decision %+v; want allowed by %s, matches %+v, reason %q", d, tt.rule, tt.matches, tt.reason)
			}
			if r, ok := helikon.AllowedBy(allow, "Bash", &tt.t); !ok || r.String() != tt.rule {
				t.Errorf("AllowedBy = %s, %v; want %s", r, ok, tt.rule)
			}
		})
	}
}
