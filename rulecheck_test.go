package helikon_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

var builtinTools = []string{"Bash", "Edit", "Read", "WebFetch", "WebSearch", "Write"}

func TestCheckToolsRefusesRulesNamingNoTool(t *testing.T) {
	tests := []struct {
		name    string
		deny    []string
		ask     []string
		allow   []string
		tools   []string
		wantErr []string // substrings of each error, in order; nil: no error
	}{
		{name: "all known", deny: []string{"Bash(rm)", "Read(.env)"}, ask: []string{"WebFetch(example.com)"}, allow: []string{"Edit(src/**)", "Bash"}, tools: builtinTools},
		{name: "wrong case", deny: []string{"bash(rm)"}, tools: builtinTools, wantErr: []string{"deny rule bash(rm): no tool named bash; did you mean Bash?"}},
		{name: "misspelt", ask: []string{"WebFecth(example.com)"}, tools: builtinTools, wantErr: []string{"ask rule WebFecth(example.com): no tool named WebFecth; did you mean WebFetch?"}},
		{name: "no near miss", allow: []string{"Frobnicate"}, tools: builtinTools, wantErr: []string{"allow rule Frobnicate: no tool named Frobnicate (tools: Bash, Edit, Read, WebFetch, WebSearch, Write)"}},
		{name: "every bad rule reported", deny: []string{"bash(rm)", "Bash(git push)"}, allow: []string{"raed"}, tools: builtinTools, wantErr: []string{"deny rule bash(rm)", "allow rule raed: no tool named raed; did you mean Read?"}},
		{name: "no tools", deny: []string{"Bash"}, wantErr: []string{"deny rule Bash: no tool named Bash; there are no tools"}},
		// A Write or Edit pattern rule covers both tools, and as a deny or
		// ask rule it also refuses what other tools report writing.
		{name: "edit pattern deny without edit", deny: []string{"Edit(src/**)"}, tools: []string{"Bash"}},
		{name: "edit pattern allow with write", allow: []string{"Edit(src/**)"}, tools: []string{"Write"}},
		{name: "edit pattern allow without write tools", allow: []string{"Edit(src/**)"}, tools: []string{"Bash"}, wantErr: []string{"allow rule Edit(src/**): no tool named Edit (tools: Bash)"}},
		{name: "bare edit without edit", deny: []string{"Edit"}, tools: []string{"Write"}, wantErr: []string{"deny rule Edit: no tool named Edit"}},
		{name: "mcp tool known", deny: []string{"mcp__github__create_issue"}, tools: []string{"mcp__github__create_issue"}},
		{name: "mcp tool unknown", deny: []string{"mcp__github__create_isue"}, tools: []string{"Bash", "mcp__github__create_issue"}, wantErr: []string{"did you mean mcp__github__create_issue?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &helikon.Permissions{
				Deny:  helikon.MustParseRules(tt.deny...),
				Ask:   helikon.MustParseRules(tt.ask...),
				Allow: helikon.MustParseRules(tt.allow...),
			}
			err := p.CheckTools(tt.tools)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("CheckTools: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("CheckTools accepted a rule naming no tool")
			}
			errs := err.(interface{ Unwrap() []error }).Unwrap()
			if len(errs) != len(tt.wantErr) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tt.wantErr), err)
			}
			for i, e := range errs {
				var ute *helikon.UnknownToolError
				if !errors.As(e, &ute) {
					t.Fatalf("error %d is %T, want *UnknownToolError", i, e)
				}
				if !strings.Contains(e.Error(), tt.wantErr[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, e, tt.wantErr[i])
				}
			}
		})
	}
}

func TestCheckToolsNilPermissions(t *testing.T) {
	var p *helikon.Permissions
	if err := p.CheckTools(nil); err != nil {
		t.Fatal(err)
	}
}

func TestSuggestTool(t *testing.T) {
	tests := []struct{ name, want string }{
		{"bash", "Bash"},
		{"BASH", "Bash"},
		{"read", "Read"},
		{"webfetch", "WebFetch"},
		{"Bsah", "Bash"},  // a swap
		{"Bassh", "Bash"}, // a doubled letter
		{"Wirte", "Write"},
		{"Rad", "Read"},
		{"Frobnicate", ""},
		{"Ed", ""}, // too short for two edits to mean anything
		{"Xdit", "Edit"},
	}
	for _, tt := range tests {
		if got := helikon.SuggestTool(tt.name, builtinTools); got != tt.want {
			t.Errorf("SuggestTool(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	// Equally near names: no guess.
	if got := helikon.SuggestTool("Rexd", []string{"Read", "Rend"}); got != "" {
		t.Errorf("SuggestTool with a tie = %q, want none", got)
	}
}

func TestMustParseRulesPanicsOnABadRule(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParseRules did not panic")
		}
	}()
	helikon.MustParseRules("Bash(rm)", "Bash(")
}

func ExampleMustParseRules() {
	deny := helikon.MustParseRules("Bash(rm)", "Read(.env)", "WebFetch(example.com)")
	fmt.Println(deny)
	// Output: [Bash(rm) Read(.env) WebFetch(example.com)]
}

func ExamplePermissions_CheckTools() {
	p := &helikon.Permissions{Deny: helikon.MustParseRules("bash(rm)")}
	err := p.CheckTools([]string{"Bash", "Read"})
	var ute *helikon.UnknownToolError
	if errors.As(err, &ute) {
		fmt.Println(ute)
		fmt.Println(ute.Suggestion)
	}
	// Output:
	// deny rule bash(rm): no tool named bash; did you mean Bash?
	// Bash
}
