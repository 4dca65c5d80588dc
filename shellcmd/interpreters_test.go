package shellcmd

import "testing"

func TestRunsCode(t *testing.T) {
	for _, tt := range []struct {
		prog string
		want bool
	}{
		{"sh", true}, {"bash", true}, {"zsh", true}, {"dash", true}, {"fish", true},
		{"python3", true}, {"node", true}, {"perl", true}, {"awk", true},
		{"eval", true}, {"exec", true}, {"source", true},
		{"env", true}, {"sudo", true}, {"doas", true}, {"xargs", true}, {"timeout", true}, {"nice", true}, {"nohup", true},
		{"ls", false}, {"git", false}, {"go", false}, {"touch", false}, {"npm", false}, {"./build.sh", false},
	} {
		if got := RunsCode(tt.prog); got != tt.want {
			t.Errorf("RunsCode(%q) = %v, want %v", tt.prog, got, tt.want)
		}
	}
}
