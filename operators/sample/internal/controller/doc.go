// Package controller reconciles KVStores with operatorkit: a ServiceAccount,
// a ConfigMap rendered from spec.config, a password Secret created once, a
// StatefulSet, a headless and a client Service and a PodDisruptionBudget.
// Version upgrades roll the pods one at a time and roll back when the new
// version does not become ready within the progress deadline.
package controller
