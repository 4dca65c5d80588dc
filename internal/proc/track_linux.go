package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proc/reaper"
)

// tracker holds what one Run needs to find and kill its processes.
type tracker struct {
	mode Tracking
	pid  int

	// cgroup
	dir   string
	fd    int
	empty bool // the cgroup was seen empty after the main process exited

	// reaper
	statusR, statusW *os.File
	status           *exitStatus
	reaperKilled     bool
}

var (
	cgroupOnce     sync.Once
	cgroupBase     string // "" when cgroup tracking is unavailable
	cgroupWhy      string
	cgroupSeq      atomic.Uint64
	cgroupDisabled atomic.Pointer[string] // why starting into a cgroup failed
)

// Available returns the tracking [TrackAuto] chooses on this machine and, in
// words, why a stronger one is not used.
func Available() (Tracking, string) {
	cgroupOnce.Do(probeCgroup)
	if why := cgroupDisabled.Load(); why != nil {
		return TrackReaper, "child subreaper; cgroup unavailable: " + *why
	}
	if cgroupBase != "" {
		return TrackCgroup, "cgroup v2 at " + cgroupBase
	}
	return TrackReaper, "child subreaper; cgroup unavailable: " + cgroupWhy
}

// cannotStart reports whether err, from starting a command, means the
// tracking itself cannot work here; it then disables cgroup tracking for
// this process. clone3 with CLONE_INTO_CGROUP fails with ENOSYS or EPERM
// where a seccomp filter (a container runtime's default profile) refuses it.
func (t *tracker) cannotStart(err error) bool {
	if t.mode != TrackCgroup || !(errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)) {
		return false
	}
	why := "starting a process into a cgroup failed: " + err.Error()
	if cgroupDisabled.CompareAndSwap(nil, &why) {
		slog.Warn("helikon: cgroup process tracking disabled; falling back to a subreaper", "err", err)
	}
	return true
}

func newTracker(mode Tracking) (*tracker, error) {
	t := &tracker{mode: mode, fd: -1}
	switch mode {
	case TrackAuto:
		t.mode, _ = Available()
	case TrackCgroup:
		if m, why := Available(); m != TrackCgroup {
			return nil, fmt.Errorf("proc: cgroup tracking: %w: %s", backend.ErrUnavailable, why)
		}
	case TrackReaper, TrackGroup, TrackPidNamespace:
	default:
		return nil, fmt.Errorf("proc: unknown tracking %d", int(mode))
	}
	return t, nil
}

func (t *tracker) command(argv []string) (*exec.Cmd, error) {
	if t.mode == TrackReaper {
		cmd := &exec.Cmd{Path: "/proc/self/exe", Args: append([]string{reaper.Arg0}, argv...)}
		return cmd, nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("proc: %w", cmd.Err)
	}
	return cmd, nil
}

func setSession(a *syscall.SysProcAttr) { a.Setsid = true }

func (t *tracker) prepare(cmd *exec.Cmd) error {
	switch t.mode {
	case TrackCgroup:
		dir, fd, err := newCgroup()
		if err != nil {
			return err
		}
		t.dir = dir
		t.fd = fd
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = fd
	case TrackReaper:
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("proc: reaper status pipe: %w", err)
		}
		t.statusR, t.statusW = r, w
		cmd.ExtraFiles = append(cmd.ExtraFiles, w) // fd 3 in the reaper
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], reaper.Env+"=1")
	}
	return nil
}

func (t *tracker) started(pid int) {
	t.pid = pid
	if t.statusW != nil {
		t.statusW.Close()
		t.statusW = nil
	}
}

