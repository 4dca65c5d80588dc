package main

import (
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

func TestK8sBackendIsRegisteredAndFailsClosedWithoutConfiguration(t *testing.T) {
	for _, args := range [][]string{
		{"tool", "--backend", "k8s", "Bash", `{"command":"true"}`},
		{"workspaces", "list", "--backend", "k8s"},
	} {
		code, _, errb := clitest.Run(t, "", args...)
		if code == 0 || !strings.Contains(errb, "needs HELIKON_K8S_TEMPLATE") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal naming the configuration", args, code, errb)
		}
	}
}

func TestOptionsFromTheEnvironment(t *testing.T) {
	env := map[string]string{"KUBECONFIG": "/k", "HELIKON_K8S_NAMESPACE": "ns", "HELIKON_K8S_WARM_POOL": "pool", "HELIKON_K8S_DIR": "/w"}
	o := options(func(k string) string { return env[k] })
	if o.Kubeconfig != "/k" || o.Namespace != "ns" || o.WarmPool != "pool" || o.Dir != "/w" || o.Template != "" {
		t.Fatalf("options = %+v", o)
	}
}
