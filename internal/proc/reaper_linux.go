package proc

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The reaper is this program re-executed through /proc/self/exe with
// reaperEnv set and argv[0] reaperArg0. The init function below recognises
// it before main runs, so every program that links this package can serve as
// its own reaper without a separate binary.
const (
	reaperEnv  = "HELIKON_INTERNAL_PROC_REAPER"
	reaperArg0 = "helikon-reaper"
	// reaperStatusFD is the descriptor on which the reaper reports the
	// command's status (ExtraFiles[0]).
	reaperStatusFD = 3
)

func init() {
	if len(os.Args) > 1 && os.Args[0] == reaperArg0 && os.Getenv(reaperEnv) == "1" {
		os.Exit(reaperMain(os.Args[1:], nil))
	}
}

// ServeReaper is the reaper's main function for a program that re-executes
// itself under another name (the OS sandbox's launcher, which sets up a user
// and mount namespace first): the command Run started as a reaper, whose
// argument vector is argv with its first element replaced, calls it with
// argv[1:] and exits with its result. start, when not nil, wraps the
// command's start: it must call its argument on the thread the command is
// to be forked from (a confined one) and return its error; if start fails
// without calling it, nothing runs and Run fails with an error wrapping
// [backend.ErrUnavailable].
func ServeReaper(argv []string, start func(fork func() error) error) int {
	return reaperMain(argv, start)
}

// ReportUnavailable tells Run, through the reaper's status descriptor, that
// the command was not started because what it needs is unavailable; Run
// then fails with an error wrapping [backend.ErrUnavailable] and reason.
// A re-executed program calls it instead of [ServeReaper]; it returns the
// exit code to exit with.
func ReportUnavailable(reason string) int {
	fmt.Fprintf(os.Stderr, "helikon: %s\n", reason)
	if f := os.NewFile(reaperStatusFD, "status"); f != nil {
		_, _ = f.WriteString(unavailablePrefix + reason)
	}
	return 125
}

// unavailablePrefix starts a status report saying nothing was started.
const unavailablePrefix = "unavailable: "

// reaperMain runs argv as a child in its own process group, reaps every
// orphan re-parented to it, and when the child exits (or on SIGTERM, SIGINT,
// SIGHUP, or when its own parent dies) kills every remaining descendant. It
// reports the child's status on reaperStatusFD once no descendant is left.
func reaperMain(argv []string, wrap func(func() error) error) int {
	os.Unsetenv(reaperEnv)
	status := os.NewFile(reaperStatusFD, "status")
	syscall.CloseOnExec(reaperStatusFD)
	report := func(s string) {
		if status != nil {
			_, _ = status.WriteString(s)
		}
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "helikon: "+format+"\n", args...)
		report(fmt.Sprintf("exit %d", code))
		return 0
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		report(unavailablePrefix + "cannot become a child subreaper: " + err.Error())
		fmt.Fprintf(os.Stderr, "helikon: cannot become a child subreaper: %v\n", err)
		return 125
	}
	ppid := os.Getppid()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)

	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(127, "%s: %v", argv[0], err)
	}
	var p *os.Process
	fork := func() (err error) {
		p, err = os.StartProcess(path, argv, &os.ProcAttr{
			Env:   os.Environ(),
			Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
			Sys:   &syscall.SysProcAttr{Setpgid: true},
		})
		return err
	}
	if wrap == nil {
		err = fork()
	} else {
		forked := false
		err = wrap(func() error { forked = true; return fork() })
		if err != nil && !forked {
			report(unavailablePrefix + err.Error())
			fmt.Fprintf(os.Stderr, "helikon: %v\n", err)
			return 125
		}
	}
	if err != nil {
		return fail(126, "%s: %v", argv[0], err)
	}
	child := p.Pid
	_ = p.Release()

	// One goroutine reaps every child, the command and re-parented
	// orphans alike. ECHILD means no descendant is left: an orphan is
	// re-parented to us before its parent becomes reapable.
	childStatus := make(chan unix.WaitStatus, 1)
	allGone := make(chan struct{})
	go func() {
		defer close(allGone)
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, 0, nil)
			switch {
			case err == unix.EINTR:
			case err != nil:
				return
			case pid == child:
				childStatus <- ws
			}
		}
	}()

	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case ws := <-childStatus:
			childStatus <- ws
			break wait
		case <-sigs:
			break wait
		case <-tick.C:
			if os.Getppid() != ppid {
				break wait // our parent died: nobody will kill the tree for it
			}
		}
	}
	deadline := time.Now().Add(KillTimeout)
	for {
		killDescendants(os.Getpid())
		select {
		case <-allGone:
			select {
			case ws := <-childStatus:
				report(formatStatus(ws))
			default: // wait4 failed before the command was reaped
				report("signal 9")
			}
			return 0
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			report("survivors")
			return 1
		}
	}
}

// killDescendants sends SIGKILL to every descendant of pid found in /proc.
func killDescendants(pid int) {
	children := map[int][]int{}
	for _, st := range readProcStats() {
		children[st.ppid] = append(children[st.ppid], st.pid)
	}
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		_ = unix.Kill(p, unix.SIGKILL)
		queue = append(queue, children[p]...)
	}
}