// kill kills everything that is left of the tree. It may be called more than
// once.
func (t *tracker) kill() {
	switch t.mode {
	case TrackCgroup:
		if t.dir == "" {
			break // removed: it was empty
		}
		if err := unix.Rmdir(t.dir); err == nil {
			// Nothing was left to kill: the kernel removes only a cgroup
			// that holds no live process and no child cgroup. This is the
			// usual end of a command (its main process is a zombie, which
			// a cgroup no longer counts, and it started nothing that
			// outlived it), and the check is its cleanup as well.
			t.dir, t.empty = "", true
		} else if err := writeCgroupKill(t.dir); err != nil {
			slog.Warn("helikon: cgroup.kill failed; killing by process group", "cgroup", t.dir, "err", err)
		}
		_ = unix.Kill(-t.pid, unix.SIGKILL)
	case TrackReaper:
		// The reaper kills its descendants on SIGTERM and then exits;
		// killing it first would orphan them to init.
		if !t.reaperKilled {
			t.reaperKilled = true
			_ = unix.Kill(t.pid, unix.SIGTERM)
		}
	case TrackGroup:
		// Only the process group here: waitGone scans the session for
		// members that moved to another group.
		_ = unix.Kill(-t.pid, unix.SIGKILL)
	case TrackPidNamespace:
		// SIGKILL to the init of a pid namespace kills the namespace.
		_ = unix.Kill(t.pid, unix.SIGKILL)
	}
}

// waitGone waits until every process of the tree is gone.
func (t *tracker) waitGone(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	switch t.mode {
	case TrackCgroup:
		if t.empty {
			return nil
		}
		for delay := 500 * time.Microsecond; ; delay = min(delay*2, 20*time.Millisecond) {
			populated, err := cgroupPopulated(t.dir)
			if err != nil || !populated {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("proc: cgroup %s still populated: %w", t.dir, ErrSurvivors)
			}
			_ = writeCgroupKill(t.dir)
			time.Sleep(delay)
		}
	case TrackReaper:
		// The reaper has exited (Run reaped it), and it exits only once
		// its descendants are gone; it reports the command's status.
		if t.statusR == nil {
			return nil
		}
		b, _ := readAllLimit(t.statusR, 4096)
		if reason, ok := strings.CutPrefix(string(b), reaper.UnavailablePrefix); ok {
			// Nothing was started (the reaper's own setup failed).
			return fmt.Errorf("proc: %w: %s", backend.ErrUnavailable, reason)
		}
		st, ok := parseStatus(b)
		if !ok {
			// The reaper died without reporting, or reported survivors.
			killSession(t.pid)
			return fmt.Errorf("proc: reaper of pid %d ended without confirming the tree is gone (%q): %w", t.pid, b, ErrSurvivors)
		}
		t.status = &st
		return nil
	case TrackPidNamespace:
		// The main process (the namespace's init) has exited, and the
		// kernel releases every other process of the namespace before
		// the init becomes reapable (zap_pid_ns_processes).
		return nil
	default:
		for delay := 500 * time.Microsecond; ; delay = min(delay*2, 20*time.Millisecond) {
			if !killSession(t.pid) {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("proc: session %d still has processes: %w", t.pid, ErrSurvivors)
			}
			time.Sleep(delay)
		}
	}
}

func (t *tracker) close() {
	if t.fd >= 0 {
		unix.Close(t.fd)
		t.fd = -1
	}
	if t.dir != "" {
		removeCgroup(t.dir)
		t.dir = ""
	}
	for _, f := range []*os.File{t.statusR, t.statusW} {
		if f != nil {
			f.Close()
		}
	}
	t.statusR, t.statusW = nil, nil
}

// removeCgroup removes the empty cgroup dir, retrying while the kernel
// still holds it busy for a moment.
func removeCgroup(dir string) {
	for i := range 50 {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return
		}
		if i == 49 {
			slog.Warn("helikon: cannot remove cgroup", "cgroup", dir, "err", err)
		}
		time.Sleep(time.Duration(i+1) * time.Millisecond)
	}
}

