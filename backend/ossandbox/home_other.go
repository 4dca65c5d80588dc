//go:build !linux

package ossandbox

// ReapHomes removes the session homes no live backend holds. Session homes
// are made on Linux only; elsewhere there is nothing to remove.
func ReapHomes(dryRun bool) ([]string, error) { return nil, nil }
