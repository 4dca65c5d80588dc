package agentcli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/shell"

	"github.com/paigasus/helikon/cli/clitest"
)

// The console blocks of README.md and docs/*.md are transcripts: this test
// runs them, in order, in one project directory per file, and checks what
// they show, so that they cannot drift from what the commands do. A
// transcript is a ```console block: lines starting with "$ " are commands;
// the lines after one are what it prints, in order (stdout, then stderr;
// other lines may come between them; "…" stands for any text; whitespace is
// not compared; /home/me/project is the project directory); a "# … exit N"
// comment is its exit status (0 when there is none). "$ cat FILE" followed
// by lines writes FILE: it is how a transcript shows the files it needs. A
// "cd project && " prefix is the directory the test already works in.
// Blocks that cannot run here (a model, a cluster) are recipes, written as
// ```sh, not transcripts.
func TestConsoleBlocksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs commands in the OS sandbox; skipped with -short")
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	ran := 0
	for _, doc := range append([]string{"../../README.md"}, docs...) {
		md, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		blocks := consoleBlocks(string(md))
		if len(blocks) == 0 {
			continue
		}
		ran++
		t.Run(filepath.Base(doc), func(t *testing.T) { runTranscripts(t, strings.TrimPrefix(doc, "../../"), blocks) })
	}
	if ran == 0 {
		t.Fatal("no console block in README.md or docs/")
	}
}

// runTranscripts runs the blocks of one file, in order, in one new project
// directory.
func runTranscripts(t *testing.T, name string, blocks []transcript) {
	home := t.TempDir()
	proj := filepath.Join(home, "project")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(proj)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, b := range blocks {
		for _, c := range b.cmds {
			where := name + ":" + strconv.Itoa(c.line)
			if c.file != "" {
				if err := os.MkdirAll(filepath.Dir(c.file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(c.file, []byte(strings.Join(c.out, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			args, err := shell.Fields(c.text, func(string) string { return "" })
			if err != nil || len(args) == 0 || args[0] != "helikon" {
				t.Errorf("%s: %q is not a helikon command a transcript can show (write it in a ```sh block): %v", where, c.text, err)
				continue
			}
			code, stdout, stderr := clitest.Run(t, "", args[1:]...)
			if code != c.exit {
				t.Errorf("%s: %s\nexit %d, the document says %d\nstdout:\n%s\nstderr:\n%s", where, c.text, code, c.exit, stdout, stderr)
				continue
			}
			want := strings.ReplaceAll(strings.Join(c.out, "\n"), "/home/me/project", proj)
			if !shows(want, stdout, stderr) {
				t.Errorf("%s: %s\nprints:\n%s%s\nthe document shows:\n%s", where, c.text, stdout, stderr, want)
			}
		}
	}
}

type transcriptCmd struct {
	line int    // 1-based line of the command in the file
	text string // the command, without "$ ", a "cd project && " prefix and the comment
	exit int    // the exit status its "# exit N" comment gives
	file string // for "$ cat FILE": the file its lines write
	out  []string
}

type transcript struct{ cmds []transcriptCmd }

var exitComment = regexp.MustCompile(`#.*\bexit (\d+)`)

// consoleBlocks returns the ```console blocks of a Markdown text.
func consoleBlocks(md string) []transcript {
	var blocks []transcript
	var cur *transcript
	for i, line := range strings.Split(md, "\n") {
		switch {
		case cur == nil && line == "```console":
			cur = &transcript{}
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil && strings.HasPrefix(line, "$ "):
			c := transcriptCmd{line: i + 1, text: strings.TrimPrefix(line, "$ ")}
			if m := exitComment.FindStringSubmatch(c.text); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
			}
			c.text = strings.TrimPrefix(stripComment(c.text), "cd project && ")
			if f, ok := strings.CutPrefix(c.text, "cat "); ok && !strings.ContainsAny(f, " |<>") {
				c.file = f
			}
			cur.cmds = append(cur.cmds, c)
		case cur != nil && len(cur.cmds) > 0:
			last := &cur.cmds[len(cur.cmds)-1]
			last.out = append(last.out, line)
		}
	}
	return blocks
}

// stripComment removes a shell comment (a # starting a word, outside
// quotes) and the blanks before it.
func stripComment(s string) string {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimRight(s[:i], " \t")
		}
	}
	return s
}

// shows reports whether a command's output shows the lines of want, in
// order (other lines may come between them): each compared whole, without
// whitespace, with "…" standing for any text. JSON on stdout is compared
// in its compact form, as a transcript writes it on one line.
func shows(want, stdout, stderr string) bool {
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(stdout)) == nil {
		stdout = compact.String()
	}
	got := strings.Split(stdout+"\n"+stderr, "\n")
	squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
	for _, w := range strings.Split(want, "\n") {
		if squash(w) == "" {
			continue
		}
		var re strings.Builder
		for i, p := range strings.Split(squash(w), "…") {
			if i > 0 {
				re.WriteString(`.*`)
			}
			re.WriteString(regexp.QuoteMeta(p))
		}
		line := regexp.MustCompile(`\A` + re.String() + `\z`)
		for len(got) > 0 && !line.MatchString(squash(got[0])) {
			got = got[1:]
		}
		if len(got) == 0 {
			return false
		}
		got = got[1:]
	}
	return true
}
