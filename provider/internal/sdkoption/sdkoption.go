// Package sdkoption resolves the connection settings the providers share (API
// key, base URL, retries, HTTP client) from a provider's options and the
// environment into its SDK's request options.
//
// The OpenAI and Anthropic SDKs are generated from one template: their
// option constructors have the same names and meaning but distinct types, so
// [Build] takes them as [Constructors].
package sdkoption

import (
	"net/http"
	"os"
)

// Settings are a provider's connection options as its user gave them, and
// the environment variables that stand in for the unset ones.
type Settings struct {
	// APIKey is the key; "" reads KeyEnv.
	APIKey string
	// KeyEnv names the variable that holds the key, such as OPENAI_API_KEY.
	KeyEnv string
	// BaseURL is the API's base URL; "" reads BaseURLEnv, and without it
	// the SDK's default is used.
	BaseURL string
	// BaseURLEnv names the variable that holds the base URL.
	BaseURLEnv string
	// MaxRetries is how many times a failed request is retried (0: the
	// SDK's default; negative: never).
	MaxRetries int
	// HTTPClient replaces the SDK's HTTP client (nil: the SDK's).
	HTTPClient *http.Client
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
}

// Constructors are one SDK's request-option constructors.
type Constructors[O any] struct {
	APIKey     func(string) O
	BaseURL    func(string) O
	MaxRetries func(int) O
	HTTPClient func(*http.Client) O
}

// Build returns the request options for s, and the API key they carry: ""
// when neither s nor the environment gives one. The key option is set even
// then, so that the SDK does not fall back to reading the variable itself;
// whether a missing key is an error is the provider's call.
func Build[O any](s Settings, c Constructors[O]) (opts []O, key string) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	key = s.APIKey
	if key == "" {
		key = getenv(s.KeyEnv)
	}
	opts = []O{c.APIKey(key)}
	base := s.BaseURL
	if base == "" {
		base = getenv(s.BaseURLEnv)
	}
	if base != "" {
		opts = append(opts, c.BaseURL(base))
	}
	switch {
	case s.MaxRetries > 0:
		opts = append(opts, c.MaxRetries(s.MaxRetries))
	case s.MaxRetries < 0:
		opts = append(opts, c.MaxRetries(0))
	}
	if s.HTTPClient != nil {
		opts = append(opts, c.HTTPClient(s.HTTPClient))
	}
	return opts, key
}
