package reaper

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The reaper is this program re-executed through /proc/self/exe with Env
// set to "1" and argv[0] Arg0. The init function below recognises it before
// the program's other packages are initialised, so every program that links
// this package serves as its own reaper without a separate binary.
const (
	Env  = "HELIKON_INTERNAL_PROC_REAPER"
	Arg0 = "helikon-reaper"
	// StatusFD is the descriptor on which the reaper reports the
	// command's status (ExtraFiles[0]).
	StatusFD = 3
	// UnavailablePrefix starts a status report saying nothing was
	// started.
	UnavailablePrefix = "unavailable: "
	// KillTimeout bounds how long the reaper keeps killing descendants
	// that keep appearing before it reports survivors (proc.KillTimeout).
	KillTimeout = 3 * time.Second
)

func init() {
	if len(os.Args) > 1 && os.Args[0] == Arg0 && os.Getenv(Env) == "1" {
		os.Exit(Main(os.Args[1:], nil))
	}
}

// ReportUnavailable tells the caller, through the status descriptor, that
// the command was not started because what it needs is unavailable; the
// caller's Run then fails with an error wrapping backend.ErrUnavailable and
// reason. It returns the exit code to exit with.
//
// The reason goes to standard error, which is the command's, only when
// there is no status descriptor to take it: a caller that retries in
// another way (the OS sandbox's first command) leaves no trace in the
// command's output.
func ReportUnavailable(reason string) int {
	if f := os.NewFile(StatusFD, "status"); f == nil || writeString(f, UnavailablePrefix+reason) != nil {
		fmt.Fprintf(os.Stderr, "helikon: %s\n", reason)
	}
	return 125
}

func writeString(f *os.File, s string) error {
	_, err := f.WriteString(s)
	return err
}

// Main runs argv (argv[0] a path, as internal/proc resolves it) as a child
// in its own process group, reaps every orphan re-parented to it, and when
// the child exits (or on SIGTERM, SIGINT, SIGHUP, or when its own parent
// dies) kills every remaining descendant. It reports the child's status on
// StatusFD once no descendant is left and returns the exit code to exit
// with. wrap, when not nil, wraps the command's start: it must call its
// argument on the thread the command is to be forked from (a confined one)
// and return its error; if it fails without calling it, nothing runs and
// the status says unavailable.
func Main(argv []string, wrap func(fork func() error) error) int {
	os.Unsetenv(Env)
	status := os.NewFile(StatusFD, "status")
	syscall.CloseOnExec(StatusFD)
	report := func(s string) {
		if status != nil {
			_, _ = status.WriteString(s)
		}
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		report(UnavailablePrefix + "cannot become a child subreaper: " + err.Error())
		fmt.Fprintf(os.Stderr, "helikon: cannot become a child subreaper: %v\n", err)
		return 125
	}
	ppid := os.Getppid()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)

	child, code, failed := startChild(argv, wrap, report)
	if failed {
		return code
	}
	childStatus, allGone := reapChildren(child)
	waitForEnd(childStatus, sigs, ppid)
	return killUntilGone(childStatus, allGone, report)
}

// startChild starts argv in its own process group, through wrap when it
// is set, and returns its pid. When nothing started, failed is true and
// code is what Main returns, the status reported.
func startChild(argv []string, wrap func(fork func() error) error, report func(string)) (child, code int, failed bool) {
	fail := func(code int, format string, args ...any) (int, int, bool) {
		fmt.Fprintf(os.Stderr, "helikon: "+format+"\n", args...)
		report("exit " + strconv.Itoa(code))
		return 0, 0, true
	}
	path, err := lookPath(argv[0])
	if err != nil {
		return fail(127, "%s: %v", argv[0], err)
	}
	var p *os.Process
	attr := &syscall.SysProcAttr{Setpgid: true}
	if _, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil {
		// Standard input is the reaper's controlling terminal (it
		// leads the session): the command's group becomes its
		// foreground group, or the command would stop (SIGTTIN) at its
		// first read of the terminal and Ctrl-C would not reach it.
		attr.Foreground, attr.Ctty = true, 0
	}
	fork := func() (err error) {
		p, err = os.StartProcess(path, argv, &os.ProcAttr{
			Env:   os.Environ(),
			Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
			Sys:   attr,
		})
		return err
	}
	if wrap == nil {
		err = fork()
	} else {
		forked := false
		err = wrap(func() error { forked = true; return fork() })
		if err != nil && !forked {
			return 0, ReportUnavailable(err.Error()), true
		}
	}
	if err != nil {
		return fail(126, "%s: %v", argv[0], err)
	}
	child = p.Pid
	_ = p.Release()
	return child, 0, false
}

