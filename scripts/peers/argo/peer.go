//go:build peers

// Package peers pins Argo's argoexec, a test peer of baton's (scripts/peers/build.sh builds it; never shipped: the
// module list reports security flaws in v4.0.5, and the tests run it only inside their own namespaces).
package peers

import _ "github.com/argoproj/argo-workflows/v4/cmd/argoexec"
