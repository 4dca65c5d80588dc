package agentsandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	sandboxclient "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned"
	extclient "sigs.k8s.io/agent-sandbox/clients/k8s/extensions/clientset/versioned"
	extv1alpha1 "sigs.k8s.io/agent-sandbox/extensions/api/v1alpha1"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
)

// EngineName is the engine's name, as --backend and [workspace.Info.Engine]
// spell it.
const EngineName = "k8s"

// Defaults of [Options].
const (
	// DefaultReadyTimeout is how long Create waits for the controller to
	// bind the claim and for its pod to be ready: the official clients of
	// agent-sandbox wait 180 s (SandboxReadyTimeout), enough for a cold
	// start that pulls an image.
	DefaultReadyTimeout = 180 * time.Second
	// DefaultAPITimeout bounds one call to the API server, so that an
	// unreachable server fails a call instead of hanging it.
	DefaultAPITimeout = 30 * time.Second
	// DefaultPollInterval is how often Create looks at the claim while it
	// waits.
	DefaultPollInterval = 500 * time.Millisecond
	// cleanupTimeout bounds the deletion of a claim on a failure path or at
	// Close, which runs even when the caller's context is cancelled.
	cleanupTimeout = 30 * time.Second
)

// Errors of this engine, wrapped, for callers to match with [errors.Is].
// A workspace that disappears answers [workspace.ErrGone].
var (
	// ErrUnreachable: the API server did not answer (wrong kubeconfig,
	// network down, server down). Nothing was created, or what was is
	// deleted or labelled for helikon workspaces reap.
	ErrUnreachable = errors.New("kubernetes api server unreachable")
	// ErrNotReady: the controller did not bind the claim, or its pod did
	// not become ready, within Options.ReadyTimeout. The claim is deleted.
	ErrNotReady = errors.New("sandbox not ready in time")
	// ErrWarmPoolEmpty: Options.WarmPool names a pool with no ready
	// sandbox. No claim is created.
	ErrWarmPoolEmpty = errors.New("warm pool has no ready sandbox")
	// ErrTemplate: the template (or the warm pool naming it) does not
	// exist or cannot be used.
	ErrTemplate = errors.New("sandbox template unusable")
)

// Options configure an [Engine]. Exactly one of Template and WarmPool is
// required; every other zero field means the default.
type Options struct {
	// Kubeconfig is the kubeconfig file; "" means the usual rules:
	// $KUBECONFIG, else ~/.kube/config, else the in-cluster service
	// account (as kubectl).
	Kubeconfig string
	// Context is the kubeconfig context; "" means its current context.
	Context string
	// Namespace holds the claims; "" means the context's namespace, else
	// the service account's in a cluster, else "default".
	Namespace string
	// Template is the SandboxTemplate every workspace is claimed from.
	Template string
	// WarmPool is a SandboxWarmPool: workspaces are claimed from its
	// template, and Create fails with [ErrWarmPoolEmpty] when it has no
	// ready sandbox rather than wait for a cold start.
	WarmPool string
	// Labels are added to every claim (helikon's own labels win).
	Labels map[string]string
	// Container is the pod's container commands run in; "" means the
	// first one.
	Container string
	// Dir is the workspace root inside the container; "" means the
	// container's workingDir, else the directory its exec starts in.
	Dir string
	// ReadyTimeout bounds the wait for a bound claim and a ready pod.
	ReadyTimeout time.Duration
	// APITimeout bounds each call to the API server.
	APITimeout time.Duration
	// PollInterval is how often a waiting Create looks at the claim.
	PollInterval time.Duration
	// Timeout is the longest a command may run (a request may shorten
	// it); zero means backend.DefaultTimeout.
	Timeout time.Duration
	// OutputCap is the cap per captured stream; zero means
	// backend.DefaultOutputCap.
	OutputCap int64
	// Logger receives warnings (a claim that could not be deleted); nil
	// means slog.Default().
	Logger *slog.Logger
}

// Clients are the clients an [Engine] talks through. [New] builds them from
// a kubeconfig; tests pass the client libraries' fake clientsets.
type Clients struct {
	// Config reaches the API server for the pods' exec subresource, which
	// has no typed client: client-go's remotecommand streams it.
	Config *rest.Config
	// Kube is the core client (pods, runtime classes, network policies).
	Kube kubernetes.Interface
	// Sandboxes is agent-sandbox's client of agents.x-k8s.io.
	Sandboxes sandboxclient.Interface
	// Extensions is agent-sandbox's client of extensions.agents.x-k8s.io
	// (SandboxClaim, SandboxTemplate, SandboxWarmPool).
	Extensions extclient.Interface
}

// Engine creates, finds and removes workspaces that are SandboxClaims of
// agent-sandbox in one namespace. It is safe for concurrent use.
type Engine struct {
	c    Clients
	core rest.Interface // builds the exec subresource's URL
	ns   string
	opts Options
	log  *slog.Logger
}

var _ workspace.Engine = (*Engine)(nil)

