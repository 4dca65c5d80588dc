// Package dockertest gives tests outside package workspace/docker a Docker
// workspace on the image that workspace/docker/testdata/ci-setup.sh builds
// without a registry (busybox, with a user helikon), or a clean skip where
// no daemon answers.
//
// The environment is the one package workspace/docker's own tests read:
// HELIKON_DOCKER_IMAGE names the image (helikon-test-busybox:1 when
// unset), and HELIKON_REQUIRE_DOCKER, which CI sets, turns a missing
// daemon or image into a failure instead of a skip, so that a CI run
// cannot pass with these tests skipped.
//
// Package workspace/docker's internal tests keep their own helper: they
// cannot import this package, which imports theirs.
package dockertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/docker"
)

const (
	// ImageEnv names the test image.
	ImageEnv = "HELIKON_DOCKER_IMAGE"
	// RequireEnv, when set, makes a missing daemon or image fail the test.
	RequireEnv = "HELIKON_REQUIRE_DOCKER"
	// DefaultImage is the image ci-setup.sh imports.
	DefaultImage = "helikon-test-busybox:1"
)

// Image returns the test image's name: $HELIKON_DOCKER_IMAGE, or
// [DefaultImage].
func Image() string {
	if s := os.Getenv(ImageEnv); s != "" {
		return s
	}
	return DefaultImage
}

// Engine returns a Docker engine with opts on the test image (opts.Image
// is filled in), closed when the test ends. Where the engine cannot be
// opened (no daemon answers, or the image is not in it) the test is
// skipped, or fails when $HELIKON_REQUIRE_DOCKER is set.
func Engine(t testing.TB, opts docker.Options) *docker.Engine {
	t.Helper()
	opts.Image = Image()
	e, err := docker.New(t.Context(), &opts)
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is set but the Docker engine cannot be opened: %v", RequireEnv, err)
		}
		t.Skipf("no Docker engine: %v (run workspace/docker/testdata/ci-setup.sh start, or set %s to make this a failure)", err, RequireEnv)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// Workspace returns a fresh workspace of e under a random session name,
// closed (its container removed) when the test ends.
func Workspace(t testing.TB, e *docker.Engine) workspace.Workspace {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	ws, err := e.Create(t.Context(), "test-"+hex.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	return ws
}

// Bind returns a workspace whose container sees root bind-mounted at its
// own path (the effect of its commands is on the host's disk), with the
// engine's default containment (no network, all capabilities dropped,
// no-new-privileges). It skips as [Engine] does.
func Bind(t testing.TB, root string) workspace.Workspace {
	t.Helper()
	return Workspace(t, Engine(t, docker.Options{Root: root}))
}
