package forkdapi

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseUnix: created_at_unix from a controller is untrusted; any JSON
// value yields a zero time or a positive one, never a panic.
func FuzzParseUnix(f *testing.F) {
	for _, s := range []string{"1700000000", "1.5", "-1", "null", `"x"`, "1e400", "NaN", "0", "{}", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm := parseUnix(json.RawMessage(s))
		if !tm.IsZero() && tm.Unix() <= 0 {
			t.Fatalf("%q: non-positive time %v", s, tm)
		}
	})
}

// FuzzValidID: an id the client accepts stays inside its URL path segment.
func FuzzValidID(f *testing.F) {
	for _, s := range []string{"sb-1", "..", "a/b", "%2e%2e", "a?b", "", strings.Repeat("a", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !ValidID(id) {
			return
		}
		u, err := url.Parse("https://c/v1/sandboxes/" + url.PathEscape(id) + "/exec")
		if err != nil || u.Path != "/v1/sandboxes/"+id+"/exec" || strings.ContainsAny(id, "/?#%") || id == "." || id == ".." {
			t.Fatalf("id %q escapes its path segment: %v %v", id, u, err)
		}
	})
}
