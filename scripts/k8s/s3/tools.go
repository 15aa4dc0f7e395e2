//go:build k8stools

// Package tools pins gofakes3, an S3 server that keeps objects in memory: the artifact repository of the Argo cases
// in the cluster of scripts/k8s/cluster.sh (scripts/k8s/build.sh builds it; test infrastructure only, never shipped).
package tools

import _ "github.com/johannesboyne/gofakes3/cmd/gofakes3"
