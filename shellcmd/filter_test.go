package shellcmd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

func TestFilterCheck(t *testing.T) {
	deny := Filter{Deny: []string{"rm", "git push", "sudo"}}
	allow := Filter{Allow: []string{"ls", "cat", "grep", "git status", "git diff", "echo"}}
	tests := []struct {
		name    string
		p       Filter
		cmd     string
		denied  bool
		because string // fragment of the reason
	}{
		{"empty passes deny", deny, "", false, ""},
		{"empty passes allow", allow, "  ", false, ""},
		{"zero filter allows unresolved", Filter{}, "eval rm", false, ""},
		{"deny plain", deny, "rm -rf /", true, "deny list"},
		{"deny escaped", deny, `r\m -rf /`, true, `"rm -rf /"`},
		{"deny quoted", deny, `"r""m" x`, true, "deny list"},
		{"deny path", deny, "/bin/rm x", true, "deny list"},
		{"deny dot path", deny, "./rm x", true, "deny list"},
		{"deny in pipeline", deny, "ls | rm x", true, "deny list"},
		{"deny in subst", deny, "echo $(rm x)", true, "deny list"},
		{"deny through env", deny, "env -i rm x", true, "deny list"},
		{"deny wrapper", deny, "sudo -u x ls", true, `pattern "sudo"`},
		{"deny through sudo", Filter{Deny: []string{"rm"}}, "sudo -u x rm", true, "rm"},
		{"deny through xargs", deny, "ls | xargs -0 rm", true, "deny list"},
		{"deny through find", deny, `find . -exec rm {} \;`, true, "deny list"},
		{"deny nested sh", deny, `bash -c 'sh -c "rm x"'`, true, "deny list"},
		{"deny function body", deny, "ls() { rm x; }; ls", true, "deny list"},
		{"deny unresolved", deny, "a=rm; $a x", true, "deny list is in force"},
		{"deny eval", deny, "eval ls", true, "eval"},
		{"deny unparseable", deny, "ls 'x", true, "cannot parse"},
		{"deny leading args", deny, "git push origin main", true, "git push"},
		{"deny leading args other", deny, "git pull", false, ""},
		{"deny leading args computed", deny, "git $sub origin", true, "git push"},
		{"deny leading args quoted computed", deny, `git "$sub"`, true, "git push"},
		{"deny leading args glob", deny, "git pu*", true, "git push"},
		{"deny passes other", deny, "ls -la && cat f", false, ""},
		{"allow all listed", allow, "ls -la | grep x && git status", false, ""},
		{"allow path form", allow, "/bin/ls", false, ""},
		{"allow missing program", allow, "ls; curl x", true, `"curl x"`},
		{"allow wrapper not listed", allow, "env ls", true, "allow list"},
		{"allow hidden in subst", allow, "echo $(curl x)", true, "curl"},
		{"allow leading args", allow, "git diff HEAD", false, ""},
		{"allow leading args other", allow, "git push", true, "allow list"},
		{"allow leading args computed", allow, "git $x", true, "allow list"},
		{"allow leading args shifted", allow, "git $x status", true, "allow list"},
		{"allow unresolved", allow, "$(echo ls)", true, "allow list is in force"},
		{"allow eval", allow, "eval ls", true, "eval"},
		{"allow source", allow, ". ./x", true, "from a file"},
		{"allow arithmetic injection", allow, "x='a[$(curl x)]'; echo $((x))", true, "arithmetic"},
		{"deny wins over allow", Filter{Allow: []string{"rm"}, Deny: []string{"rm"}}, "rm x", true, "deny list"},
		{"deny ignores case", deny, "RM -rf /", true, "deny list"},
		{"allow keeps case", allow, "LS", true, "allow list"},
		{"program pattern by path", Filter{Deny: []string{"/usr/bin/rm"}}, "rm x", true, "deny list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Check(tt.cmd)
			if !tt.denied {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want nil", tt.cmd, err)
				}
				return
			}
			var de *helikon.DeniedError
			if !errors.As(err, &de) {
				t.Fatalf("Check(%q) = %v, want a *helikon.DeniedError", tt.cmd, err)
			}
			if helikon.KindOf(err) != helikon.KindDenied {
				t.Errorf("KindOf = %q", helikon.KindOf(err))
			}
			if !strings.Contains(de.Reason, tt.because) {
				t.Errorf("reason %q does not contain %q", de.Reason, tt.because)
			}
		})
	}
}

func TestFilterInvalidPattern(t *testing.T) {
	p := Filter{Deny: []string{"rm", "  "}}
	if err := p.Check("ls"); !errors.Is(err, ErrInvalidPattern) {
		t.Fatalf("Check with an empty pattern = %v, want ErrInvalidPattern", err)
	}
	if err := p.Validate(); !errors.Is(err, ErrInvalidPattern) {
		t.Fatalf("Validate = %v", err)
	}
	if err := (&Filter{Allow: []string{"git status"}}).Validate(); err != nil {
		t.Fatalf("Validate = %v", err)
	}
}

// TestFilterAgreesWithCoreRules checks that the core's Bash(...) rules see
// the same verdicts as Filter when the analysis is handed to them as Targets.
func TestFilterAgreesWithCoreRules(t *testing.T) {
	cmds := []string{"rm -rf /", "ls | grep x", "git push", "git status", "sudo rm x", "eval ls", "$(echo rm)", "", "env -i rm"}
	patterns := []string{"rm", "ls", "git push", "grep", "git status", "sudo", "/bin/rm"}
	for _, cmd := range cmds {
		a := Analyze(cmd)
		for _, pat := range patterns {
			perm := helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Bash(" + pat + ")")}, NoGuards: true}
			d := perm.Check(context.Background(), helikon.Call{Tool: "Bash", Mode: helikon.ModeBypass, Targeter: targeter{a}})
			coreDenies := !d.Allowed && d.Stage == helikon.StageDenyRule
			ourDenies := (&Filter{Deny: []string{pat}}).CheckAnalysis(a) != nil
			if coreDenies != ourDenies {
				t.Errorf("deny %q on %q: core %v, Filter %v", pat, cmd, coreDenies, ourDenies)
			}
			if cmd == "" {
				continue // the core's pattern rules permit no call without commands
			}
			allowPerm := helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("Bash(" + pat + ")")}, NoGuards: true}
			d = allowPerm.Check(context.Background(), helikon.Call{Tool: "Bash", Mode: helikon.ModeDontAsk, Targeter: targeter{a}})
			ourAllows := (&Filter{Allow: []string{pat}}).CheckAnalysis(a) == nil
			if d.Allowed != ourAllows {
				t.Errorf("allow %q on %q: core %v, Filter %v", pat, cmd, d.Allowed, ourAllows)
			}
		}
	}
}

type targeter struct{ a *Analysis }

func (t targeter) Targets(json.RawMessage) (helikon.Targets, error) { return t.a.Targets(), nil }
