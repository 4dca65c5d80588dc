package process_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/process"
)

func newTable(t *testing.T, opts *process.Options) *process.Table {
	t.Helper()
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := process.New(t.Context(), b, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	return tab
}

func start(t *testing.T, tab *process.Table, command string) *process.Entry {
	t.Helper()
	e, err := tab.Start(t.Context(), &backend.StartRequest{Request: backend.Request{Command: command}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// readUntil reads e's new output until it holds want.
func readUntil(t *testing.T, e *process.Entry, want string) string {
	t.Helper()
	var got string
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(got, want) {
		if time.Now().After(deadline) {
			t.Fatalf("output %q never held %q", got, want)
		}
		c, err := e.ReadNew(t.Context(), time.Second, 0)
		if err != nil {
			t.Fatal(err)
		}
		got += string(c.Data)
	}
	return got
}

func TestStartBeyondTheMaximumSaysWhatToDo(t *testing.T) {
	tab := newTable(t, &process.Options{MaxProcesses: 2})
	a := start(t, tab, "sleep 300")
	start(t, tab, "sleep 300")
	_, err := tab.Start(t.Context(), &backend.StartRequest{Request: backend.Request{Command: "sleep 300"}})
	if !errors.Is(err, process.ErrTooMany) || !strings.Contains(err.Error(), "end one") {
		t.Fatalf("third start = %v, want ErrTooMany saying what to do", err)
	}
	if _, err := tab.Kill(t.Context(), a.ID); err != nil {
		t.Fatal(err)
	}
	start(t, tab, "sleep 300") // an ended process frees its slot
}

func TestReadNewReturnsOnlyWhatIsNew(t *testing.T) {
	tab := newTable(t, nil)
	e := start(t, tab, `echo one; read x; echo two; read y`)
	if got := readUntil(t, e, "one\n"); got != "one\n" {
		t.Fatalf("first read %q", got)
	}
	e.Write([]byte("\n"))
	if got := readUntil(t, e, "two\n"); got != "two\n" {
		t.Fatalf("second read %q, want only the new line", got)
	}
	info := e.Info()
	if !info.Running || info.Unread != 0 || info.Output != 8 {
		t.Fatalf("info %+v", info)
	}
}

// TestAnotherSessionCannotReachAProcess is the attack of one session
// reading, writing to or killing another's process by its id.
func TestAnotherSessionCannotReachAProcess(t *testing.T) {
	mine, theirs := newTable(t, nil), newTable(t, nil)
	e := start(t, mine, "echo secret; sleep 300")
	readUntil(t, e, "secret")
	if _, err := theirs.Get(e.ID); !errors.Is(err, process.ErrNotFound) {
		t.Fatalf("another table's Get(%s) = %v, want ErrNotFound", e.ID, err)
	}
	if _, err := theirs.Kill(t.Context(), e.ID); !errors.Is(err, process.ErrNotFound) {
		t.Fatalf("another table's Kill(%s) = %v, want ErrNotFound", e.ID, err)
	}
	if len(theirs.List()) != 0 {
		t.Fatalf("another table lists %+v", theirs.List())
	}
}

// TestOutputFloodIsBounded is the attack of a process flooding its output:
// the table keeps the ring's worth and says how much was missed.
func TestOutputFloodIsBounded(t *testing.T) {
	tab := newTable(t, &process.Options{RingSize: 1 << 10})
	e := start(t, tab, `head -c 5000000 /dev/zero; echo; echo end`)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := e.Process().Wait(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := e.ReadNew(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Data) != 1<<10 || c.Missed != 5000005-1<<10 || !strings.HasSuffix(string(c.Data), "\nend\n") {
		t.Fatalf("kept %d bytes, missed %d, ends %q", len(c.Data), c.Missed, c.Data[max(len(c.Data)-5, 0):])
	}
}

// TestCloseEndsEveryProcess is the attack of a process surviving its
// session: after Close nothing of the table runs, and Start fails.
func TestCloseEndsEveryProcess(t *testing.T) {
	tab := newTable(t, nil)
	var es []*process.Entry
	for range 3 {
		es = append(es, start(t, tab, "sleep 300 & sleep 300"))
	}
	tab.Close()
	for _, e := range es {
		select {
		case <-e.Process().Done():
		default:
			t.Fatalf("%s runs after Close", e.ID)
		}
	}
	if _, err := tab.Start(t.Context(), &backend.StartRequest{Request: backend.Request{Command: "true"}}); !errors.Is(err, process.ErrClosed) {
		t.Fatalf("Start after Close = %v, want ErrClosed", err)
	}
}

func TestIdleProcessIsKilled(t *testing.T) {
	tab := newTable(t, &process.Options{Idle: 200 * time.Millisecond})
	e := start(t, tab, "sleep 300")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := e.Process().Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if info := e.Info(); info.Running || info.Ended != "idle" || info.ExitCode != nil {
		t.Fatalf("info %+v, want ended for idleness", info)
	}
}
