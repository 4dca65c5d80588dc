package host_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// Running a command on the host, pinned to a sandbox directory, with a
// timeout and a file-size limit.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "host-example")
	defer os.RemoveAll(dir)
	sb, err := fsroot.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	b, err := host.New(sb.Dir(), &host.Options{
		Timeout: 10 * time.Second,
		Limits:  backend.ResourceLimits{FileSize: 1 << 20},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Guarantees().Label)
	res, err := b.Run(context.Background(), &backend.Request{Command: "echo hello > greeting; cat greeting; exit 2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q exit %d\n", res.Stdout, *res.ExitCode)
	res, _ = b.Run(context.Background(), &backend.Request{Command: "sleep 60", Timeout: 100 * time.Millisecond})
	fmt.Println("timed out:", res.TimedOut, "exit code is nil:", res.ExitCode == nil)
	// Output:
	// host (no containment)
	// "hello\n" exit 2
	// timed out: true exit code is nil: true
}