// New builds an engine from the kubeconfig (or in-cluster config) that opts
// name. It does not contact the API server; [Engine.Probe] does.
func New(opts *Options) (*Engine, error) {
	if opts == nil {
		opts = &Options{}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if opts.Kubeconfig != "" {
		rules.ExplicitPath = opts.Kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: opts.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: k8s: no usable kubeconfig or in-cluster config: %v", backend.ErrUnavailable, err)
	}
	ns := opts.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	o := *opts
	o.Namespace = ns
	return NewForClients(ClientsForConfig(cfg, o.APITimeout), &o)
}

// ClientsForConfig builds the clients of cfg. Each call to the API server is
// bounded by apiTimeout (zero: DefaultAPITimeout); the exec stream is not.
func ClientsForConfig(cfg *rest.Config, apiTimeout time.Duration) Clients {
	if apiTimeout <= 0 {
		apiTimeout = DefaultAPITimeout
	}
	api := rest.CopyConfig(cfg)
	api.Timeout = apiTimeout
	// The constructors fail only on an invalid rate limiter or TLS
	// configuration, which ClientConfig already refused.
	kube := kubernetes.NewForConfigOrDie(api)
	return Clients{
		Config:     cfg,
		Kube:       kube,
		Sandboxes:  sandboxclient.NewForConfigOrDie(api),
		Extensions: extclient.NewForConfigOrDie(api),
	}
}

// NewForClients builds an engine on the given clients; opts.Namespace is
// required (New fills it from the kubeconfig).
func NewForClients(c Clients, opts *Options) (*Engine, error) {
	if opts == nil {
		opts = &Options{}
	}
	o := *opts
	switch {
	case c.Config == nil || c.Kube == nil || c.Sandboxes == nil || c.Extensions == nil:
		return nil, errors.New("k8s: every client is required")
	case o.Namespace == "":
		return nil, errors.New("k8s: a namespace is required")
	case (o.Template == "") == (o.WarmPool == ""):
		return nil, errors.New("k8s: name exactly one of a sandbox template and a warm pool")
	}
	for k, v := range o.Labels {
		if err := validLabel(k, v); err != nil {
			return nil, fmt.Errorf("k8s: label %s=%s: %w", k, v, err)
		}
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.OutputCap <= 0 {
		o.OutputCap = backend.DefaultOutputCap
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	core, err := corev1client.NewForConfig(rest.CopyConfig(c.Config))
	if err != nil {
		return nil, fmt.Errorf("k8s: %w", err)
	}
	return &Engine{c: c, core: core.RESTClient(), ns: o.Namespace, opts: o, log: log}, nil
}

// Name returns [EngineName].
func (e *Engine) Name() string { return EngineName }

// Namespace is the namespace the engine's claims live in.
func (e *Engine) Namespace() string { return e.ns }

// template resolves the template a new claim names: Options.Template, or
// the warm pool's, which must have a ready sandbox.
func (e *Engine) template(ctx context.Context) (*extv1alpha1.SandboxTemplate, error) {
	ext := e.c.Extensions.ExtensionsV1alpha1()
	name := e.opts.Template
	if e.opts.WarmPool != "" {
		pool, err := ext.SandboxWarmPools(e.ns).Get(ctx, e.opts.WarmPool, metav1.GetOptions{})
		if err != nil {
			return nil, e.apiError(err, "sandbox warm pool %s/%s", e.ns, e.opts.WarmPool)
		}
		if pool.Status.ReadyReplicas < 1 {
			return nil, fmt.Errorf("k8s: %w: %s/%s has %d of %d sandboxes ready; wait for it, scale it up or claim from its template %q for a cold start",
				ErrWarmPoolEmpty, e.ns, pool.Name, pool.Status.ReadyReplicas, pool.Spec.Replicas, pool.Spec.TemplateRef.Name)
		}
		name = pool.Spec.TemplateRef.Name
		if name == "" {
			return nil, fmt.Errorf("k8s: %w: warm pool %s/%s names no sandbox template", ErrTemplate, e.ns, pool.Name)
		}
	}
	t, err := ext.SandboxTemplates(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, e.apiError(err, "sandbox template %s/%s", e.ns, name)
	}
	return t, nil
}

// Create claims a sandbox for session and waits until it is ready. On every
// failure the claim it created is deleted (and if even that fails, it keeps
// helikon's labels for Remove to find).
func (e *Engine) Create(ctx context.Context, session string) (workspace.Workspace, error) {
	if err := workspace.ValidSession(session); err != nil {
		return nil, err
	}
	existing, err := e.claimsOf(ctx, session)
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		return nil, fmt.Errorf("k8s: session %s already has a workspace (claim %s/%s): attach to it or remove it", session, e.ns, existing[0].Name)
	}
	tmpl, err := e.template(ctx)
	if err != nil {
		return nil, err
	}
	claim := &extv1alpha1.SandboxClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claimName(session), Namespace: e.ns},
		Spec:       extv1alpha1.SandboxClaimSpec{TemplateRef: extv1alpha1.SandboxTemplateRef{Name: tmpl.Name}},
	}
	claim.Labels, claim.Annotations = e.claimLabels(ctx, session, time.Now())
	created, err := e.c.Extensions.ExtensionsV1alpha1().SandboxClaims(e.ns).Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		// A create whose answer was lost may have committed: delete by
		// name, which is ours alone.
		e.deleteClaim(ctx, claim.Name)
		return nil, e.apiError(err, "creating sandbox claim %s/%s", e.ns, claim.Name)
	}
	ws, err := e.open(ctx, created, tmpl.Name, false)
	if err != nil {
		e.deleteClaim(ctx, created.Name)
		return nil, err
	}
	return ws, nil
}

