// Command startfloor links the libraries every opctl command carries (the
// Helm SDK, client-go, controller-runtime, kustomize and the
// operator-framework validators) and does nothing: its CPU is the start-up
// floor those libraries' package initialisers set, which make bench-startup
// prints beside opctl --help.
package main

import (
	_ "github.com/operator-framework/api/pkg/validation"
	_ "helm.sh/helm/v3/pkg/action"
	_ "helm.sh/helm/v3/pkg/lint"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/controller-runtime"
	_ "sigs.k8s.io/kustomize/api/krusty"
)

func main() {}
