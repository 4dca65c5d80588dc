//go:build linux

package ossandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setIDMethods are the ways setIDAttack gives a file a set-ID bit: every
// call through which the kernel takes a mode that can hold one.
var setIDMethods = []string{
	"chmod", "chmod-setgid", "fchmod", "fchmodat", "fchmodat2", "creat", "open-creat",
	"openat-creat", "open-tmpfile", "mknod", "openat2",
}

// setIDAttack makes a file in dir with a set-ID bit by method (see
// setIDMethods) and reports whether the file got one. A refusal counts as
// blocked only when it is EPERM, or ENOSYS for openat2: anything else (the
// kernel clearing the bit by itself) would hide whether the filter works.
func setIDAttack(method, dir string) int {
	path := filepath.Join(dir, "plant-"+method)
	const suid, sgid = 0o4755, 0o2755
	prepare := func() error { return os.WriteFile(path, []byte("#!/bin/sh\nid\n"), 0o755) }
	var err error
	switch method {
	case "chmod":
		if err = prepare(); err == nil {
			err = unix.Chmod(path, suid)
		}
	case "chmod-setgid":
		if err = prepare(); err == nil {
			err = unix.Chmod(path, sgid)
		}
	case "fchmod":
		if err = prepare(); err == nil {
			var f *os.File
			if f, err = os.Open(path); err == nil {
				err = unix.Fchmod(int(f.Fd()), suid)
				f.Close()
			}
		}
	case "fchmodat":
		if err = prepare(); err == nil {
			_, _, errno := unix.Syscall(unix.SYS_FCHMODAT, atFDCWD, uintptr(unsafe.Pointer(cstr(path))), suid)
			err = errnoErr(errno)
		}
	case "fchmodat2":
		if err = prepare(); err == nil {
			_, _, errno := unix.Syscall6(unix.SYS_FCHMODAT2, atFDCWD, uintptr(unsafe.Pointer(cstr(path))), suid, 0, 0, 0)
			if errno == unix.ENOSYS {
				fmt.Println("fchmodat2: the kernel has no such call")
				return attackBroken
			}
			err = errnoErr(errno)
		}
	case "creat":
		err = createWith(path, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, "creat")
	case "open-creat":
		err = createWith(path, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, "open")
	case "openat-creat":
		err = createWith(path, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, "openat")
	case "open-tmpfile":
		// An unnamed file made with the mode, then given a name.
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(cstr(dir))), unix.O_TMPFILE|unix.O_WRONLY, suid, 0, 0)
		if err = errnoErr(errno); err == nil {
			err = unix.Linkat(int(fd), "", unix.AT_FDCWD, path, unix.AT_EMPTY_PATH)
			unix.Close(int(fd))
		}
	case "mknod":
		err = unix.Mknod(path, unix.S_IFREG|suid, 0)
	case "openat2":
		how := unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_EXCL, Mode: suid}
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT2, atFDCWD, uintptr(unsafe.Pointer(cstr(path))), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		if err = errnoErr(errno); err == nil {
			unix.Close(int(fd))
		}
	default:
		fmt.Println("unknown set-ID method", method)
		return attackBroken
	}
	var st unix.Stat_t
	if serr := unix.Stat(path, &st); serr == nil && st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
		fmt.Printf("escaped: %s left %s with mode %#o\n", method, path, st.Mode&0o7777)
		return attackEscaped
	}
	switch {
	case errors.Is(err, unix.EPERM), method == "openat2" && errors.Is(err, unix.ENOSYS):
		fmt.Printf("blocked: %s: %v\n", method, err)
		return attackBlocked
	case err != nil:
		fmt.Printf("%s failed otherwise: %v\n", method, err)
	default:
		fmt.Printf("%s succeeded but the kernel left no set-ID bit\n", method)
	}
	return attackBroken
}

// createWith creates path with mode 04755 through the raw call named by
// call (creat exists on amd64 only; elsewhere it is open's).
func createWith(path string, flags int, call string) error {
	var fd uintptr
	var errno unix.Errno
	switch {
	case call == "creat" && sysCreat >= 0:
		fd, _, errno = unix.Syscall(uintptr(sysCreat), uintptr(unsafe.Pointer(cstr(path))), 0o4755, 0)
	case call == "open" && sysOpen >= 0:
		fd, _, errno = unix.Syscall(uintptr(sysOpen), uintptr(unsafe.Pointer(cstr(path))), uintptr(flags), 0o4755)
	default:
		fd, _, errno = unix.Syscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(cstr(path))), uintptr(flags), 0o4755, 0, 0)
	}
	if errno != 0 {
		return errno
	}
	return unix.Close(int(fd))
}

// atFDCWD is AT_FDCWD, a negative int, as a raw syscall takes it.
var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

// cstr is path for a raw syscall, which converts it to a uintptr in the
// call expression itself, so that the bytes stay alive during the call.
func cstr(path string) *byte {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		panic(err)
	}
	return p
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}
