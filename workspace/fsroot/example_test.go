package fsroot_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/fsroot"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)

	sb, err := fsroot.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()

	// Writes are atomic and create parent directories inside the root.
	res, _ := sb.WriteFile(context.Background(), "notes/todo.txt", []byte("ship it\n"))
	fmt.Println(res.Path, res.Created)

	f, _, _ := sb.OpenRegular("notes/todo.txt")
	b, _ := io.ReadAll(f)
	f.Close()
	fmt.Printf("%q\n", b)

	// Paths that leave the root are refused.
	_, err = sb.WriteFile(context.Background(), "../escape.txt", []byte("x"))
	fmt.Println(errors.Is(err, workspace.ErrOutside))
	// Output:
	// notes/todo.txt true
	// "ship it\n"
	// true
}
