//go:build !unix

package sandbox

import "errors"

func syscallMkfifo(string) error { return errors.New("no FIFOs on this platform") }
