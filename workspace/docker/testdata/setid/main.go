// Command setid gives a file a set-user-ID bit through one system call, for
// the bind mode's set-ID attack test (setid_test.go builds it statically and
// runs it in the container, whose image has no compiler and no perl). It
// prints "made" when the file got the bit and "refused: ERR" when the call
// failed.
//
//	setid METHOD PATH
package main

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// Numbers that package syscall lacks, the same on amd64 and arm64.
const (
	sysOpenat2   = 437
	sysFchmodat2 = 452
	atFDCWD      = -100
	oTmpfile     = 0o20000000 | syscall.O_DIRECTORY
)

func main() {
	if len(os.Args) != 3 {
		fmt.Println("usage: setid METHOD PATH")
		os.Exit(2)
	}
	method, path := os.Args[1], os.Args[2]
	p, _ := syscall.BytePtrFromString(path)
	dir, _ := syscall.BytePtrFromString(path[:len(path)-len(base(path))])
	cwd := atFDCWD
	var errno syscall.Errno
	switch method {
	case "fchmodat2":
		os.WriteFile(path, []byte("x"), 0o755)
		_, _, errno = syscall.Syscall6(sysFchmodat2, uintptr(cwd), uintptr(unsafe.Pointer(p)), 0o4755, 0, 0, 0)
	case "open-creat":
		var fd uintptr
		fd, _, errno = syscall.Syscall6(syscall.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(p)), syscall.O_CREAT|syscall.O_WRONLY, 0o4755, 0, 0)
		if errno == 0 {
			syscall.Close(int(fd))
		}
	case "open-tmpfile":
		var fd uintptr
		fd, _, errno = syscall.Syscall6(syscall.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(dir)), oTmpfile|syscall.O_WRONLY, 0o4755, 0, 0)
		if errno == 0 {
			empty, _ := syscall.BytePtrFromString("")
			_, _, errno = syscall.Syscall6(syscall.SYS_LINKAT, fd, uintptr(unsafe.Pointer(empty)), uintptr(cwd), uintptr(unsafe.Pointer(p)), 0x1000, 0) // AT_EMPTY_PATH
			syscall.Close(int(fd))
		}
	case "mknod":
		if err := syscall.Mknod(path, syscall.S_IFREG|0o4755, 0); err != nil {
			errno = err.(syscall.Errno)
		}
	case "openat2":
		how := struct{ flags, mode, resolve uint64 }{syscall.O_CREAT | syscall.O_WRONLY, 0o4755, 0}
		var fd uintptr
		fd, _, errno = syscall.Syscall6(sysOpenat2, uintptr(cwd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		if errno == 0 {
			syscall.Close(int(fd))
		}
	default:
		fmt.Println("unknown method", method)
		os.Exit(2)
	}
	var st syscall.Stat_t
	if syscall.Stat(path, &st) == nil && st.Mode&syscall.S_ISUID != 0 {
		fmt.Println("made")
		return
	}
	fmt.Printf("refused: %v\n", errno)
}

func base(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}
