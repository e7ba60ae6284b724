package tenancy_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// A release whose pods the API server refuses (here Pod Security
// restricted, which the controller sets on tenant namespaces) says so on
// the Tenant, quoting the refusal, instead of only "rolling out".
func TestReplicaFailureReported(t *testing.T) {
	testcluster.Require(t, cluster)
	startController(t, tenancy.Options{})
	name := "refused-pods-" + suffix()
	chart := writeChart(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: loose\nversion: 0.1.0\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: loose
  labels: {app.kubernetes.io/instance: {{ .Release.Name }}}
spec:
  replicas: 1
  selector: {matchLabels: {app: loose}}
  template:
    metadata: {labels: {app: loose}}
    spec:
      containers:
      - name: manager
        image: example.com/loose:1
`})
	createTenant(t, newTenant(name, []string{name}, chart, 1))
	waitTenant(t, name, 2*time.Minute, "the refusal quoted on the Tenant", func(tn *tenancyv1.Tenant) error {
		for _, c := range tn.Status.Conditions {
			if c.Type == operatorkit.ConditionReady && strings.Contains(c.Message, "are refused") && strings.Contains(c.Message, "violates PodSecurity") {
				return nil
			}
		}
		return fmt.Errorf("conditions %s, want Ready saying the pods violate Pod Security", dump(tn.Status.Conditions))
	})
}
