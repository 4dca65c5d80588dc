package execfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
)

// processRunner runs each exec as a process on this machine. An engine's
// runner sends argv to its exec API instead (docker exec, forkd's
// /exec, a pod's exec) and returns what the command printed and its exit
// code.
type processRunner struct{}

func (processRunner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if int64(len(out)) > maxStdout {
		out = out[:maxStdout]
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out, stderr.Bytes(), ee.ExitCode(), nil
	}
	return out, stderr.Bytes(), 0, err
}

func ExampleNew() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	fsys, err := execfs.New(ctx, processRunner{}, dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := fsys.WriteFile(ctx, "notes/todo.txt", []byte("write the tests\n"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", res.Path, res.BytesWritten, "bytes")

	f, err := fsys.Open(ctx, "notes/todo.txt")
	if err != nil {
		log.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	fmt.Printf("read %q\n", b)

	os.Symlink("/etc", dir+"/etc")
	_, err = fsys.Open(ctx, "etc/passwd")
	fmt.Println("outside:", errors.Is(err, workspace.ErrOutside))
	// Output:
	// wrote notes/todo.txt 16 bytes
	// read "write the tests\n"
	// outside: true
}
