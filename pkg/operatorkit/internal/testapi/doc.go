// Package testapi holds the Widget kind that operatorkit's integration
// tests reconcile. Its CRD is generated into testdata/crd by make generate.
package testapi
