//go:build k8stools

// Package tools pins the Kubernetes programs of scripts/k8s/cluster.sh's single-node cluster (scripts/k8s/build.sh
// builds them; test infrastructure only, never shipped).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
