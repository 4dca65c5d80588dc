package shellcmd

import "testing"

// A typical agent command: a cd, a test run, a pipeline and a redirection.
const benchCommand = `cd src && go test ./... 2>&1 | grep -v '^ok' | head -50 > /tmp/out.txt`

// A command with wrappers and a nested shell string.
const benchNested = `timeout 30s sudo -u ci env GOFLAGS=-mod=mod bash -c 'make build && find . -name "*.o" -exec rm {} +'`

func BenchmarkAnalyze(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Analyze(benchCommand)
	}
}

func BenchmarkAnalyzeNested(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Analyze(benchNested)
	}
}

func BenchmarkFilterCheck(b *testing.B) {
	p := Filter{Allow: []string{"cd", "go test", "grep", "head"}, Deny: []string{"rm", "sudo"}}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Check(benchCommand)
	}
}
