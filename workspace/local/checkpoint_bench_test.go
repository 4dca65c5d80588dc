package local_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the processor time (user and system) used so far by this
// process (who RUSAGE_SELF) or its waited-for children (RUSAGE_CHILDREN):
// on a machine shared with other jobs it tells the work done apart from
// the waiting for a processor, which wall-clock time mixes in.
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchTree writes files files of about 1 KiB in directories of 100 under
// dir, and returns their paths.
func benchTree(b *testing.B, dir string, files int) []string {
	b.Helper()
	var paths []string
	line := strings.Repeat("some source text of a line\n", 38)
	for i := range files {
		d := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		p := filepath.Join(d, fmt.Sprintf("file%03d.go", i%100))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("// file %d\n%s", i, line)), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// turn is what a turn of an agent does to the tree: it edits ten files,
// deletes one and adds one.
func turn(b *testing.B, dir string, paths []string, n int) {
	b.Helper()
	for k := range 10 {
		p := paths[(n*10+k*997)%len(paths)]
		if err := os.WriteFile(p, []byte(fmt.Sprintf("edited in turn %d\n", n)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.Remove(paths[(n*10+5003)%len(paths)])
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644)
}

// BenchmarkCheckpointTurn measures, on a tree of 10,000 files of 1 KiB,
// the cost around one turn that changes 12 of them: the checkpoint taken
// before it, the diff after it, and the undo. BenchmarkGitStashTurn is the
// same turn reverted with git (git diff, git stash, git stash drop) on the
// same tree committed. Results: BENCHMARKS.md.
func BenchmarkCheckpointTurn(b *testing.B) {
	ws, _ := newCkWorkspace(b, "host", nil)
	dir := ws.Dir()
	paths := benchTree(b, dir, 10_000)
	if _, err := ws.Checkpoint(b.Context(), "initial"); err != nil {
		b.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // past the racy margin of the first walk
	ctx := b.Context()
	var ck, diff, undo, cpu time.Duration
	for i := 0; b.Loop(); i++ {
		c0 := cpuTime(syscall.RUSAGE_SELF)
		t0 := time.Now()
		c, err := ws.Checkpoint(ctx, "turn")
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		c1 := cpuTime(syscall.RUSAGE_SELF)
		b.StopTimer()
		turn(b, dir, paths, i)
		b.StartTimer()
		c2 := cpuTime(syscall.RUSAGE_SELF)
		t2 := time.Now()
		changes, err := ws.Diff(ctx, c.ID, "")
		if err != nil || len(changes) < 12 {
			b.Fatalf("diff: %d changes, %v", len(changes), err)
		}
		t3 := time.Now()
		if err := ws.Restore(ctx, c.ID); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		cpu += c1 - c0 + cpuTime(syscall.RUSAGE_SELF) - c2
		ck, diff, undo = ck+t1.Sub(t0), diff+t3.Sub(t2), undo+t4.Sub(t3)
		if err := ws.DropCheckpoint(ctx, c.ID); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(ck.Seconds()*1000/n, "checkpoint-ms/op")
	b.ReportMetric(diff.Seconds()*1000/n, "diff-ms/op")
	b.ReportMetric(undo.Seconds()*1000/n, "undo-ms/op")
	b.ReportMetric(cpu.Seconds()*1000/n, "cpu-ms/op")
}

func BenchmarkGitStashTurn(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	dir := b.TempDir()
	paths := benchTree(b, dir, 10_000)
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("config", "gc.auto", "0") // no gc in the background, in the timings or the cleanup
	git("add", "-A")
	git("commit", "-qm", "tree")
	git("status", "--porcelain") // refreshes the index's stat data
	var diff, undo, cpu time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		turn(b, dir, paths, i)
		b.StartTimer()
		c0 := cpuTime(syscall.RUSAGE_CHILDREN)
		t0 := time.Now()
		git("add", "-A") // untracked and deleted files into the diff, as the checkpoint's diff has them
		git("diff", "--cached", "--stat", "-p")
		t1 := time.Now()
		git("stash", "-q")
		git("stash", "drop", "-q")
		t2 := time.Now()
		cpu += cpuTime(syscall.RUSAGE_CHILDREN) - c0
		diff, undo = diff+t1.Sub(t0), undo+t2.Sub(t1)
	}
	n := float64(b.N)
	b.ReportMetric(diff.Seconds()*1000/n, "diff-ms/op")
	b.ReportMetric(undo.Seconds()*1000/n, "undo-ms/op")
	b.ReportMetric(cpu.Seconds()*1000/n, "cpu-ms/op")
}
