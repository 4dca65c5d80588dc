package mcptools_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
	"github.com/paigasus/helikon/tool/mcptools"
	"github.com/paigasus/helikon/workspace"
)

const (
	alphaToken = "alpha-token-0123456789abcdef"
	betaToken  = "beta-token-0123456789abcdef"
)

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectAs(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "tenant-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// rawAs sends one request to url as the holder of token, naming session sid.
func rawAs(t *testing.T, method, url, token, sid string) int {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Mcp-Session-Id", sid)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestTenantsOwnTheirSessions: each tenant's token opens sessions that are
// its own. A call knows its tenant (and so does the workspace made for it);
// another tenant that learns a session's id can neither use it nor end it,
// nor cancel its calls, and is told only that there is no such session.
func TestTenantsOwnTheirSessions(t *testing.T) {
	k := newKit(t)
	whoami := functiontool.Must(functiontool.New("whoami", "Names the caller's tenant.", func(tc *helikon.ToolContext[app], _ empty) (echoOut, error) {
		name, _ := workspace.TenantFrom(tc)
		return echoOut{Echo: name}, nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
	srv, err := mcptools.NewServer(helikon.MustToolset(append(k.tools, whoami)...), nil)
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, srv, &mcptools.HTTPOptions{Tenants: []mcptools.Tenant{{Name: "alpha", Token: alphaToken}, {Name: "beta", Token: betaToken}}})

	alpha, beta := connectAs(t, url, alphaToken), connectAs(t, url, betaToken)
	for _, c := range []struct {
		cs   *mcp.ClientSession
		want string
	}{{alpha, "alpha"}, {beta, "beta"}} {
		if got := text(callTool(t, c.cs, "whoami", map[string]any{})); !strings.Contains(got, `"`+c.want+`"`) {
			t.Errorf("whoami as %s = %s", c.want, got)
		}
	}

	// alpha's call runs; beta, holding alpha's session id, tries to end the
	// session (which would cancel the call) and to use it.
	done := make(chan error, 1)
	callCtx, cancelCall := context.WithCancel(t.Context())
	defer cancelCall()
	go func() {
		_, err := alpha.CallTool(callCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		done <- err
	}()
	<-k.started
	for _, method := range []string{http.MethodDelete, http.MethodPost} {
		if got := rawAs(t, method, url, betaToken, alpha.ID()); got != http.StatusNotFound {
			t.Errorf("%s of alpha's session with beta's token: %d, want 404 (as for no such session)", method, got)
		}
	}
	if got := text(callTool(t, alpha, "echo", map[string]any{"text": "still mine"})); !strings.Contains(got, "still mine") {
		t.Fatalf("alpha's session after beta's attempts: %s", got)
	}
	select {
	case err := <-k.cancelled:
		t.Fatalf("beta's DELETE cancelled alpha's call: %v", err)
	default:
	}
	if got := rawAs(t, http.MethodPost, url, "not-a-token-of-anyone-at-all", alpha.ID()); got != http.StatusUnauthorized {
		t.Errorf("an unknown token: %d, want 401", got)
	}
	cancelCall() // alpha itself may cancel its call
	if err := <-done; err == nil {
		t.Error("the slow call ended without error when cancelled")
	}
	<-k.cancelled
}

func TestInvalidTenantsAreRefused(t *testing.T) {
	srv, err := mcptools.NewServer(helikon.MustToolset(newKit(t).tools...), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		token   string
		tenants []mcptools.Tenant
	}{
		{"ShortToken", "", []mcptools.Tenant{{Name: "a", Token: "s3cr"}}},
		{"BadName", "", []mcptools.Tenant{{Name: "a b", Token: alphaToken}}},
		{"EmptyName", "", []mcptools.Tenant{{Token: alphaToken}}},
		{"SameName", "", []mcptools.Tenant{{Name: "a", Token: alphaToken}, {Name: "a", Token: betaToken}}},
		{"SameToken", "", []mcptools.Tenant{{Name: "a", Token: alphaToken}, {Name: "b", Token: alphaToken}}},
		{"TenantHasTheSingleToken", alphaToken, []mcptools.Tenant{{Name: "a", Token: alphaToken}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mcptools.ServeHTTP(t.Context(), srv, &mcptools.HTTPOptions{Addr: "127.0.0.1:0", Token: tc.token, Tenants: tc.tenants}, nil)
			if !errors.Is(err, mcptools.ErrInvalidTenants) {
				t.Fatalf("ServeHTTP = %v, want ErrInvalidTenants", err)
			}
			if strings.Contains(err.Error(), alphaToken) || strings.Contains(err.Error(), "s3cr") {
				t.Errorf("the error shows a token: %v", err)
			}
			h := mcptools.HTTPHandler(srv, "127.0.0.1:0", &mcptools.HTTPOptions{Token: tc.token, Tenants: tc.tenants})
			if w := post(h, "127.0.0.1", "", "Bearer "+alphaToken); w.Code != http.StatusInternalServerError {
				t.Errorf("a handler with invalid tenants answered %d, want 500 to every request", w.Code)
			}
		})
	}
}

func TestParseTenants(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []mcptools.Tenant
	}{
		{"Two", "# team token\n\npayments " + alphaToken + "\r\nsearch\t" + betaToken + "\n", []mcptools.Tenant{{Name: "payments", Token: alphaToken}, {Name: "search", Token: betaToken}}},
		{"Empty", "# nothing\n", nil},
		{"ThreeFields", "a " + alphaToken + " extra\n", nil},
		{"NameOnly", "a\n", nil},
		{"Duplicate", "a " + alphaToken + "\na " + betaToken + "\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcptools.ParseTenants([]byte(tc.in))
			if tc.want == nil {
				if !errors.Is(err, mcptools.ErrInvalidTenants) {
					t.Fatalf("ParseTenants = %v, %v; want ErrInvalidTenants", got, err)
				}
				if strings.Contains(err.Error(), alphaToken) || strings.Contains(err.Error(), betaToken) {
					t.Errorf("the error shows a token: %v", err)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("ParseTenants = %v, %v", got, err)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("tenant %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// FuzzParseTenants: whatever the file, ParseTenants either fails with
// ErrInvalidTenants without showing a token, or returns tenants that
// ServeHTTP's checks accept.
func FuzzParseTenants(f *testing.F) {
	f.Add([]byte("a " + alphaToken + "\nb " + betaToken + "\n"))
	f.Add([]byte("# x\n\na b c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := mcptools.ParseTenants(data)
		if err != nil {
			if !errors.Is(err, mcptools.ErrInvalidTenants) {
				t.Fatalf("error not ErrInvalidTenants: %v", err)
			}
			for _, f := range strings.Fields(string(data)) {
				if len(f) >= mcptools.MinTokenBytes && strings.Contains(err.Error(), f) {
					t.Fatalf("the error shows a field of the file: %v", err)
				}
			}
			return
		}
		names := map[string]bool{}
		for _, tn := range ts {
			if len(tn.Token) < mcptools.MinTokenBytes || names[tn.Name] || workspace.ValidSession(tn.Name) != nil {
				t.Fatalf("accepted an invalid tenant %+v", tn)
			}
			names[tn.Name] = true
		}
	})
}