// Attach opens the workspace of session, waiting (as Create) for it to be
// ready; a session without one fails with [workspace.ErrNotFound]. A claim
// whose sandbox is gone fails with [workspace.ErrGone] and is left for
// Remove.
func (e *Engine) Attach(ctx context.Context, session string) (workspace.Workspace, error) {
	if err := workspace.ValidSession(session); err != nil {
		return nil, err
	}
	claims, err := e.claimsOf(ctx, session)
	if err != nil {
		return nil, err
	}
	if len(claims) == 0 {
		return nil, fmt.Errorf("k8s: %w %s in namespace %s", workspace.ErrNotFound, session, e.ns)
	}
	c := claims[0]
	return e.open(ctx, &c, c.Spec.TemplateRef.Name, true)
}

// claimsOf lists the live claims of session, oldest first.
func (e *Engine) claimsOf(ctx context.Context, session string) ([]extv1alpha1.SandboxClaim, error) {
	sel := labels.Set{workspace.LabelManaged: "true", workspace.LabelSession: session}.AsSelector().String()
	list, err := e.c.Extensions.ExtensionsV1alpha1().SandboxClaims(e.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, e.apiError(err, "listing sandbox claims in %s", e.ns)
	}
	var out []extv1alpha1.SandboxClaim
	for _, c := range list.Items {
		if c.DeletionTimestamp == nil {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp) })
	return out, nil
}

// List reports the claims in the namespace that carry helikon's labels.
func (e *Engine) List(ctx context.Context) ([]workspace.Info, error) {
	sel := labels.Set{workspace.LabelManaged: "true"}.AsSelector().String()
	list, err := e.c.Extensions.ExtensionsV1alpha1().SandboxClaims(e.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, e.apiError(err, "listing sandbox claims in %s", e.ns)
	}
	out := make([]workspace.Info, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, infoOf(&list.Items[i]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Remove deletes the claim id; the controller's owner references take its
// Sandbox and pod with it. A claim already gone is not an error; a claim
// without helikon's label is refused, so that reap never deletes someone
// else's sandbox.
func (e *Engine) Remove(ctx context.Context, id string) error {
	claims := e.c.Extensions.ExtensionsV1alpha1().SandboxClaims(e.ns)
	c, err := claims.Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return e.apiError(err, "reading sandbox claim %s/%s", e.ns, id)
	}
	if c.Labels[workspace.LabelManaged] != "true" {
		return fmt.Errorf("k8s: sandbox claim %s/%s was not created by helikon (no %s label): not removed", e.ns, id, workspace.LabelManaged)
	}
	return e.delete(ctx, id)
}

func (e *Engine) delete(ctx context.Context, name string) error {
	bg := metav1.DeletePropagationBackground
	err := e.c.Extensions.ExtensionsV1alpha1().SandboxClaims(e.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		return e.apiError(err, "deleting sandbox claim %s/%s", e.ns, name)
	}
	return nil
}

// deleteClaim deletes a claim on a failure path, whatever the state of the
// caller's context, and logs what it could not delete.
func (e *Engine) deleteClaim(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := e.delete(ctx, name); err != nil {
		e.log.Warn("k8s: deleting the sandbox claim failed; helikon workspaces reap will find it by its labels", "claim", e.ns+"/"+name, "err", err)
	}
}

// apiError words an API error: a server that did not answer wraps
// ErrUnreachable, a missing template or pool ErrTemplate, anything else is
// returned with what was being done.
func (e *Engine) apiError(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	var status apierrors.APIStatus
	switch {
	case !errors.As(err, &status) && errors.Is(err, context.Canceled):
		return fmt.Errorf("k8s: %s: %w", what, err)
	case !errors.As(err, &status):
		host := ""
		if e.c.Config != nil {
			host = " at " + e.c.Config.Host
		}
		return fmt.Errorf("k8s: %w%s (%s): %v; check the kubeconfig context and that the cluster is up (kubectl cluster-info)", ErrUnreachable, host, what, err)
	case apierrors.IsNotFound(err) && (strings.HasPrefix(what, "sandbox template") || strings.HasPrefix(what, "sandbox warm pool")):
		return fmt.Errorf("k8s: %w: %s does not exist (kubectl get sandboxtemplates,sandboxwarmpools -n %s)", ErrTemplate, what, e.ns)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("k8s: %s: %w; the kubeconfig's user needs RBAC for it (docs/kubernetes.md lists the rules)", what, err)
	}
	return fmt.Errorf("k8s: %s: %w", what, err)
}

// randomSuffix returns n random lower-case hex characters.
func randomSuffix(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)[:n]
}
