//go:build k8stools

// Package tools pins Tekton Pipelines' own e2e tests (its test/ package, build tag e2e), which
// scripts/k8s/suites/tekton.sh compiles with `go test -c` and runs against the cluster of scripts/k8s/cluster.sh
// (test infrastructure only, never shipped). The import keeps the test package's module in go.mod.
package tools

import (
	_ "github.com/tektoncd/pipeline/test"
)
