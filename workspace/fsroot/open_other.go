//go:build !unix

package fsroot

// openReadFlags is empty where open(2) has no O_NONBLOCK: such platforms
// have no FIFOs in the file system either.
const openReadFlags = 0
