package agentsandbox

import (
	"bytes"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/paigasus/helikon/workspace"
)

// FuzzNames checks that whatever a label value or a session id holds, the
// engine writes only names the API server accepts: label values, and claim
// names that are RFC 1035 labels (the controller names a Service after the
// claim).
func FuzzNames(f *testing.F) {
	for _, s := range []string{"", "a", "host.example.com", `DOMAIN\user`, "user@example.com", "-x-", string(make([]byte, 300)), "Ünïcode"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v := labelValue(s); len(validation.IsValidLabelValue(v)) > 0 {
			t.Errorf("labelValue(%q) = %q, not a valid label value", s, v)
		}
		if workspace.ValidSession(s) == nil {
			if n := claimName(s); len(validation.IsDNS1035Label(n)) > 0 {
				t.Errorf("claimName(%q) = %q, not an RFC 1035 label: %v", s, n, validation.IsDNS1035Label(n))
			}
		}
	})
}

// FuzzPidWriter checks that the wrapper's pid line is taken and everything
// after it passes through unchanged, however the stream is cut into writes.
func FuzzPidWriter(f *testing.F) {
	f.Add(1234, []byte("err\nmore"), 1)
	f.Add(1, []byte(""), 3)
	f.Add(99999, []byte("\n\n"), 0)
	f.Fuzz(func(t *testing.T, pid int, rest []byte, cut int) {
		if pid <= 0 {
			return
		}
		stream := append([]byte(pidPrefix+strconv.Itoa(pid)+"\n"), rest...)
		var out bytes.Buffer
		p := newPidWriter(&out)
		if cut <= 0 {
			cut = 1
		}
		for i := 0; i < len(stream); i += cut {
			p.Write(stream[i:min(i+cut, len(stream))])
		}
		if got, _ := p.PID(); got != pid || !bytes.Equal(out.Bytes(), rest) {
			t.Errorf("pid %d passed %q, want %d and %q", got, out.Bytes(), pid, rest)
		}
	})
}
