//go:build k8stools

// Package tools pins Argo Workflows' e2e tests (test/e2e of the release), compiled with `go test -c` by
// scripts/k8s/suites/argo.sh and run against the cluster of scripts/k8s/cluster.sh (test infrastructure only, never
// shipped).
package tools

import (
	_ "github.com/argoproj/argo-workflows/v4/test/e2e"
)
