package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionIDHeader and protocolVersionHeader are the streamable HTTP
// transport's headers (MCP specification, "Streamable HTTP").
const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
)

// sessionTable keeps the live sessions a handler has created, so that it can
// cap their number, cancel the calls of a session that ends, and cancel the
// calls of a POST whose client went away.
//
// The go-sdk handler keeps sessions of its own and ends idle ones (its
// SessionTimeout); the table learns of each new session from the
// Mcp-Session-Id header of the initialize response and of its end from
// [mcp.ServerSession.Wait].
type sessionTable struct {
	srv   *mcp.Server
	next  http.Handler
	limit int           // 0: no cap
	idle  time.Duration // the session timeout (0: never), for the refusal
	m     *Metrics      // nil: none

	mu      sync.Mutex
	pending int // initialize requests under way, each holding a slot
	live    map[string]*liveSession
	closed  bool
}

type liveSession struct {
	ss     *mcp.ServerSession
	tenant string // the tenant that opened it ("" for the single token)
	posts  map[*postCalls]struct{}
}

// postCalls are the JSON-RPC calls of one POST whose answers are still owed
// on that POST's response, with what it takes to address their session
// after the POST's handler has returned.
type postCalls struct {
	sid       string
	ids       []json.RawMessage
	ctx       context.Context // the POST's values, without its cancellation
	url, host string
	remote    string
	protocol  string // its Mcp-Protocol-Version
}

func newSessionTable(srv *mcp.Server, next http.Handler, limit int, idle time.Duration, m *Metrics) *sessionTable {
	return &sessionTable{srv: srv, next: next, limit: limit, idle: idle, m: m, live: map[string]*liveSession{}}
}

// errShuttingDown is the message of the refusal of a new session while the
// server shuts down.
const errShuttingDown = "the MCP server is shutting down; connect again when it is back"

// reserve takes a slot for a session about to be created. It returns "" or
// why there is none: the cap is reached or the table is closed.
func (t *sessionTable) reserve() (refusal string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if why := t.refusalLocked(); why != "" {
		return why
	}
	t.pending++
	return ""
}

// refusalLocked returns why a new session would be refused, or "". t.mu
// is held.
func (t *sessionTable) refusalLocked() string {
	switch {
	case t.closed:
		return errShuttingDown
	case t.limit > 0 && t.pending+len(t.live) >= t.limit:
		return errTooManySessions(t.limit, t.idle)
	}
	return ""
}

// settle ends a reservation: the slot goes to session sid, opened by
// tenant, when the SDK created one (sid is the Mcp-Session-Id of the
// response), and is given back otherwise. The session keeps its slot until
// it ends.
func (t *sessionTable) settle(sid, tenant string) {
	var ss *mcp.ServerSession
	if sid != "" {
		for s := range t.srv.Sessions() {
			if s.ID() == sid {
				ss = s
				break
			}
		}
	}
	t.mu.Lock()
	t.pending--
	if ss == nil {
		t.mu.Unlock()
		return
	}
	closed := t.closed
	if !closed {
		t.live[sid] = &liveSession{ss: ss, tenant: tenant, posts: map[*postCalls]struct{}{}}
		t.m.sessionOpened()
	}
	t.mu.Unlock()
	if closed {
		ss.Close()
		return
	}
	go func() {
		ss.Wait()
		t.mu.Lock()
		delete(t.live, sid)
		t.m.sessionClosed()
		t.mu.Unlock()
	}()
}

// ownedBy reports whether session sid may be addressed by tenant: it is
// tenant's, or is not in the table (the SDK answers 404 for it).
func (t *sessionTable) ownedBy(sid, tenant string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	ls := t.live[sid]
	return ls == nil || ls.tenant == tenant
}

// notReady returns "" when a new session would be accepted, or why not:
// the table is at its cap or closed. It is the answer of /readyz.
func (t *sessionTable) notReady() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refusalLocked()
}

