//go:build pin

// Package deps pins the dependency set of DESIGN.md in go.mod before every
// module in it has an importer. The "pin" build tag keeps it out of every
// build; go mod tidy still sees the imports and keeps the versions. Drop an
// import here once real code imports that module.
package deps

import (
	_ "github.com/operator-framework/api/pkg/validation"
	_ "github.com/operator-framework/operator-registry/alpha/declcfg"
	_ "helm.sh/helm/v3/pkg/chart"
	_ "sigs.k8s.io/kustomize/api/krusty"
)
