//go:build k8stools

// Package tools pins Argo Workflows' workflow-controller and argoexec, run in the cluster of scripts/k8s/cluster.sh
// (scripts/k8s/build.sh builds them; test infrastructure only, never shipped).
package tools

import (
	_ "github.com/argoproj/argo-workflows/v4/cmd/argoexec"
	_ "github.com/argoproj/argo-workflows/v4/cmd/workflow-controller"
)
