package local_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/workspace/local"
)

// BenchmarkReviewApply measures Review.Apply of a change of 1,000 files of
// 1 KiB (each rewritten in the review's copy) in a project of 10,000, and
// BenchmarkCpA the copy of the same 1,000 files with cp -a over the
// project's, the reference. cpu-ms/op is the processor time of
// the work (this process's for Apply, cp's for cp -a). Results:
// BENCHMARKS.md.
func BenchmarkReviewApply(b *testing.B) {
	project := b.TempDir()
	paths := benchTree(b, project, 10_000)
	opts := &local.ReviewOptions{Dir: b.TempDir()}
	ctx := b.Context()
	var wall, cpu time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		r, err := local.StartReview(ctx, project, opts)
		if err != nil {
			b.Fatal(err)
		}
		for k := range 1000 {
			rel, _ := filepath.Rel(project, paths[k*10])
			if err := os.WriteFile(filepath.Join(r.Tree(), rel), []byte("changed in the review "+rel+string(rune('a'+i%26))), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		c0 := cpuTime(syscall.RUSAGE_SELF)
		t0 := time.Now()
		changes, err := r.Apply(ctx)
		if err != nil || len(changes) != 1000 {
			b.Fatalf("Apply: %d changes, %v", len(changes), err)
		}
		wall += time.Since(t0)
		cpu += cpuTime(syscall.RUSAGE_SELF) - c0
		r.Close()
	}
	n := float64(b.N)
	b.ReportMetric(wall.Seconds()*1000/n, "apply-ms/op")
	b.ReportMetric(cpu.Seconds()*1000/n, "cpu-ms/op")
}

func BenchmarkCpA(b *testing.B) {
	src, dst := b.TempDir(), b.TempDir()
	paths := benchTree(b, src, 1000)
	benchTree(b, dst, 1000)
	_ = paths
	var wall, cpu time.Duration
	for b.Loop() {
		c0 := cpuTime(syscall.RUSAGE_CHILDREN)
		t0 := time.Now()
		if out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput(); err != nil {
			b.Fatalf("cp -a: %v\n%s", err, out)
		}
		wall += time.Since(t0)
		cpu += cpuTime(syscall.RUSAGE_CHILDREN) - c0
	}
	n := float64(b.N)
	b.ReportMetric(wall.Seconds()*1000/n, "copy-ms/op")
	b.ReportMetric(cpu.Seconds()*1000/n, "cpu-ms/op")
}
