package session_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/session"
)

func TestValidateID(t *testing.T) {
	for id, ok := range map[string]bool{
		"abc": true, "A-b_c.9": true, session.NewID(): true,
		"": false, "a b": false, "../x": false, "a/b": false, "é": false, string(make([]byte, 129)): false,
	} {
		if err := session.ValidateID(id); (err == nil) != ok {
			t.Errorf("ValidateID(%q) = %v", id, err)
		}
	}
}

// FuzzValidateID checks that every accepted id is made of the documented
// characters only, so that it is safe in a file name or a URL path.
func FuzzValidateID(f *testing.F) {
	f.Add("abc")
	f.Add("../../etc")
	f.Fuzz(func(t *testing.T, id string) {
		if session.ValidateID(id) != nil {
			return
		}
		for _, c := range []byte(id) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
				t.Fatalf("accepted %q", id)
			}
		}
		if id == "" || len(id) > 128 {
			t.Fatalf("accepted %q", id)
		}
	})
}

func ExampleMemory() {
	ctx := context.Background()
	s := session.NewMemory()
	_ = s.Append(ctx, "demo", []model.Message{model.UserMessage("hello")}, map[string]any{"visits": 1})
	got, _ := s.Get(ctx, "demo")
	fmt.Println(got.Messages[0].Text, got.State["visits"])
	// Output: hello 1
}
