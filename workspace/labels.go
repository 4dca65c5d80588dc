package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strconv"
	"time"
)

// The label keys every remote workspace carries, in the reverse-DNS form
// Docker and Kubernetes use for labels of third-party tools.
const (
	// LabelManaged marks a resource created by helikon; its value is "true".
	LabelManaged = "io.helikon.managed"
	// LabelSession is the session id.
	LabelSession = "io.helikon.session"
	// LabelHost is the host name of the machine whose process created it.
	LabelHost = "io.helikon.host"
	// LabelUser is the user name (or uid) that created it.
	LabelUser = "io.helikon.user"
	// LabelCreated is the creation time, Unix seconds in decimal.
	LabelCreated = "io.helikon.created"
	// LabelTenant is the tenant of a shared server whose session the
	// workspace serves ([WithTenant]); absent outside one.
	LabelTenant = "io.helikon.tenant"
)

type tenantKey struct{}

// WithTenant returns ctx naming the tenant whose call it carries: a shared
// MCP server puts the tenant of each request's bearer token there, and the
// workspace created for the call is labelled with it ([LabelsFor]). "" names
// none.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant [WithTenant] put in ctx.
func TenantFrom(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(tenantKey{}).(string)
	return t, ok && t != ""
}

// LabelsFor returns [Labels] of session, with [LabelTenant] when ctx names a
// tenant: the labels an engine gives a workspace it creates for ctx's call.
func LabelsFor(ctx context.Context, session string, now time.Time) map[string]string {
	l := Labels(session, now)
	if t, ok := TenantFrom(ctx); ok {
		l[LabelTenant] = t
	}
	return l
}

// sessionRE is what a session id may be: short, and safe as a label value,
// a container name suffix and a forkd workspace name (Kubernetes label
// values allow 63 characters of [A-Za-z0-9._-], starting and ending
// alphanumeric; forkd names 1-64 of [A-Za-z0-9_-]).
var sessionRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,46}[A-Za-z0-9])?$`)

// ValidSession reports whether id can name a session's workspace on every
// engine: 1 to 48 characters of letters, digits, "-" and "_", starting and
// ending with a letter or digit.
func ValidSession(id string) error {
	if !sessionRE.MatchString(id) {
		return fmt.Errorf("invalid session id %q: use 1 to 48 letters, digits, '-' and '_', starting and ending with a letter or digit", id)
	}
	return nil
}

// Labels returns the labels of a new workspace of session: helikon's mark,
// the session, this machine's host name, the calling user and the time now.
func Labels(session string, now time.Time) map[string]string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	who := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil && u.Username != "" {
		who = u.Username
	}
	return map[string]string{
		LabelManaged: "true",
		LabelSession: session,
		LabelHost:    host,
		LabelUser:    who,
		LabelCreated: strconv.FormatInt(now.Unix(), 10),
	}
}

// CreatedAt parses [LabelCreated] from labels; zero when it is missing or
// malformed.
func CreatedAt(labels map[string]string) time.Time {
	s, err := strconv.ParseInt(labels[LabelCreated], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(s, 0)
}

// SessionFor returns id when it is a valid session id ([ValidSession]), and
// otherwise a stable one derived from it ("h-" and 32 hex digits of its
// SHA-256), so that the ids of other schemes (a runner's sessions, which
// allow 128 characters and dots) name a workspace each.
func SessionFor(id string) string {
	if ValidSession(id) == nil {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "h-" + hex.EncodeToString(sum[:16])
}
