#!/bin/sh
# Usage (as root, from the repository root):
#   go build -o /tmp/hk/helikon ./cmd/helikon && sh backend/ossandbox/testdata/cachebench.sh /tmp/hk/helikon nobody
# Times `go test ./...` twice on the host and twice through `helikon exec`
# (without and with --caches project), as USER, on a small package that
# imports net/http, encoding/json and crypto/tls. Each side starts with
# empty caches of its own.
set -eu
hk=$1 user=$2
w=$(mktemp -d /tmp/cachebench.XXXXXX)
mkdir -p "$w/proj" "$w/home-host" "$w/home-hk" "$w/home-hk2"
cat > "$w/proj/go.mod" <<'M'
module example.com/small

go 1.26
M
cat > "$w/proj/small.go" <<'G'
package small

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
)

// Config is served as JSON over TLS.
type Config struct {
	Addr string `json:"addr"`
}

// Handler serves c.
func Handler(c Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(c) })
}

// TLS is the server's TLS configuration.
func TLS() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS13} }
G
cat > "$w/proj/small_test.go" <<'T'
package small

import (
	"net/http/httptest"
	"testing"
)

func TestHandler(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler(Config{Addr: ":1"}).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 || TLS().MinVersion == 0 {
		t.Fatal(rec.Code)
	}
}
T
cp "$hk" "$w/helikon"
chown -R "$user" "$w"
chmod -R a+rX "$w"
run() { # label, home, command...
	label=$1 home=$2; shift 2
	s=$(date +%s.%N)
	(cd "$w/proj" && runuser -u "$user" -- env -i HOME="$home" PATH=/usr/local/go/bin:/usr/bin:/bin GOTOOLCHAIN=local TMPDIR="$w" "$@") >"$w/out" 2>&1 || { cat "$w/out"; exit 1; }
	e=$(date +%s.%N)
	printf '%-44s %6.2f s\n' "$label" "$(echo "$e - $s" | bc)"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run "host, first" "$w/home-host" go test ./...
run "host, second" "$w/home-host" go test ./...
run "helikon exec, first" "$w/home-hk" "$w/helikon" exec --timeout 30m --root "$w/proj" -- go test ./...
run "helikon exec, second" "$w/home-hk" "$w/helikon" exec --timeout 30m --root "$w/proj" -- go test ./...
run "helikon exec --caches project, first" "$w/home-hk2" "$w/helikon" exec --timeout 30m --root "$w/proj" --caches project -- go test ./...
run "helikon exec --caches project, second" "$w/home-hk2" "$w/helikon" exec --timeout 30m --root "$w/proj" --caches project -- go test ./...
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
ls -d "$w"/helikon-home-* 2>/dev/null && ls -A "$w"/helikon-home-*/ | sed 's/^/  left: /' || true
rm -rf "$w"
