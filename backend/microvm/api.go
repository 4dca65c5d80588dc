package microvm

import "github.com/paigasus/helikon/internal/forkdapi"

// The controller's client lives in internal/forkdapi, shared with package
// workspace/forkd. These names re-export what a user of this package needs
// to configure it ([Token]), to branch on its errors, and to call the
// client [Backend.Client] returns: they are the same types and values, so
// errors.Is and errors.As match either spelling.
type (
	// Token is the controller's bearer token: every way of printing it
	// shows [REDACTED].
	Token = forkdapi.Token
	// Client speaks the controller's REST API; it is safe for concurrent
	// use.
	Client = forkdapi.Client
	// ClientOptions configure a [Client] made by [NewClient].
	ClientOptions = forkdapi.ClientOptions
	// APIError is a non-success answer of the controller.
	APIError = forkdapi.APIError
	// SandboxInfo is one microVM as the controller lists it.
	SandboxInfo = forkdapi.SandboxInfo
	// ExecResult is the controller's answer to an exec.
	ExecResult = forkdapi.ExecResult
	// CreateRequest is the body of a sandbox create ([Client.Create]).
	CreateRequest = forkdapi.CreateRequest
	// WorkspaceInfo is a controller workspace: a named microVM.
	WorkspaceInfo = forkdapi.WorkspaceInfo
	// WorkspaceRequest is the body of a workspace create
	// ([Client.CreateWorkspace]).
	WorkspaceRequest = forkdapi.WorkspaceRequest
)

// DefaultAPITimeout bounds one create, delete or list call (see
// Options.APITimeout).
const DefaultAPITimeout = forkdapi.DefaultAPITimeout

var (
	// ErrUnreachable matches a call that got no answer from the controller
	// (refused, reset, TLS failure): start the controller or check
	// FORKD_URL. It wraps backend.ErrUnavailable.
	ErrUnreachable = forkdapi.ErrUnreachable
	// ErrNotFound matches an [APIError] whose status is 404: no such
	// sandbox, workspace or snapshot.
	ErrNotFound = forkdapi.ErrNotFound
	// ErrMalformedResponse matches an answer the client cannot decode.
	ErrMalformedResponse = forkdapi.ErrMalformedResponse
	// ErrInsecureURL matches a controller URL that would send the token in
	// clear text to another machine.
	ErrInsecureURL = forkdapi.ErrInsecureURL
)

// NewClient returns a client for the controller at rawURL (https://, or
// http:// for a loopback host only; no userinfo, query or fragment). New
// makes one for its Backend; this is for a caller that only lists or
// reaps.
func NewClient(rawURL string, opts ClientOptions) (*Client, error) {
	return forkdapi.NewClient(rawURL, opts)
}
