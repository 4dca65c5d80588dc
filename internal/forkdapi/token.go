package forkdapi

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

const redacted = "[REDACTED]"

// Token is the bearer token of a forkd controller. Every way of printing it
// (%v, %s, %q, %#v, %x, String, slog, JSON) shows [REDACTED]; only the client
// reads the value, to put it in the Authorization header.
type Token string

// String returns [REDACTED].
func (Token) String() string { return redacted }

// GoString returns [REDACTED].
func (Token) GoString() string { return redacted }

// Format writes [REDACTED] whatever the verb.
func (Token) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// LogValue keeps the token out of structured logs.
func (Token) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText encodes the token as [REDACTED], so a configuration dumped as
// JSON does not carry it.
func (Token) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// secret holds the token inside the client. It is a pointer so that printing
// a Client or Backend with %v, which walks unexported fields without calling
// their methods, shows an address and not the token.
type secret struct{ v string }

// redact removes the token from text that came from the controller (an
// error body could echo the request's headers).
func (s *secret) redact(text string) string {
	if s == nil || s.v == "" {
		return text
	}
	return strings.ReplaceAll(text, s.v, redacted)
}
