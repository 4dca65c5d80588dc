//go:build !unix

package fsroot

import "errors"

func syscallMkfifo(string) error { return errors.New("no FIFOs on this platform") }
