//go:build peers

// Package peers pins Tekton's entrypoint, a test peer of baton's (scripts/peers/build.sh builds it; never shipped).
package peers

import _ "github.com/tektoncd/pipeline/cmd/entrypoint"
