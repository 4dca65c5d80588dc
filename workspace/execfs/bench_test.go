package execfs_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkOps measures each operation with the local runner: the time of
// one call and, as execs/op, how many execs (remote round trips) it costs.
// "exec" is the floor: one exec of the same shell running nothing.
func BenchmarkOps(b *testing.B) {
	for _, sh := range shells(b) {
		if sh.name != "dash" && sh.name != "busybox-forkd" && sh.name != "dash-forkd-od" {
			continue
		}
		f, root := newFS(b, sh, nil)
		ctx := context.Background()
		small := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
		mustWriteB(b, filepath.Join(root, "sub/small.txt"), small)
		mustWriteB(b, filepath.Join(root, "sub/big.bin"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<18)) // 1 MiB
		for i := range 20 {
			mustWriteB(b, filepath.Join(root, "list", "f"+strconv.Itoa(i)), small)
		}
		ops := []struct {
			name string
			do   func() error
		}{
			{"exec", func() error {
				_, _, _, err := sh.r.Exec(ctx, []string{sh.opts.Shell, "-c", ":"}, nil, 1<<10)
				return err
			}},
			{"Stat", func() error { _, err := f.Stat(ctx, "sub/small.txt"); return err }},
			{"ReadSmall", func() error {
				fl, err := f.Open(ctx, "sub/small.txt")
				if err == nil {
					_, err = io.ReadAll(fl)
				}
				return err
			}},
			{"Read1MiB", func() error {
				fl, err := f.Open(ctx, "sub/big.bin")
				if err == nil {
					_, err = io.ReadAll(fl)
				}
				return err
			}},
			{"WriteSmall", func() error { _, err := f.WriteFile(ctx, "sub/w.txt", small); return err }},
			{"Write1MiB", func() error {
				_, err := f.WriteFile(ctx, "sub/w.bin", bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<18))
				return err
			}},
			{"UpdateSmall", func() error {
				_, err := f.UpdateFile(ctx, "sub/small.txt", 1<<20, func(old []byte) ([][]byte, error) { return [][]byte{old}, nil })
				return err
			}},
			{"WriteSmallExpect", func() error {
				_, err := f.WriteFileExpect(ctx, "sub/w.txt", small, []string{"sub/w.txt"})
				return err
			}},
			{"UpdateSmallExpect", func() error {
				_, err := f.UpdateFileExpect(ctx, "sub/small.txt", 1<<20, []string{"sub/small.txt"}, func(old []byte) ([][]byte, error) { return [][]byte{old}, nil })
				return err
			}},
			{"ReadDir20", func() error { _, err := f.ReadDir(ctx, "list"); return err }},
			{"RenameBack", func() error {
				if err := f.Rename(ctx, "sub/small.txt", "sub/moved.txt"); err != nil {
					return err
				}
				return f.Rename(ctx, "sub/moved.txt", "sub/small.txt")
			}},
		}
		for _, op := range ops {
			b.Run(sh.name+"/"+op.name, func(b *testing.B) {
				before := sh.r.execs.Load()
				for b.Loop() {
					if err := op.do(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(sh.r.execs.Load()-before)/float64(b.N), "execs/op")
			})
		}
	}
}

func mustWriteB(b *testing.B, name string, data []byte) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
