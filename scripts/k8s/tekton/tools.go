//go:build k8stools

// Package tools pins Tekton Pipelines' controller, webhook and the images its pods use, run in the cluster of
// scripts/k8s/cluster.sh (scripts/k8s/build.sh builds them; test infrastructure only, never shipped).
package tools

import (
	_ "github.com/tektoncd/pipeline/cmd/controller"
	_ "github.com/tektoncd/pipeline/cmd/entrypoint"
	_ "github.com/tektoncd/pipeline/cmd/nop"
	_ "github.com/tektoncd/pipeline/cmd/sidecarlogresults"
	_ "github.com/tektoncd/pipeline/cmd/webhook"
	_ "github.com/tektoncd/pipeline/cmd/workingdirinit"
)
