//go:build peers

// Package peers pins Argo's argoexec of the 3.7 line, which many clusters still run (a test peer, never shipped).
package peers

import _ "github.com/argoproj/argo-workflows/v3/cmd/argoexec"
