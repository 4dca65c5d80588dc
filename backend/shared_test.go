package backend_test

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paigasus/helikon/backend"
)

func TestCappedBufferKeepsTheFirstBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cap       int64
		writes    []string
		want      string
		truncated bool
	}{
		{10, []string{"hello"}, "hello", false},
		{5, []string{"hello"}, "hello", false},
		{5, []string{"hel", "lo", ""}, "hello", false},
		{4, []string{"hello"}, "hell", true},
		{4, []string{"he", "llo", "world"}, "hell", true},
		{0, []string{"x"}, "", true},
		{0, nil, "", false},
		{5, []string{"aaa\u00e9"}, "aaa\u00e9", false},
		{5, []string{"aaaa\u00e9"}, "aaaa", true},
		{5, []string{"aaaa", "\u00e9"}, "aaaa", true},
		{6, []string{"aaaa\u00e9"}, "aaaa\u00e9", false},
		{4, []string{"a\u20ac!"}, "a\u20ac", true},
		{3, []string{"a\u20ac!"}, "a", true},
		{2, []string{"\U0001F600"}, "", true},
		{3, []string{"ab\xff\xfe"}, "ab\xff", true},   // not UTF-8: cut where the cap is
		{3, []string{"a\xc3\xc3\xa9"}, "a\xc3", true}, // a stray lead byte is not ours to fix
	}
	for _, tt := range tests {
		b := backend.NewCappedBuffer(tt.cap)
		var total int
		for _, w := range tt.writes {
			n, err := b.Write([]byte(w))
			if n != len(w) || err != nil {
				t.Errorf("Write(%q) = %d, %v; want all of it accepted", w, n, err)
			}
			total += len(w)
		}
		if got := string(b.Bytes()); got != tt.want || b.Truncated() != tt.truncated || b.Total() != int64(total) {
			t.Errorf("cap %d writes %q: got %q truncated %v total %d; want %q %v %d", tt.cap, tt.writes, got, b.Truncated(), b.Total(), tt.want, tt.truncated, total)
		}
	}
}

func TestCappedBufferConcurrentWrites(t *testing.T) {
	t.Parallel()
	b := backend.NewCappedBuffer(1000)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("0123456789"))
			}
		})
	}
	wg.Wait()
	if len(b.Bytes()) != 1000 || !b.Truncated() || b.Total() != 20000 {
		t.Errorf("len %d truncated %v total %d", len(b.Bytes()), b.Truncated(), b.Total())
	}
}

func FuzzCappedBuffer(f *testing.F) {
	f.Add([]byte("hello, w\u00f6rld \U0001F600"), uint16(9), uint8(3))
	f.Add([]byte("\xff\xfe\xc3"), uint16(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16, chunk uint8) {
		b := backend.NewCappedBuffer(int64(limit))
		step := max(int(chunk), 1)
		for i := 0; i < len(data); i += step {
			b.Write(data[i:min(i+step, len(data))])
		}
		got := b.Bytes()
		if !bytes.HasPrefix(data, got) {
			t.Fatalf("kept %q is not a prefix of %q", got, data)
		}
		if len(got) > int(limit) {
			t.Fatalf("kept %d bytes over the cap %d", len(got), limit)
		}
		if b.Truncated() != (len(data) > int(limit)) {
			t.Fatalf("truncated %v for %d bytes under cap %d", b.Truncated(), len(data), limit)
		}
		if !b.Truncated() && len(got) != len(data) {
			t.Fatalf("lost bytes without truncation")
		}
		if b.Truncated() && len(got) < int(limit)-(utf8.UTFMax-1) {
			t.Fatalf("dropped more than a partial character: kept %d of cap %d", len(got), limit)
		}
		if utf8.Valid(data) && !utf8.Valid(got) {
			t.Fatalf("valid UTF-8 %q was cut into invalid %q", data, got)
		}
	})
}

func TestIsSecretEnv(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"OPENAI_API_KEY", "anthropic_api_key", "GH_TOKEN", "GITHUB_TOKEN", "SSH_AUTH_SOCK",
		"DBUS_SESSION_BUS_ADDRESS", "DOCKER_HOST", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "DB_PASSWORD", "CLIENT_SECRET",
		"GOOGLE_APPLICATION_CREDENTIALS", "KUBECONFIG", "TOKEN", "NPM_CONFIG__AUTH",
		// Common spellings without the usual suffixes.
		"PGPASSWORD", "MYSQL_PWD", "REDIS_PASS", "STRIPE_KEY", "OPENAI_KEY", "GITHUB_PAT", "SENTRY_DSN",
		"DATABASE_URL", "AZURE_CREDENTIAL", "BASIC_AUTH", "NETRC"} {
		if !backend.IsSecretEnv(name) {
			t.Errorf("IsSecretEnv(%q) = false", name)
		}
	}
	for _, name := range []string{"PATH", "HOME", "LANG", "TERM", "GOPATH", "TOKENIZERS_PARALLELISM", "KEYBOARD", "SHELL",
		"PWD", "OLDPWD", "SSH_ASKPASS_REQUIRE", "KEYMAP", "BYPASS_CACHE", "AUTHOR"} {
		if backend.IsSecretEnv(name) {
			t.Errorf("IsSecretEnv(%q) = true", name)
		}
	}
}

