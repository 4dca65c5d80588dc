package cli_test

import (
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

// Sizes and durations parse in the forms the help prints, and a value that
// does not parse says what the flag takes.
func TestSizeAndDurationFlags(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"exec", "--mem", "1G", "--", "true"}, -1, ""},
		{[]string{"exec", "--fsize", "1 GiB", "--", "true"}, -1, ""},
		{[]string{"exec", "--fsize", "512MiB", "--mem", "4294967296", "--", "true"}, -1, ""},
		{[]string{"exec", "--fsize", "1 GB", "--", "true"}, -1, ""},
		{[]string{"exec", "--fsize", "lots", "--", "true"}, 125, "a size is a number of bytes or a number with a unit"},
		{[]string{"exec", "--mem", "-1", "--", "true"}, 125, "a size is a number of bytes"},
		{[]string{"exec", "--mem", "1X", "--", "true"}, 125, "a size is a number of bytes"},
		{[]string{"exec", "--mem", "99999999T", "--", "true"}, 125, "a size is a number of bytes"},
		{[]string{"exec", "--timeout", "5", "--", "true"}, 125, "a duration needs a unit: 5s or 5m"},
		{[]string{"exec", "--timeout", "soon", "--", "true"}, 125, "a duration is a number with a unit"},
		{[]string{"exec", "--timeout", "-3s", "--", "true"}, 125, "cannot be negative"},
		{[]string{"exec", "--timeout", "5s", "--", "true"}, -1, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := clitest.Run(t, "", tc.args...)
			if tc.code < 0 {
				if code == 125 {
					t.Fatalf("exit 125, want the flags accepted; stderr:\n%s", stderr)
				}
				return
			}
			if code != tc.code || !strings.Contains(stderr, tc.wantStderr) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tc.code, tc.wantStderr)
			}
		})
	}
}

// A flag typo ends with the flag the user most likely meant, after the
// usage, so that it is the last thing on the screen.
func TestFlagTypoSuggestsTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--tiemout", "5s", "--", "true"}, "exec: unknown flag --tiemout; did you mean --timeout?\n"},
		{[]string{"exec", "--backnd", "os", "--", "true"}, "did you mean --backend?\n"},
		{[]string{"exec", "--zzzzzzzz", "--", "true"}, "exec: unknown flag --zzzzzzzz (helikon exec --help lists them)\n"},
	} {
		code, _, stderr := clitest.Run(t, "", tc.args...)
		if code != 125 || !strings.HasSuffix(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr ends %q, want 125 and a last line %q", tc.args, code, tail(stderr), tc.want)
		}
	}
}

func tail(s string) string {
	if i := strings.LastIndex(strings.TrimSuffix(s, "\n"), "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}
