package workspace_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/paigasus/helikon/workspace"
)

func TestRelConfinesLexically(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"a/b.txt", "a/b.txt", nil},
		{"a/../b.txt", "a/../b.txt", nil}, // resolved by the FS, after links
		{"/root", ".", nil},
		{"/root/", ".", nil},
		{"/root/a//b/../c", "a/c", nil},
		{"/root/d/", "d/", nil},
		{"..", "", workspace.ErrOutside},
		{"../x", "", workspace.ErrOutside},
		{"a/../../x", "", workspace.ErrOutside},
		{"/etc/passwd", "", workspace.ErrOutside},
		{"/", "", workspace.ErrOutside},
		{"/root-evil/x", "", workspace.ErrOutside},
		{"/root/../x", "", workspace.ErrOutside},
		{"", "", fs.ErrInvalid},
		{"a\x00b", "", fs.ErrInvalid},
		{strings.Repeat("a", workspace.MaxPathBytes+1), "", fs.ErrInvalid},
	} {
		got, err := workspace.Rel("/root", tc.name)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("Rel(%.40q) = %q, %v; want an error matching %v", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Rel(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
