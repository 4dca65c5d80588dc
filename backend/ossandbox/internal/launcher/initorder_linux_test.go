package launcher_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	// The SDKs a program embedding helikon may link, with initialisation
	// of their own (GODEBUG=inittrace=1 shows it): this test binary links
	// them so that the tests below see a large program's start-up.
	_ "codeberg.org/readeck/go-readability/v2"
	_ "github.com/anthropics/anthropic-sdk-go/v2"
	_ "github.com/openai/openai-go/v3"
	_ "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	_ "modernc.org/sqlite"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// heavy are packages this test binary links whose initialisation the
// launcher must not wait for.
var heavy = []string{"net/http", "github.com/openai/openai-go/v3", "github.com/anthropics/anthropic-sdk-go/v2", "google.golang.org/grpc", "codeberg.org/readeck/go-readability/v2", "modernc.org/sqlite"}

// initTrace runs this test binary as argv0 with env and GODEBUG=inittrace=1
// and returns the packages initialised, in order, and its stderr.
func initTrace(t *testing.T, argv0 string, env ...string) ([]string, string) {
	t.Helper()
	cfg, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close() // an empty configuration: the launcher reports it and exits
	defer cfg.Close()
	var stderr bytes.Buffer
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{argv0, "-test.run=^$"},
		Env:        append(env, "GODEBUG=inittrace=1"),
		Stderr:     &stderr,
		ExtraFiles: []*os.File{nil, cfg},
	}
	_ = cmd.Run()
	var pkgs []string
	for line := range strings.Lines(stderr.String()) {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			pkgs = append(pkgs, f[1])
		}
	}
	return pkgs, stderr.String()
}

// TestLauncherRunsBeforeHeavyPackages: this program re-executed as the
// launcher reaches the launcher before any package that needs net/http, a
// model SDK, grpc or SQLite is initialised; run normally, it initialises
// them (so the trace is not empty by accident).
func TestLauncherRunsBeforeHeavyPackages(t *testing.T) {
	normal, _ := initTrace(t, os.Args[0])
	for _, p := range []string{"github.com/openai/openai-go/v3", "google.golang.org/grpc"} {
		if !contains(normal, p) {
			t.Fatalf("the test binary run normally does not initialise %s: %q", p, normal)
		}
	}
	got, stderr := initTrace(t, launcher.Arg0, launcher.Env+"=1")
	if !strings.Contains(stderr, "read the configuration") {
		t.Fatalf("the launcher did not run:\n%s", stderr)
	}
	for _, p := range heavy {
		if contains(got, p) {
			t.Errorf("%s was initialised before the launcher ran", p)
		}
	}
	t.Logf("the launcher ran after %d of %d package inits", len(got), len(normal))
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// BenchmarkSpawnTrueLargeProgram compares /bin/true started with os/exec and
// through the OS sandbox in a program that links the model SDKs, grpc and
// SQLite (this test binary). Run it as an unprivileged user to measure the
// launcher, which re-executes this program:
//
//	go test -c -o /tmp/l.test ./backend/ossandbox/internal/launcher/
//	cd /tmp && runuser -u nobody -- /tmp/l.test -test.run '^$' -test.bench SpawnTrueLargeProgram -test.count 5
func BenchmarkSpawnTrueLargeProgram(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	ob, err := ossandbox.New(b.TempDir(), nil)
	if err != nil {
		b.Skip(err)
	}
	b.Run("os-sandbox", func(b *testing.B) {
		for b.Loop() {
			res, err := ob.Run(context.Background(), &backend.Request{Argv: []string{"/bin/true"}})
			if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
				b.Fatal(err, res)
			}
		}
	})
}
