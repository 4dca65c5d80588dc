//go:build !linux

package docker

// setIDProfile returns no profile: Docker's default profile, which the
// set-ID profile extends, is built only on Linux (its source reads the
// kernel's constants), so elsewhere containers get the daemon's default
// profile, which does not refuse set-ID modes.
func setIDProfile() ([]byte, error) { return nil, nil }
