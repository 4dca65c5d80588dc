package filetool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
)

func Example() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	sb, _ := fsroot.Open(dir)
	defer sb.Close()

	// One sandbox, shared by the three tools (and by a Bash backend).
	tools := helikon.MustToolset[struct{}](
		filetool.NewRead[struct{}](local.NewFS(sb), nil),
		filetool.NewWrite[struct{}](local.NewFS(sb), nil),
		filetool.NewEdit[struct{}](local.NewFS(sb), nil),
	)
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	invoke := func(name, args string) {
		t, _ := tools.Lookup(name)
		out, err := t.Invoke(tc, json.RawMessage(args))
		if err != nil {
			fmt.Printf("%s: %s error: %v\n", name, helikon.KindOf(err), err)
			return
		}
		fmt.Printf("%s: %s\n", name, out)
	}
	invoke("Write", `{"path":"hello.go","content":"package main\n\nfunc main() { println(\"hi\") }\n"}`)
	invoke("Edit", `{"path":"hello.go","old_string":"\"hi\"","new_string":"\"hello\""}`)
	invoke("Read", `{"path":"hello.go","offset":3}`)
	invoke("Read", `{"path":"hello.go","offset":0}`)
	// Output:
	// Write: {"path":"hello.go","bytes_written":44,"created":true}
	// Edit: {"path":"hello.go","replacements":1}
	// Read: {"path":"hello.go","content":"func main() { println(\"hello\") }\n","start_line":3,"end_line":3,"total_lines":3,"truncated":false}
	// Read: invalid_args error: invalid arguments for tool Read: field "offset" must be at least 1, got 0
}

func ExampleNewRead() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	os.WriteFile(dir+"/log.txt", []byte("one\ntwo\nthree\nfour\n"), 0o644)
	sb, _ := fsroot.Open(dir)
	defer sb.Close()

	// A small window, to show how a model pages through a file.
	read := filetool.NewRead[struct{}](local.NewFS(sb), &filetool.ReadOptions{MaxLines: 2})
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	out, _ := read.Invoke(tc, json.RawMessage(`{"path":"log.txt"}`))
	fmt.Println(string(out))
	out, _ = read.Invoke(tc, json.RawMessage(`{"path":"log.txt","offset":3}`))
	fmt.Println(string(out))
	// Output:
	// {"path":"log.txt","content":"one\ntwo\n","start_line":1,"end_line":2,"total_lines":4,"truncated":true}
	// {"path":"log.txt","content":"three\nfour\n","start_line":3,"end_line":4,"total_lines":4,"truncated":false}
}

func ExampleNewEdit() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	os.WriteFile(dir+"/config.ini", []byte("debug = true\nverbose = true\n"), 0o644)
	sb, _ := fsroot.Open(dir)
	defer sb.Close()

	edit := filetool.NewEdit[struct{}](local.NewFS(sb), nil)
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	_, err := edit.Invoke(tc, json.RawMessage(`{"path":"config.ini","old_string":"true","new_string":"false"}`))
	fmt.Println(err)
	out, _ := edit.Invoke(tc, json.RawMessage(`{"path":"config.ini","old_string":"true","new_string":"false","replace_all":true}`))
	fmt.Println(string(out))
	// Output:
	// old_string occurs 2 times in config.ini; include more surrounding lines to make it unique, or set replace_all to true to replace all 2: old_string is not unique
	// {"path":"config.ini","replacements":2}
}

func ExampleNewWrite() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	sb, _ := fsroot.Open(dir)
	defer sb.Close()

	write := filetool.NewWrite[struct{}](local.NewFS(sb), nil)
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	out, _ := write.Invoke(tc, json.RawMessage(`{"path":"src/app/main.txt","content":"hi\n"}`))
	fmt.Println(string(out))
	_, err := write.Invoke(tc, json.RawMessage(`{"path":"/etc/passwd","content":"x"}`))
	fmt.Println(helikon.KindOf(err))
	// Output:
	// {"path":"src/app/main.txt","bytes_written":3,"created":true}
	// denied
}
