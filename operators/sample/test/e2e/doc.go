// Package e2e installs the sample operator's shipped config with
// kubectl apply -k on the test control plane and runs the built manager
// binary as a process with its ServiceAccount's token, so the generated
// RBAC and the kustomize config are what gets tested.
package e2e
