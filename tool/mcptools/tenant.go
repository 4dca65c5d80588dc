package mcptools

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/workspace"
)

// A Tenant is one client of a shared HTTP server (a team, a service): the
// bearer token its clients send, and the name its sessions, calls, logs and
// workspaces are labelled with. A tenant never reaches another's session: a
// request that names a session opened with another tenant's token is
// answered as if the session did not exist.
type Tenant struct {
	// Name labels the tenant's sessions, log records and workspaces
	// ([workspace.LabelTenant]): 1 to 48 letters, digits, "-" and "_",
	// as a session id ([workspace.ValidSession]).
	Name string
	// Token is the bearer token that authenticates the tenant's clients.
	// Tokens are secrets: they are never logged, and are compared in
	// constant time.
	Token string
}

// MinTokenBytes is the shortest bearer token [HTTPOptions] accepts for a
// [Tenant]: 16 bytes is 128 bits when the token is random, as
// `head -c 32 /dev/urandom | base64` gives.
const MinTokenBytes = 16

// ErrInvalidTenants is returned by [ServeHTTP] for tenants that cannot be
// told apart or authenticated: an invalid or repeated name, a short or
// repeated token.
var ErrInvalidTenants = errors.New("invalid tenants")

// validateTenants checks ts (and the single token, which is the unnamed
// tenant when set).
func validateTenants(token string, ts []Tenant) error {
	names, tokens := map[string]int{}, map[[32]byte]bool{}
	if token != "" {
		tokens[sha256.Sum256([]byte(token))] = true
	}
	for i, t := range ts {
		if err := workspace.ValidSession(t.Name); err != nil {
			// Neither names nor tokens are shown: a file with its columns
			// swapped would have its tokens in the names' place.
			return fmt.Errorf("%w: tenant %d: the name is not 1 to 48 letters, digits, '-' and '_'", ErrInvalidTenants, i+1)
		}
		if j, dup := names[t.Name]; dup {
			return fmt.Errorf("%w: tenants %d and %d have the same name", ErrInvalidTenants, j+1, i+1)
		}
		names[t.Name] = i
		if len(t.Token) < MinTokenBytes {
			return fmt.Errorf("%w: tenant %d: the token is shorter than %d bytes; use a random one (head -c 32 /dev/urandom | base64)", ErrInvalidTenants, i+1, MinTokenBytes)
		}
		sum := sha256.Sum256([]byte(t.Token))
		if tokens[sum] {
			return fmt.Errorf("%w: tenant %d: its token is another tenant's too; each tenant needs its own", ErrInvalidTenants, i+1)
		}
		tokens[sum] = true
	}
	return nil
}

// authenticate returns the tenant whose token the request carries: "" for
// the single token of [HTTPOptions].Token, the tenant's name for one of
// [HTTPOptions].Tenants. Every token is compared, in constant time, so that
// the time taken says nothing about which one came close.
func (g *httpGuard) authenticate(r *http.Request) (tenant string, ok bool) {
	got, present := bearerToken(r.Header.Get("Authorization"))
	if !present {
		return "", false
	}
	match := 0
	if g.token != "" {
		match = subtle.ConstantTimeCompare([]byte(got), []byte(g.token))
	}
	for _, t := range g.tenants {
		if subtle.ConstantTimeCompare([]byte(got), []byte(t.Token)) == 1 {
			tenant, match = t.Name, 1
		}
	}
	return tenant, match == 1
}

// withTenant gives r's context the tenant: as the go-sdk's token info,
// whose UserID binds each session to the tenant that opened it (the SDK
// answers 403 to another), and as [workspace.WithTenant] for the labels.
func withTenant(r *http.Request, tenant string) *http.Request {
	ctx := workspace.WithTenant(r.Context(), tenant)
	r = r.WithContext(ctx)
	if tenant == "" {
		return r
	}
	// The go-sdk sets its token info only through its middleware: run it
	// on the request, whose token is already checked, to get the request
	// it passes on. The token info then also reaches the calls that
	// [sessionTable.cancel] addresses to the session for this request.
	out := r
	auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: tenantUserPrefix + tenant}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		out = r
	})).ServeHTTP(discardResponse{h: http.Header{}}, r)
	return out
}

// tenantUserPrefix starts the go-sdk token info's UserID of a tenant's
// requests.
const tenantUserPrefix = "tenant:"

// callTenant is the tenant of a call: from the token info the go-sdk hands
// the call, which came from the request that carried it.
func callTenant(req *mcp.CallToolRequest) string {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return ""
	}
	if name, ok := strings.CutPrefix(req.Extra.TokenInfo.UserID, tenantUserPrefix); ok {
		return name
	}
	return ""
}

// MaxTenantsFile bounds the tenants file [ParseTenants] reads.
const MaxTenantsFile = 1 << 20

// ParseTenants reads tenants from a file's contents, one per line: the name,
// then spaces or a tab, then the token. Empty lines and lines starting with
// "#" are skipped. Errors name the line or the tenant's place in the file
// (1 for the first tenant), never a name or a token; the tenants are
// validated as [ServeHTTP] does.
//
//	# team    token
//	payments  6c0f0e3f3b1d4b1f9a0c2b7e5d4a3c21
//	search    0b9d2a7c4e6f8a1b3c5d7e9f1a2b4c6d
func ParseTenants(data []byte) ([]Tenant, error) {
	if len(data) > MaxTenantsFile {
		return nil, fmt.Errorf("%w: the tenants file is larger than %d bytes", ErrInvalidTenants, MaxTenantsFile)
	}
	var out []Tenant
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%w: line %d: want a name and a token separated by spaces (%d fields)", ErrInvalidTenants, i+1, len(f))
		}
		out = append(out, Tenant{Name: f[0], Token: f[1]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the tenants file names no tenant (lines of NAME TOKEN)", ErrInvalidTenants)
	}
	if err := validateTenants("", out); err != nil {
		return nil, err
	}
	return out, nil
}
