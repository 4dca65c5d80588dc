package cli

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctorProbesTheDockerDaemon(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/version":
			w.Write([]byte(`{"Version":"20.10.24","ApiVersion":"1.41"}`))
		case "/info":
			w.Write([]byte(`{"SecurityOptions":["name=seccomp,profile=builtin"]}`))
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	// Rootless Podman 4.3's service, as it answers.
	rootless := filepath.Join(t.TempDir(), "podman.sock")
	ln3, err := net.Listen("unix", rootless)
	if err != nil {
		t.Fatal(err)
	}
	srv3 := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Libpod-Api-Version", "4.3.1")
		switch r.URL.Path {
		case "/version":
			w.Write([]byte(`{"Version":"4.3.1","ApiVersion":"1.41"}`))
		case "/info":
			w.Write([]byte(`{"SecurityOptions":["name=seccomp,profile=default"],"Rootless":true}`))
		default:
			http.NotFound(w, r)
		}
	})}
	go srv3.Serve(ln3)
	defer srv3.Close()
	notDocker := filepath.Join(t.TempDir(), "other.sock")
	ln2, _ := net.Listen("unix", notDocker)
	srv2 := &http.Server{Handler: http.NotFoundHandler()}
	go srv2.Serve(ln2)
	defer srv2.Close()
	for _, tt := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"DOCKER_HOST": "unix://" + sock}, "daemon 20.10.24 (API 1.41)"},
		{map[string]string{"DOCKER_HOST": "unix://" + notDocker}, "not as a Docker daemon"},
		{map[string]string{"DOCKER_HOST": "unix://" + rootless}, "daemon 4.3.1 (API 1.41) at unix://" + rootless + ", rootless Podman (containers run in its user's own user namespace"},
		{map[string]string{"DOCKER_HOST": "unix:///nonexistent.sock"}, "no daemon answers"},
		{map[string]string{"DOCKER_HOST": "ssh://host"}, "neither unix:// nor tcp://"},
		{map[string]string{"DOCKER_HOST": "tcp://h:2376", "DOCKER_TLS_VERIFY": "1"}, "needs TLS"},
	} {
		env := &Env{Getenv: func(k string) string { return tt.vars[k] }}
		if got := probeDocker(context.Background(), env); !strings.Contains(got, tt.want) {
			t.Errorf("%v: %q, want %q", tt.vars, got, tt.want)
		}
	}
}