// reapChildren starts the one goroutine that reaps every child, the
// command and re-parented orphans alike: the command's status arrives on
// childStatus, and allGone is closed when no descendant is left (ECHILD:
// an orphan is re-parented to the reaper before its parent becomes
// reapable).
func reapChildren(child int) (childStatus chan unix.WaitStatus, allGone chan struct{}) {
	childStatus = make(chan unix.WaitStatus, 1)
	allGone = make(chan struct{})
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
	return childStatus, allGone
}

// waitForEnd returns when the command has exited (its status is left on
// childStatus), on one of sigs, or when the reaper's parent, ppid, died:
// nobody would kill the tree for it then.
func waitForEnd(childStatus chan unix.WaitStatus, sigs <-chan os.Signal, ppid int) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case ws := <-childStatus:
			childStatus <- ws
			return
		case <-sigs:
			return
		case <-tick.C:
			if os.Getppid() != ppid {
				return
			}
		}
	}
}

// killUntilGone kills every descendant until none is left, at most
// [KillTimeout], reports the command's status (or that processes
// survived) and returns the reaper's exit code.
func killUntilGone(childStatus <-chan unix.WaitStatus, allGone <-chan struct{}, report func(string)) int {
	deadline := time.Now().Add(KillTimeout)
	for {
		killDescendants(os.Getpid())
		select {
		case <-allGone:
			select {
			case ws := <-childStatus:
				report(FormatStatus(ws))
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

// lookPath checks the program the reaper is to start, as os/exec's
// LookPath would: internal/proc passes a path it resolved in its own PATH; a
// name without a slash is looked up in this environment's PATH.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, executable(name)
	}
	for dir := range strings.SplitSeq(os.Getenv("PATH"), ":") {
		if dir == "" {
			dir = "."
		}
		if p := dir + "/" + name; executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("executable file not found in $PATH")
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s: permission denied", p)
	}
	return nil
}

// FormatStatus is the report of a command that ran: "exit N" or "signal N".
func FormatStatus(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "signal " + strconv.Itoa(int(ws.Signal()))
	}
	return "exit " + strconv.Itoa(ws.ExitStatus())
}

// killDescendants sends SIGKILL to every descendant of pid found in /proc.
func killDescendants(pid int) {
	children := map[int][]int{}
	for _, st := range Processes() {
		children[st.Ppid] = append(children[st.Ppid], st.Pid)
	}
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		_ = unix.Kill(p, unix.SIGKILL)
		queue = append(queue, children[p]...)
	}
}

// StatFields returns the fields of a /proc/PID/stat (or task stat) line
// that follow the command name, from the state on: f[0] is the state, f[1]
// the parent's pid, f[2] the process group, f[3] the session. The command
// name is in parentheses and may hold anything, ')' included, so the fields
// start after the last ')'.
func StatFields(stat []byte) (f []string, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(stat[i+1:])), true
}

// Process is the part of /proc/PID/stat that tree walks need. A zombie has
// Pgrp and Session -1: it holds nothing and cannot be killed.
type Process struct {
	Pid, Ppid, Pgrp, Session int
}

// Processes returns every process visible in /proc.
func Processes() []Process {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]Process, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, ok := Stat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// Stat reads the stat of one process; ok is false when it is gone.
func Stat(pid int) (Process, bool) {
	// One open and one read: os.ReadFile's stat costs a third more
	// syscalls, and a scan reads every process.
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Process{}, false
	}
	var buf [512]byte
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return Process{}, false
	}
	f, ok := StatFields(buf[:n])
	if !ok || len(f) < 4 {
		return Process{}, false
	}
	st := Process{Pid: pid}
	st.Ppid, _ = strconv.Atoi(f[1])
	st.Pgrp, _ = strconv.Atoi(f[2])
	st.Session, _ = strconv.Atoi(f[3])
	if f[0] == "Z" || f[0] == "X" {
		st.Session, st.Pgrp = -1, -1
	}
	return st, true
}
