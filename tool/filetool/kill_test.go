package filetool_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
)

// killChildEnv, when set to a directory, makes TestKillDuringWriteOrEdit act
// as the child process: it writes and edits one file in that directory
// forever, until the parent kills it.
const killChildEnv = "HELIKON_FILETOOL_KILL_CHILD"

// The body is large so that most of the child's time is spent inside a
// write, between creating the temporary file and renaming it.
var (
	bodyA = strings.Repeat(strings.Repeat("A", 63)+"\n", 16<<10) // 1 MiB
	bodyB = strings.Repeat(strings.Repeat("B", 63)+"\n", 16<<10)
)

var killFileRE = regexp.MustCompile(`\Agen-(\d{8})\n`)

func killChild(dir string) {
	sb, err := fsroot.Open(dir)
	if err != nil {
		fmt.Println("child:", err)
		os.Exit(2)
	}
	tc := helikon.NewToolContext(context.Background(), app{}, nil)
	w := filetool.NewWrite[app](local.NewFS(sb), nil)
	e := filetool.NewEdit[app](local.NewFS(sb), nil)
	// Decoding Write's 1 MiB argument takes longer than writing it, so the
	// child mostly edits (small arguments, 1 MiB rewritten each time) and
	// rewrites the whole file with the other body every eighth step.
	writeArgs := make([]json.RawMessage, 2)
	for i, body := range []string{bodyA, bodyB} {
		writeArgs[i], _ = json.Marshal(filetool.WriteArgs{Path: "data.txt", Content: "gen-00000000\n" + body})
	}
	for gen := 0; ; gen++ {
		if gen%8 == 0 {
			if _, err := w.Invoke(tc, writeArgs[gen/8%2]); err != nil {
				fmt.Println("child: write:", err)
				os.Exit(2)
			}
			if gen == 0 {
				fmt.Println("ready")
			}
			continue
		}
		args, _ := json.Marshal(filetool.EditArgs{Path: "data.txt", OldString: fmt.Sprintf("gen-%08d\n", gen-1), NewString: fmt.Sprintf("gen-%08d\n", gen)})
		if gen%8 == 1 {
			args, _ = json.Marshal(filetool.EditArgs{Path: "data.txt", OldString: "gen-00000000\n", NewString: fmt.Sprintf("gen-%08d\n", gen)})
		}
		if _, err := e.Invoke(tc, args); err != nil {
			fmt.Println("child: edit:", err)
			os.Exit(2)
		}
	}
}

// Killing the process in the middle of a Write or Edit leaves the old or the
// new content, whole, and the next successful write removes the dead
// writer's temporary file.
func TestKillDuringWriteOrEdit(t *testing.T) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		killChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary and writes 1 MiB files; skipped under -short")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	write := filetool.NewWrite[app](local.NewFS(sb), nil)
	// A private file: its content must never be readable by others, not
	// even in a temporary file a killed writer leaves behind.
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("gen-00000000\n"+bodyA), 0o600); err != nil {
		t.Fatal(err)
	}
	// At least 10 rounds, and more (up to 40) until a kill has landed
	// inside a write: most do, but the timing is up to the scheduler.
	staleSeen, round := 0, 0
	for ; round < 10 || staleSeen == 0 && round < 40; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringWriteOrEdit$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child did not start: %q", line)
		}
		// Let it run for a varying while so that the kill lands at
		// different points of the write and edit cycle.
		time.Sleep(time.Duration(5+round%10*11) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()

		b, err := os.ReadFile(filepath.Join(dir, "data.txt"))
		if err != nil {
			t.Fatal(err)
		}
		m := killFileRE.FindSubmatch(b)
		if m == nil {
			t.Fatalf("round %d: file has no whole header: %.40q…", round, b)
		}
		rest := string(b[len(m[0]):])
		if rest != bodyA && rest != bodyB {
			t.Fatalf("round %d: file after gen-%s is not a whole body (%d bytes)", round, m[1], len(rest))
		}
		stale := temps(t, dir)
		if len(stale) > 0 {
			staleSeen++
		}
		for _, name := range append(stale, "data.txt") {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().Perm()&^0o600 != 0 {
				t.Errorf("round %d: %s has mode %v, wider than the private file's 0600", round, name, fi.Mode().Perm())
			}
		}
		args, _ := json.Marshal(filetool.WriteArgs{Path: "data.txt", Content: "gen-00000000\n" + bodyA})
		if _, err := write.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), args); err != nil {
			t.Fatal(err)
		}
		if left := temps(t, dir); len(left) > 0 {
			t.Fatalf("round %d: temporary files left after the next write: %v", round, left)
		}
	}
	t.Logf("%d of %d kills landed inside a write (left a temporary file)", staleSeen, round)
	if staleSeen == 0 {
		t.Error("no kill landed inside a write: the test did not exercise a partial write")
	}
}

func temps(tb testing.TB, dir string) []string {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			names = append(names, e.Name())
		}
	}
	return names
}