func TestScrubEnv(t *testing.T) {
	t.Parallel()
	environ := []string{"PATH=/bin", "HOME=/root", "GH_TOKEN=t", "GH_REPO=r", "LC_ALL=C", "LC_X=y", "OPENAI_API_KEY=k",
		"noequals", "=novalue", "PATH=/usr/bin"}
	tests := []struct {
		allow, set []string
		want       []string
	}{
		{nil, nil, []string{}},
		{[]string{"PATH", "HOME"}, nil, []string{"PATH=/usr/bin", "HOME=/root"}},
		{[]string{"GH_*", "LC_*"}, nil, []string{"GH_REPO=r", "LC_ALL=C", "LC_X=y"}},
		{[]string{"GH_*", "GH_TOKEN"}, nil, []string{"GH_TOKEN=t", "GH_REPO=r"}},
		{[]string{"*"}, nil, []string{"PATH=/usr/bin", "HOME=/root", "GH_REPO=r", "LC_ALL=C", "LC_X=y"}},
		{[]string{"HOME"}, []string{"HOME=/sandbox", "X=1", "bad"}, []string{"HOME=/sandbox", "X=1"}},
		// A locale whose character set is not UTF-8 never reaches the
		// shell, which would read the command line in it.
		{[]string{"LC_*"}, []string{"LC_ALL=zh_CN.GBK", "LANG=zh_TW", "LC_CTYPE=en_US.UTF-8", "LOCPATH=/tmp"}, []string{"LC_X=y", "LC_CTYPE=en_US.UTF-8"}},
		{nil, []string{"LANG=C.UTF-8", "LC_ALL=POSIX"}, []string{"LANG=C.UTF-8", "LC_ALL=POSIX"}},
	}
	for _, tt := range tests {
		got := backend.ScrubEnv(environ, tt.allow, tt.set)
		if !slices.Equal(got, tt.want) {
			t.Errorf("ScrubEnv(allow %q, set %q) = %q, want %q", tt.allow, tt.set, got, tt.want)
		}
	}
}

func FuzzScrubEnv(f *testing.F) {
	f.Add("GH_TOKEN=x\nPATH=/bin\nSSH_AUTH_SOCK=/s", "GH_*\nPATH\n*")
	f.Fuzz(func(t *testing.T, env, allow string) {
		environ := strings.Split(env, "\n")
		allowList := strings.Split(allow, "\n")
		got := backend.ScrubEnv(environ, allowList, nil)
		seen := map[string]bool{}
		for _, kv := range got {
			name, _, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				t.Fatalf("malformed entry %q", kv)
			}
			if seen[name] {
				t.Fatalf("duplicate %q", name)
			}
			seen[name] = true
			if backend.IsSecretEnv(name) && !slices.Contains(allowList, name) {
				t.Fatalf("secret %q passed allowlist %q", name, allowList)
			}
			if !slices.Contains(environ, kv) {
				t.Fatalf("entry %q was not in the environment", kv)
			}
		}
	})
}

func TestLimitsDefaultsAndMerge(t *testing.T) {
	t.Parallel()
	l := backend.ResourceLimits{}.WithDefaults(30 * time.Second)
	if l.CPUSeconds != 35 || l.FileSize != 1<<30 || l.AddressSpace != 0 {
		t.Errorf("defaults %+v", l)
	}
	if l := (backend.ResourceLimits{}).WithDefaults(1500 * time.Millisecond); l.CPUSeconds != 7 {
		t.Errorf("CPU for 1.5 s timeout = %d, want 7 (rounded up)", l.CPUSeconds)
	}
	base := backend.ResourceLimits{CPUSeconds: 10, FileSize: -1}
	m := base.Merge(&backend.ResourceLimits{FileSize: 5, AddressSpace: 7})
	if m != (backend.ResourceLimits{CPUSeconds: 10, FileSize: 5, AddressSpace: 7}) || base.Merge(nil) != base {
		t.Errorf("merge %+v", m)
	}
	if got := m.WithDefaults(time.Second); got.FileSize != 5 {
		t.Errorf("defaults overrode an explicit limit: %+v", got)
	}
	for _, tt := range []struct{ max, req, want time.Duration }{
		{0, 0, backend.DefaultTimeout}, {10 * time.Second, time.Second, time.Second},
		{10 * time.Second, time.Hour, 10 * time.Second}, {10 * time.Second, -1, 10 * time.Second},
	} {
		if got := backend.EffectiveTimeout(tt.max, tt.req); got != tt.want {
			t.Errorf("EffectiveTimeout(%v, %v) = %v, want %v", tt.max, tt.req, got, tt.want)
		}
	}
}
