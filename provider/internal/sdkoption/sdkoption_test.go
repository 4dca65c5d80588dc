package sdkoption

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
)

// record builds each option as a string naming it, so that a test can
// compare what Build asked the SDK for.
var record = Constructors[string]{
	APIKey:     func(k string) string { return "key=" + k },
	BaseURL:    func(u string) string { return "base=" + u },
	MaxRetries: func(n int) string { return "retries=" + strconv.Itoa(n) },
	HTTPClient: func(*http.Client) string { return "http" },
}

func TestBuildResolvesFromOptionsThenEnvironment(t *testing.T) {
	env := map[string]string{"K": "env-key", "U": "http://env"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name    string
		s       Settings
		want    []string
		wantKey string
	}{
		{"environment", Settings{Getenv: getenv}, []string{"key=env-key", "base=http://env"}, "env-key"},
		{"options win", Settings{APIKey: "k", BaseURL: "http://opt", Getenv: getenv}, []string{"key=k", "base=http://opt"}, "k"},
		{"nothing set", Settings{Getenv: func(string) string { return "" }}, []string{"key="}, ""},
		{"retries", Settings{APIKey: "k", MaxRetries: 5, Getenv: getenv}, []string{"key=k", "base=http://env", "retries=5"}, "k"},
		{"negative retries never retry", Settings{APIKey: "k", MaxRetries: -1, Getenv: getenv}, []string{"key=k", "base=http://env", "retries=0"}, "k"},
		{"http client", Settings{APIKey: "k", HTTPClient: &http.Client{}, Getenv: getenv}, []string{"key=k", "base=http://env", "http"}, "k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.s.KeyEnv, tt.s.BaseURLEnv = "K", "U"
			got, key := Build(tt.s, record)
			if !slices.Equal(got, tt.want) || key != tt.wantKey {
				t.Errorf("Build = %q, key %q; want %q, key %q", got, key, tt.want, tt.wantKey)
			}
		})
	}
}

func TestBuildReadsTheProcessEnvironmentWithoutGetenv(t *testing.T) {
	t.Setenv("HELIKON_SDKOPTION_TEST_KEY", "from-os")
	if _, key := Build(Settings{KeyEnv: "HELIKON_SDKOPTION_TEST_KEY", BaseURLEnv: "HELIKON_SDKOPTION_TEST_UNSET"}, record); key != "from-os" {
		t.Errorf("key %q, want from-os", key)
	}
}
