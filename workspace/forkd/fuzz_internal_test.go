package forkd

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/paigasus/helikon/internal/forkdapi"
	"github.com/paigasus/helikon/workspace"
)

// FuzzLabelsFromTheWorkspace: the labels file is read from inside a
// microVM whose commands run as root there. Whatever it holds, the labels
// carry helikon's mark, the session of the name and the controller's
// creation time, and nothing else from the file but a printable host and
// user.
func FuzzLabelsFromTheWorkspace(f *testing.F) {
	for _, s := range []string{
		`{"io.helikon.host":"h","io.helikon.user":"u"}`,
		`{"io.helikon.session":"other","io.helikon.created":"99999999999","io.helikon.managed":"false"}`,
		`{"io.helikon.host":"a\u001b[2Jb","x":"y"}`,
		`{"io.helikon.host":7}`, `[]`, `null`, ``, `{"io.helikon.user":"` + strings.Repeat("u", 300) + `"}`,
	} {
		f.Add(s)
	}
	e := &Engine{}
	created := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, file string) {
		labels := e.labelsOf(forkdapi.WorkspaceInfo{Name: "helikon-s", CreatedAt: created}, "s", file)
		if labels[workspace.LabelManaged] != "true" || labels[workspace.LabelSession] != "s" || labels[workspace.LabelCreated] != strconv.FormatInt(created.Unix(), 10) {
			t.Fatalf("trusted labels overridden by %q: %v", file, labels)
		}
		for k, v := range labels {
			switch k {
			case workspace.LabelManaged, workspace.LabelSession, workspace.LabelCreated:
			case workspace.LabelHost, workspace.LabelUser:
				if v == "" || len(v) > 253 || strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) {
					t.Fatalf("label %s = %q taken from %q", k, v, file)
				}
			default:
				t.Fatalf("label %s taken from %q", k, file)
			}
		}
	})
}

// FuzzSessionOf: a name List accepts as helikon's gives back a valid
// session whose workspace has that very name.
func FuzzSessionOf(f *testing.F) {
	for _, s := range []string{"helikon-s", "helikon-", "helikon--x", "other", "helikon-a/b", "HELIKON-s", "helikon-" + strings.Repeat("a", 60)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		s, ok := SessionOf(name)
		if !ok {
			return
		}
		if workspace.ValidSession(s) != nil || WorkspaceName(s) != name || len(name) > 64 {
			t.Fatalf("SessionOf(%q) = %q", name, s)
		}
	})
}
