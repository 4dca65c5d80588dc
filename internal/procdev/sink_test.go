package procdev

import "testing"

func TestSinkIsADeviceOrDescriptorNotAFile(t *testing.T) {
	for p, want := range map[string]bool{
		"/dev/null": true, "/dev/stderr": true, "/dev/tty": true, "/dev/fd/2": true, "/dev/fd/12": true,
		"/dev/fd/": false, "/dev/fd/x": false, "/dev/fd/1/x": false, "/dev/sda": false, "/dev/nullx": false,
		"/etc/passwd": false, "dev/null": false,
	} {
		if got := Sink(p); got != want {
			t.Errorf("Sink(%q) = %v, want %v", p, got, want)
		}
	}
}
