// Package packaging turns an operator project in kubebuilder/operator-sdk
// layout into a Helm chart and an OLM registry+v1 bundle.
//
// Load builds the project's kustomize overlay (config/default) in process
// with krusty and sorts what it finds into a Project: CRDs, the manager
// Deployment, ServiceAccounts, RBAC, webhooks, other objects and the samples
// from config/samples, plus the overrides in opctl.yaml. WriteChart and
// WriteBundle render a Project; Package does both through a temporary
// directory and an atomic rename, so a failure leaves earlier output as it
// was. The same input always gives byte-identical output.
package packaging
