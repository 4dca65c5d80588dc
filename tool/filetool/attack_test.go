package filetool_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
)

// A sparse file with a text head is mostly NUL bytes: Read past the head
// must refuse it as binary at the first NUL, not stream gigabytes (up to
// the file system's 16 TiB) of zeros to count lines that are not text.
func TestReadRefusesNULsInSkippedLines(t *testing.T) {
	e := newEnv(t)
	p := filepath.Join(e.root, "sparse.log")
	e.file(t, "sparse.log", strings.Repeat("a log line of text\n", 1000)) // 19000 bytes: past the sniff window
	if err := os.Truncate(p, 1<<30); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	for _, offset := range []int{1001, 5000} {
		_, err := call[filetool.ReadResult](t, e.read, filetool.ReadArgs{Path: "sparse.log", Offset: offset})
		if helikon.KindOf(err) != helikon.KindOther || !strings.Contains(err.Error(), "looks binary") {
			t.Errorf("Read offset %d of a sparse file = %v; want it refused as binary", offset, err)
		}
	}
	// NULs hidden in the cut part of a long line make the file binary too.
	e.file(t, "cut.txt", "short\n"+strings.Repeat("x", 9000)+"\x00\x00\x00\nmore\n") // past the sniff window
	if _, err := call[filetool.ReadResult](t, e.read, filetool.ReadArgs{Path: "cut.txt"}); err == nil || !strings.Contains(err.Error(), "looks binary") {
		t.Errorf("Read of a line with NULs past the cut = %v; want it refused as binary", err)
	}
	// The text head is still readable.
	res, err := call[filetool.ReadResult](t, e.read, filetool.ReadArgs{Path: "sparse.log", Offset: 10, Limit: 2})
	if err != nil || res.Content != strings.Repeat("a log line of text\n", 2) {
		t.Errorf("Read of the head = %+v, %v", res, err)
	}
	var de *helikon.DeniedError
	if errors.As(err, &de) {
		t.Fatal(err)
	}
}
