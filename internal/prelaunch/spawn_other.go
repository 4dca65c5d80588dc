//go:build !linux

package prelaunch

// Spawn returns [ErrUnsupported]: the launcher runs on Linux only.
func Spawn(string) (*Process, error) { return nil, ErrUnsupported }