// newCgroup creates a cgroup named after this process and opens it.
func newCgroup() (string, int, error) {
	var dir string
	for {
		dir = cgroupBase + "/" + cgroupName(os.Getpid(), cgroupSeq.Add(1))
		err := unix.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if errors.Is(err, unix.EEXIST) {
			continue // left behind by an earlier process with our pid
		}
		return "", -1, fmt.Errorf("proc: create cgroup: %w: %w", backend.ErrUnavailable, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Rmdir(dir)
		return "", -1, fmt.Errorf("proc: open cgroup: %w", err)
	}
	return dir, fd, nil
}

// cgroupName is the name of the seq-th cgroup of process pid.
func cgroupName(pid int, seq uint64) string {
	return "helikon-" + strconv.Itoa(pid) + "-" + strconv.FormatUint(seq, 10)
}

// waitExit blocks until the main process has exited, leaving it a zombie
// so that its pid and process group cannot be reused until [tracker.reap].
func (t *tracker) waitExit(cmd *exec.Cmd) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// reap reaps the main process.
func (t *tracker) reap(cmd *exec.Cmd) error { return cmd.Wait() }

// probeCgroup finds this process's cgroup v2 directory and checks that a
// child cgroup can be created there and killed with cgroup.kill.
func probeCgroup() {
	base, err := ownCgroupDir()
	if err != nil {
		cgroupWhy = err.Error()
		return
	}
	probe := filepath.Join(base, fmt.Sprintf("helikon-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		cgroupWhy = fmt.Sprintf("cannot create a cgroup in %s: %v", base, err)
		return
	}
	defer unix.Rmdir(probe)
	if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err != nil {
		cgroupWhy = "cgroup.kill is missing (Linux 5.14 or later is needed)"
		return
	}
	cgroupBase = base
}

// ownCgroupDir returns the directory of this process's cgroup in the
// cgroup v2 hierarchy.
func ownCgroupDir() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	var rel string
	found := false
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = p, true
		}
	}
	if !found {
		return "", errors.New("this process is in no cgroup v2")
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mountinfo: %w", err)
	}
	defer mi.Close()
	sc := bufio.NewScanner(mi)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts [optional…] - fstype src superopts
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(fields) || fields[sep+1] != "cgroup2" {
			continue
		}
		root, mnt := unescapeMount(fields[3]), unescapeMount(fields[4])
		sub := rel
		if root != "/" {
			s, ok := strings.CutPrefix(rel, root)
			if !ok || (s != "" && !strings.HasPrefix(s, "/")) {
				continue
			}
			sub = s
		}
		dir := filepath.Join(mnt, sub)
		if strings.HasSuffix(rel, " (deleted)") {
			return "", errors.New("this process's cgroup was deleted")
		}
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, nil
		}
	}
	return "", errors.New("no cgroup2 file system is mounted where this process's cgroup is visible")
}

// unescapeMount undoes the octal escapes of /proc/self/mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupPopulated reports whether the cgroup at dir holds a live process.
// It reads cgroup.events with three system calls and no allocation beyond
// the path: it runs at the end of every command.
func cgroupPopulated(dir string) (bool, error) {
	fd, err := unix.Open(dir+"/cgroup.events", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("proc: read cgroup.events: %w", err)
	}
	var buf [256]byte
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n < 0 {
		return false, fmt.Errorf("proc: read cgroup.events: %w", err)
	}
	for line := range bytes.SplitSeq(buf[:n], []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("populated ")); ok {
			return string(v) != "0", nil
		}
	}
	return false, errors.New("proc: cgroup.events has no populated line")
}

// writeCgroupKill kills every process in the cgroup at dir.
func writeCgroupKill(dir string) error {
	fd, err := unix.Open(dir+"/cgroup.kill", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_, err = unix.Write(fd, []byte("1"))
	unix.Close(fd)
	return err
}

// StatFields returns the fields of a /proc/PID/stat (or task stat) line
// that follow the command name, from the state on: f[0] is the state, f[1]
// the parent's pid, f[2] the process group, f[3] the session.
func StatFields(stat []byte) (f []string, ok bool) { return reaper.StatFields(stat) }

// killSession kills the process group sid and every live process in
// session sid, and reports whether it found any.
func killSession(sid int) bool {
	if sid <= 1 {
		return false
	}
	_ = unix.Kill(-sid, unix.SIGKILL)
	found := false
	for _, st := range reaper.Processes() {
		if st.Session == sid || st.Pgrp == sid {
			found = true
			_ = unix.Kill(st.Pid, unix.SIGKILL)
		}
	}
	return found
}

func readAllLimit(f *os.File, n int) ([]byte, error) {
	buf := make([]byte, 0, n)
	for len(buf) < n {
		m, err := f.Read(buf[len(buf):n])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// parseStatus reads the reaper's report (reaper.FormatStatus).
func parseStatus(b []byte) (exitStatus, bool) {
	kind, num, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return exitStatus{}, false
	}
	switch kind {
	case "exit":
		return exitStatus{code: &n}, true
	case "signal":
		return exitStatus{signal: n}, true
	}
	return exitStatus{}, false
}
