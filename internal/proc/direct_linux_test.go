package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
)

// A direct start runs Path with Argv unchanged (argv[0] as given) under the
// limits, set before the program's first instruction; the program is not
// traced once it runs.
func TestDirectStart(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Tracking{TrackAuto, TrackGroup} {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			if got, _ := Available(); m == TrackAuto && got == TrackReaper {
				t.Skip("auto picks the reaper here, which refuses a direct start (TestDirectStartRefusals)")
			}
			res, err := Run(context.Background(), &Spec{
				Argv:     []string{"my-name", "-c", `echo "$0"; ulimit -H -t; ulimit -t; ulimit -n; grep TracerPid /proc/self/status`},
				Path:     sh,
				Tracking: m,
				Dir:      t.TempDir(),
				Env:      []string{"PATH=" + os.Getenv("PATH")},
				Limits:   &backend.ResourceLimits{CPUSeconds: 9, OpenFiles: 64},
			})
			if err != nil {
				t.Fatal(err)
			}
			want := "my-name\n9\n9\n64\nTracerPid:\t0\n"
			if got := string(res.Stdout); got != want || res.ExitCode == nil || *res.ExitCode != 0 {
				t.Errorf("stdout %q exit %v stderr %q, want %q and 0", got, res.ExitCode, res.Stderr, want)
			}
		})
	}
}

// What cannot be started directly fails with ErrNoDirectStart or a
// StartError, and nothing runs.
func TestDirectStartRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := dir + "/ran"
	sh, _ := exec.LookPath("sh")
	lim := &backend.ResourceLimits{CPUSeconds: 5}
	argv := []string{"sh", "-c", "touch " + marker}
	for _, tt := range []struct {
		name string
		s    Spec
		want error
	}{
		{"reaper", Spec{Argv: argv, Path: sh, Limits: lim, Tracking: TrackReaper}, ErrNoDirectStart},
		{"starter", Spec{Argv: argv, Path: sh, Limits: lim, Starter: startFunc((*exec.Cmd).Start)}, ErrNoDirectStart},
		{"address space", Spec{Argv: argv, Path: sh, Limits: &backend.ResourceLimits{AddressSpace: 1 << 30}}, ErrNoDirectStart},
		{"missing program", Spec{Argv: argv, Path: dir + "/missing", Limits: lim, Tracking: TrackGroup}, nil},
	} {
		tt.s.Dir = dir
		_, err := Run(context.Background(), &tt.s)
		var se *StartError
		if tt.want != nil && !errors.Is(err, tt.want) || tt.want == nil && !errors.As(err, &se) {
			t.Errorf("%s: err %v, want %v or a StartError", tt.name, err, tt.want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a refused direct start ran the program")
	}
}

// Timeout, cancellation and floods on the poll loop (the path every
// command without a reaper or a start function takes on Linux).
func TestLoopTimeoutCancelFlood(t *testing.T) {
	t.Parallel()
	for _, m := range []Tracking{TrackAuto, TrackGroup} {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			res := mustRun(t, context.Background(), spec(t, m, "sleep 30 & sleep 30", 200*time.Millisecond))
			if !res.TimedOut || res.ExitCode != nil {
				t.Errorf("timeout: %+v", res)
			}
			ctx, cancel := context.WithCancel(context.Background())
			s := spec(t, m, "echo started; exec sleep 30", 0)
			r, w, _ := os.Pipe()
			s.Stdout = w
			go func() {
				b := make([]byte, 8)
				_, _ = r.Read(b)
				cancel()
			}()
			res, err := Run(ctx, s)
			w.Close()
			r.Close()
			if !errors.Is(err, context.Canceled) || res == nil || res.ExitCode != nil {
				t.Errorf("cancel: %+v %v", res, err)
			}
			s = spec(t, m, "head -c 3000000 /dev/zero; echo done >&2", 0)
			s.OutputCap = 1000
			res = mustRun(t, context.Background(), s)
			if len(res.Stdout) != 1000 || !res.Truncated || string(res.Stderr) != "done\n" || res.ExitCode == nil || *res.ExitCode != 0 {
				t.Errorf("flood: %d bytes truncated %v stderr %q exit %v", len(res.Stdout), res.Truncated, res.Stderr, res.ExitCode)
			}
		})
	}
}
