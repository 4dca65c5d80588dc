//go:build !linux

package agentcli

// holdSignalKeys does nothing here: a Ctrl-C typed right as an approval's
// prompt appears may cancel the turn while the prompt still waits for a key.
func holdSignalKeys() (restore func()) { return func() {} }
