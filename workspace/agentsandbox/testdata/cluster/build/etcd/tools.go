//go:build tools

// Package tools records the command build.sh builds, so that go mod tidy keeps its dependencies.
package tools

import _ "go.etcd.io/etcd/server/v3"
