//go:build k8stools

// Package tools pins containerd 2 for scripts/k8s/cluster.sh's single-node cluster (BATON_K8S_RUNTIME=containerd2;
// scripts/k8s/build.sh builds it; test infrastructure only, never shipped): the daemon, the runc shim, ctr.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
