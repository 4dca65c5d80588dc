//go:build linux

package docker

import (
	"os"
	"testing"

	"github.com/moby/moby/client"
)

// podmanEnv names the socket of a Podman service (podman system service,
// see testdata/ci-setup.sh podman-start) to run TestPodmanService against.
const podmanEnv = "HELIKON_PODMAN_HOST"

// TestPodmanService runs the lifecycle, the hardening and the isolated
// mode's ownership against Podman's Docker-compatible service, which the
// engine supports through the same client. It runs only when
// HELIKON_PODMAN_HOST names the service (unix:///run/helikon-podman.sock);
// the whole package runs there with DOCKER_HOST set to it instead.
func TestPodmanService(t *testing.T) {
	host := os.Getenv(podmanEnv)
	if host == "" {
		t.Skipf("%s is not set; run testdata/ci-setup.sh podman-start and set it to the service's socket", podmanEnv)
	}
	t.Setenv("DOCKER_HOST", host)
	e := newEngine(t, Options{Isolate: true})
	if info, err := e.cli.ServerVersion(t.Context(), client.ServerVersionOptions{}); err != nil || !isPodman(info) {
		t.Fatalf("%s=%s is not a Podman service: %+v, %v", podmanEnv, host, info, err)
	}
	for name, test := range map[string]func(*testing.T){
		"Lifecycle":                 TestLifecycle,
		"AttachRestarts":            TestAttachRestartsAStoppedContainer,
		"Guarantees":                TestGuaranteesSayWhatIsEnforced,
		"CapabilitiesAreDropped":    TestAttackCapabilitiesAreDropped,
		"NoNewPrivileges":           TestAttackNoNewPrivileges,
		"NetworkNone":               TestAttackNetworkNoneHasOnlyLoopback,
		"IsolatedLeavesHost":        TestAttackIsolatedModeLeavesTheHostUntouched,
		"LinkToTheContainersRoot":   TestAttackLinkToTheContainersRootIsRefused,
		"CopyBelongsToTheUser":      TestIsolatedCopyBelongsToTheCommandsUser,
		"TimeoutKillsTheBackground": TestTimeoutKillsTheBackgroundChainAndIsAResult,
		"SetIDPlantBindMode":        TestAttackSetIDPlantBindMode,
		"BindModeKeepsModes":        TestBindModeKeepsOrdinaryModes,
	} {
		t.Run(name, test)
	}
}
