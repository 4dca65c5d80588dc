//go:build unix

package proc

import "golang.org/x/sys/unix"

// hardLimit returns this process's hard limit on res; ok is false when it is
// unlimited or unknown.
func hardLimit(res resource) (uint64, bool) {
	which := map[resource]int{resCPU: unix.RLIMIT_CPU, resFileSize: unix.RLIMIT_FSIZE, resAddressSpace: unix.RLIMIT_AS, resOpenFiles: unix.RLIMIT_NOFILE}[res]
	var rl unix.Rlimit
	if err := unix.Getrlimit(which, &rl); err != nil || rl.Max == unix.RLIM_INFINITY {
		return 0, false
	}
	return rl.Max, true
}