// begin records the calls of a POST to session sid; it returns nil when
// there is nothing to record.
func (t *sessionTable) begin(sid string, r *http.Request, ids []json.RawMessage) *postCalls {
	if len(ids) == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ls := t.live[sid]
	if ls == nil {
		return nil
	}
	p := &postCalls{
		sid: sid, ids: ids,
		// The listener's address is among the values: the SDK's own
		// rebinding check reads it.
		ctx: context.WithoutCancel(r.Context()),
		url: r.URL.String(), host: r.Host, remote: r.RemoteAddr,
		protocol: r.Header.Get(protocolVersionHeader),
	}
	ls.posts[p] = struct{}{}
	return p
}

// end forgets the calls of p, whose POST is over.
func (t *sessionTable) end(p *postCalls) {
	if p == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ls := t.live[p.sid]; ls != nil {
		delete(ls.posts, p)
	}
}

// takePosts forgets and returns the calls under way in session sid.
func (t *sessionTable) takePosts(sid string) []*postCalls {
	t.mu.Lock()
	defer t.mu.Unlock()
	ls := t.live[sid]
	if ls == nil {
		return nil
	}
	posts := make([]*postCalls, 0, len(ls.posts))
	for p := range ls.posts {
		posts = append(posts, p)
	}
	clear(ls.posts)
	return posts
}

// cancel cancels the calls of p with notifications/cancelled sent to their
// session, the protocol's own way to stop a call: the handler's context ends
// and the tool kills what it started. A call that has finished meanwhile
// ignores it.
func (t *sessionTable) cancel(p *postCalls, reason string) {
	for _, id := range p.ids {
		body, _ := json.Marshal(map[string]any{
			"jsonrpc": "2.0",
			"method":  "notifications/cancelled",
			"params":  map[string]any{"requestId": id, "reason": reason},
		})
		// The notification travels as a POST of the same client.
		r, err := http.NewRequestWithContext(p.ctx, http.MethodPost, p.url, bytes.NewReader(body))
		if err != nil {
			continue // the URL was parsed once already
		}
		r.Host = p.host
		r.RemoteAddr = p.remote
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set(sessionIDHeader, p.sid)
		if p.protocol != "" {
			r.Header.Set(protocolVersionHeader, p.protocol)
		}
		t.next.ServeHTTP(discardResponse{http.Header{}}, r)
	}
}

// closeAll cancels every call under way, ends every session and refuses new
// ones; it returns when the sessions have ended.
func (t *sessionTable) closeAll() {
	t.mu.Lock()
	t.closed = true
	sessions := make([]*mcp.ServerSession, 0, len(t.live))
	var posts []*postCalls
	for _, ls := range t.live {
		sessions = append(sessions, ls.ss)
		for p := range ls.posts {
			posts = append(posts, p)
		}
		clear(ls.posts)
	}
	t.mu.Unlock()
	for _, p := range posts {
		t.cancel(p, "the server is shutting down")
	}
	var wg sync.WaitGroup
	for _, ss := range sessions {
		wg.Go(func() { ss.Close() })
	}
	wg.Wait()
}

// discardResponse is the response writer of a request the handler sends
// itself, whose answer nobody reads.
type discardResponse struct{ h http.Header }

func (d discardResponse) Header() http.Header       { return d.h }
func (discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (discardResponse) WriteHeader(int)             {}

// errTooManySessions is the message of the refusal when the session cap is
// reached.
func errTooManySessions(limit int, idle time.Duration) string {
	wait := fmt.Sprintf("wait for idle ones to end (after %s)", idle)
	if idle <= 0 {
		wait = "restart the server (idle sessions never end)"
	}
	return fmt.Sprintf("too many MCP sessions: this server keeps at most %d; close sessions you no longer use (HTTP DELETE with their Mcp-Session-Id), %s, or raise the cap (HTTPOptions.MaxSessions, helikon mcp --http-max-sessions)", limit, wait)
}
