package agentsandbox_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	sandboxfake "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned/fake"
	extfake "sigs.k8s.io/agent-sandbox/clients/k8s/extensions/clientset/versioned/fake"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace/agentsandbox"
	"github.com/paigasus/helikon/workspace/agentsandbox/internal/fakecluster"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// manifest is the Deployment's manifest, whose Role must grant exactly what
// the engine does.
const manifest = "../../deploy/kubernetes/helikon-k8s.yaml"

// permission is one (API group, resource[/subresource], verb).
type permission struct{ group, resource, verb string }

func (p permission) String() string { return p.verb + " " + p.resource + "." + p.group }

// recorder is a set of clientsets over a fake cluster's objects that
// records only what the engine asks, not what the fake controllers do.
type recorder struct {
	kube *kubefake.Clientset
	sb   *sandboxfake.Clientset
	ext  *extfake.Clientset
}

func newRecorder(c *fakecluster.Cluster) *recorder {
	r := &recorder{kube: &kubefake.Clientset{}, sb: &sandboxfake.Clientset{}, ext: &extfake.Clientset{}}
	for _, f := range []struct {
		fake    *k8stesting.Fake
		tracker k8stesting.ObjectTracker
	}{{&r.kube.Fake, c.Kube.Tracker()}, {&r.sb.Fake, c.Sandboxes.Tracker()}, {&r.ext.Fake, c.Extensions.Tracker()}} {
		f.fake.AddReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if obj, err := meta.Accessor(a.(k8stesting.CreateAction).GetObject()); err == nil {
				obj.SetUID(types.UID(strings.Repeat("u", 16) + obj.GetName()))
				obj.SetCreationTimestamp(metav1.Now())
			}
			return false, nil, nil
		})
		f.fake.AddReactor("*", "*", k8stesting.ObjectReaction(f.tracker))
	}
	return r
}

// used is every permission the recorded requests needed.
func (r *recorder) used() map[permission]bool {
	out := map[permission]bool{}
	for _, f := range []*k8stesting.Fake{&r.kube.Fake, &r.sb.Fake, &r.ext.Fake} {
		for _, a := range f.Actions() {
			res := a.GetResource().Resource
			if s := a.GetSubresource(); s != "" {
				res += "/" + s
			}
			out[permission{a.GetResource().Group, res, a.GetVerb()}] = true
		}
	}
	return out
}

// granted reads the Role and ClusterRole of the manifest.
func granted(t *testing.T) (role, cluster map[permission]bool) {
	t.Helper()
	f, err := os.Open(filepath.FromSlash(manifest))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	role, cluster = map[permission]bool{}, map[permission]bool{}
	dec := k8syaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var doc struct {
			Kind  string              `json:"kind"`
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", manifest, err)
		}
		into := map[string]map[permission]bool{"Role": role, "ClusterRole": cluster}[doc.Kind]
		if into == nil {
			continue
		}
		for _, r := range doc.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						if g == "*" || res == "*" || v == "*" {
							t.Errorf("%s: a wildcard in %s rule %+v grants more than the engine uses", manifest, doc.Kind, r)
						}
						into[permission{g, res, v}] = true
					}
				}
			}
		}
	}
	return role, cluster
}

// TestManifestRoleMatchesTheEngine drives the engine through everything it
// does (create from a template and from a warm pool, commands and files in
// the pod, guarantees, list, attach, close, remove) against the fake
// cluster, records the requests it makes, and checks that the manifest's
// Role grants each of them and nothing else: a Role that lacks a verb
// breaks the service in a cluster; one with more than it needs grants a
// model-driven server more than it uses.
func TestManifestRoleMatchesTheEngine(t *testing.T) {
	c := fakecluster.New(t, fakecluster.Template("t", "gvisor"), fakecluster.RuntimeClass("gvisor", "runsc"), fakecluster.WarmPool("pool", "t", 1))
	r := newRecorder(c)
	ctx := t.Context()
	c.Reconcile(ctx)
	engine := func(o agentsandbox.Options) *agentsandbox.Engine {
		o.Namespace, o.PollInterval = fakecluster.Namespace, 5_000_000
		e, err := agentsandbox.NewForClients(agentsandbox.Clients{Config: c.Config, Kube: r.kube, Sandboxes: r.sb, Extensions: r.ext}, &o)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, o := range []agentsandbox.Options{{Template: "t"}, {WarmPool: "pool"}} {
		e := engine(o)
		ws, err := e.Create(ctx, "s-"+o.Template+o.WarmPool)
		if err != nil {
			t.Fatal(err)
		}
		if g := ws.Guarantees(); g.Syscalls != backend.IsolationVirtualized {
			t.Errorf("guarantees %+v: the runtime class was not read", g)
		}
		if _, err := ws.WriteFile(ctx, "f.txt", []byte("x")); err != nil {
			t.Fatal(err)
		}
		workspacetest.Sh(t, ws, "cat f.txt")
		if _, err := e.Probe(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.List(ctx); err != nil {
			t.Fatal(err)
		}
		again, err := e.Attach(ctx, "s-"+o.Template+o.WarmPool)
		if err != nil {
			t.Fatal(err)
		}
		if o.WarmPool != "" {
			if err := e.Remove(ctx, again.Info().ID); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := ws.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	used := r.used()
	if c.Exec.WebSocketExecs.Load()+c.Exec.SPDYExecs.Load() == 0 {
		t.Fatal("no command reached the pods' exec subresource")
	}
	// Exec goes through the REST config, not the clientsets: the WebSocket
	// upgrade is a GET, authorized as get on pods/exec (and, since
	// Kubernetes 1.35, as create too); the SPDY fallback is a POST,
	// authorized as create.
	used[permission{"", "pods/exec", "get"}] = true
	used[permission{"", "pods/exec", "create"}] = true
	role, cluster := granted(t)
	all := map[permission]bool{}
	for p := range role {
		all[p] = true
	}
	for p := range cluster {
		all[p] = true
	}
	var missing, unused []string
	for p := range used {
		if !all[p] {
			missing = append(missing, p.String())
		}
	}
	for p := range all {
		if !used[p] {
			unused = append(unused, p.String())
		}
	}
	slices.Sort(missing)
	slices.Sort(unused)
	if len(missing) > 0 {
		t.Errorf("%s does not grant what the engine does: %s", manifest, strings.Join(missing, "; "))
	}
	if len(unused) > 0 {
		t.Errorf("%s grants what the engine never does: %s", manifest, strings.Join(unused, "; "))
	}
	for p := range cluster {
		if p.resource != "runtimeclasses" {
			t.Errorf("the ClusterRole grants %s: only runtime classes are cluster-scoped", p)
		}
	}
}
