//go:build !linux

package landlock

import (
	"fmt"
	"runtime"
)

// ABI reports that Landlock exists only on Linux.
func ABI() (int, error) {
	return 0, fmt.Errorf("%w: Landlock is a Linux feature (this is %s)", ErrUnavailable, runtime.GOOS)
}

// Build fails: Landlock exists only on Linux.
func Build(abi int, c Config) (*Ruleset, error) {
	_, err := ABI()
	return nil, err
}

// RestrictThread fails: Landlock exists only on Linux.
func (r *Ruleset) RestrictThread() error {
	_, err := ABI()
	return err
}

// AllowFD fails: Landlock exists only on Linux.
func (r *Ruleset) AllowFD(fd int, access uint64) error {
	_, err := ABI()
	return err
}

func closeFD(int) error { return nil }

// Open fails: Landlock exists only on Linux.
func Open(rules []Rule) (*Opened, error) {
	_, err := ABI()
	return nil, err
}

// Close does nothing.
func (o *Opened) Close() error { return nil }
