package dockerinfo

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSecurityOptions(t *testing.T) {
	got := SecurityOptions([]string{"name=seccomp,profile=builtin", "name=rootless", " name=userns ", "profile=orphan", ""})
	want := map[string]map[string]string{"seccomp": {"profile": "builtin"}, "rootless": {}, "userns": {}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SecurityOptions = %v, want %v", got, want)
	}
	if !Rootless([]string{"name=seccomp", "name=rootless"}) || Rootless([]string{"name=seccomp,profile=rootless"}) {
		t.Error("Rootless reads a field's value as the option's name")
	}
	if !Remapped([]string{"name=userns"}) || Remapped([]string{"name=rootless"}) {
		t.Error("Remapped is wrong")
	}
}

// TestGetReadsPodmansFieldAndHeader: Get reads the answer of a daemon on a
// unix socket, Podman's Rootless field and its Libpod-Api-Version header.
func TestGetReadsPodmansFieldAndHeader(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "d.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/info" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Libpod-Api-Version", "4.3.1")
		w.Write([]byte(`{"SecurityOptions":["name=seccomp,profile=default"],"Rootless":true,"CgroupVersion":"1"}`))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	i, err := Get(t.Context(), func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", sock) })
	if err != nil {
		t.Fatal(err)
	}
	if !i.IsRootless() || !i.Podman || !strings.Contains(string(i.Raw), `"CgroupVersion":"1"`) {
		t.Errorf("Get = %+v", i)
	}
}

func FuzzSecurityOptions(f *testing.F) {
	f.Add("name=seccomp,profile=builtin", "name=rootless")
	f.Add("name=userns", ",,=,name")
	f.Fuzz(func(t *testing.T, a, b string) {
		opts := SecurityOptions([]string{a, b})
		for name, fields := range opts {
			if name == "" || fields == nil {
				t.Fatalf("SecurityOptions(%q, %q) = %v: an empty name or nil fields", a, b, opts)
			}
		}
		if Rootless([]string{a, b}) != (opts["rootless"] != nil) {
			t.Fatalf("Rootless disagrees with SecurityOptions on %q, %q", a, b)
		}
	})
}
