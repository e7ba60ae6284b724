// Package kstatustest asserts that a custom resource's conditions read the
// same through kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status), the
// library behind kubectl wait-style tools, Helm v4 and flux, as they do
// through operatorkit's own Ready, Progressing and Degraded.
package kstatustest
