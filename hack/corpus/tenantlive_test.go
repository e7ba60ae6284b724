package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

func TestClassify(t *testing.T) {
	ready := tenantState{name: "a", ready: true, reason: "Provisioned"}
	refusedAs := func(name, reason string) tenantState {
		return tenantState{name: name, stalled: true, reason: reason, message: "operator op: " + reason + " of " + name}
	}
	going := func(name, reason string) tenantState {
		return tenantState{name: name, reason: reason, message: "operator op 0.1.0 is rolling out"}
	}
	tests := []struct {
		name    string
		states  []tenantState
		class   string
		details []string
	}{
		{"both ready", []tenantState{ready, {name: "b", ready: true}}, "ready", nil},
		{"both refused for rights, said once", []tenantState{refusedAs("a", tenancyv1.ReasonClusterRightsRefused), refusedAs("b", tenancyv1.ReasonClusterRightsRefused)}, "rights",
			[]string{"Tenant a: ClusterRightsRefused: operator op: ClusterRightsRefused of a", "Tenant b: ClusterRightsRefused, as a"}},
		{"a ClusterRole the controller does not hold", []tenantState{refusedAs("a", tenancyv1.ReasonClusterRoleNotHeld)}, "rights", nil},
		{"all namespaces only", []tenantState{refusedAs("a", "InstallModeNotSupported"), refusedAs("b", "InstallModeNotSupported")}, "allns", nil},
		{"an object outside the tenant", []tenantState{refusedAs("a", tenancyv1.ReasonReleaseTampered)}, "object", nil},
		{"a conversion webhook", []tenantState{refusedAs("a", tenancyv1.ReasonConversionWebhook)}, "crd", nil},
		{"a reserved CRD group", []tenantState{refusedAs("a", tenancyv1.ReasonCRDGroupReserved)}, "crd", nil},
		{"still rolling out", []tenantState{going("a", "Installing"), going("b", "Installing")}, "stalled", nil},
		{"quota never counted", []tenantState{going("a", "QuotaSyncing")}, "stalled", nil},
		{"no status at all", []tenantState{{name: "a", reason: "NoStatus"}}, "stalled", nil},
		{"an install error being retried", []tenantState{going("a", tenancyv1.ReasonInstallFailed)}, "failed", nil},
		{"a terminal reason of no refusal", []tenantState{refusedAs("a", "RenderFailed")}, "failed", nil},
		{"skew between two Tenants of one chart", []tenantState{ready, refusedAs("b", tenancyv1.ReasonCRDSkew)}, "failed", nil},
		{"a refusal reason not stalled", []tenantState{{name: "a", reason: tenancyv1.ReasonClusterRightsRefused}}, "failed", nil},
		{"one ready, one refused", []tenantState{ready, refusedAs("b", tenancyv1.ReasonClusterRightsRefused)}, "rights", nil},
		{"a refusal and a stall: the stall", []tenantState{refusedAs("a", tenancyv1.ReasonClusterRightsRefused), going("b", "Installing")}, "stalled", nil},
		{"a stall and a failure: the failure", []tenantState{going("a", "Installing"), going("b", tenancyv1.ReasonInstallFailed)}, "failed", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class, details := classify(tt.states)
			if class != tt.class {
				t.Errorf("class %q, want %q", class, tt.class)
			}
			notReady := 0
			for _, s := range tt.states {
				if !s.ready {
					notReady++
				}
			}
			if len(details) != notReady {
				t.Errorf("%d details, want one per Tenant not ready (%d): %q", len(details), notReady, details)
			}
			if tt.details != nil && strings.Join(details, "\n") != strings.Join(tt.details, "\n") {
				t.Errorf("details\n%s\nwant\n%s", strings.Join(details, "\n"), strings.Join(tt.details, "\n"))
			}
			if got, want := refused(class), class != "ready" && class != "stalled" && class != "failed"; got != want {
				t.Errorf("refused(%q) = %v, want %v", class, got, want)
			}
		})
	}
}

func TestStateOf(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: reason + " message", ObservedGeneration: gen}
	}
	tests := []struct {
		name            string
		generation      int64
		observed        int64
		conds           []metav1.Condition
		ready, stalled  bool
		reason, message string
	}{
		{"ready now", 2, 2, []metav1.Condition{cond("Ready", metav1.ConditionTrue, "Provisioned", 2)}, true, false, "Provisioned", "Provisioned message"},
		{"ready for an older generation", 2, 1, []metav1.Condition{cond("Ready", metav1.ConditionTrue, "Provisioned", 1)}, false, false, "Provisioned", "Provisioned message"},
		{"refused", 1, 1, []metav1.Condition{cond("Ready", metav1.ConditionFalse, "ClusterRightsRefused", 1), cond("Stalled", metav1.ConditionTrue, "ClusterRightsRefused", 1)},
			false, true, "ClusterRightsRefused", "ClusterRightsRefused message"},
		{"no status", 1, 0, nil, false, false, "NoStatus", "the Tenant has no Ready condition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn := &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: tt.generation}}
			tn.Status.ObservedGeneration, tn.Status.Conditions = tt.observed, tt.conds
			got := stateOf(tn)
			if got.ready != tt.ready || got.stalled != tt.stalled || got.reason != tt.reason || got.message != tt.message {
				t.Errorf("stateOf = %+v, want ready %v, stalled %v, %s: %s", got, tt.ready, tt.stalled, tt.reason, tt.message)
			}
		})
	}
}

// A Tenant's values are what the chart has of the --set values, nested as
// helm --set nests them.
func TestTenantValues(t *testing.T) {
	chart := t.TempDir()
	values := "webhooks:\n  enabled: true\nplaceholders:\n  DOMAIN: \"\"\nimages:\n  manager: \"\"\n"
	if err := os.WriteFile(filepath.Join(chart, "values.yaml"), []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := tenantValues(chart, []string{"webhooks.enabled=false", "apiService.enabled=false", "placeholders.DOMAIN=corpus00", "images.manager=registry.invalid/corpus/manager:v0"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"images":{"manager":"registry.invalid/corpus/manager:v0"},"placeholders":{"DOMAIN":"corpus00"},"webhooks":{"enabled":false}}`
	if string(b) != want {
		t.Errorf("values %s, want %s", b, want)
	}
}

func TestOperatorName(t *testing.T) {
	for chart, want := range map[string]string{
		"out/charts/rabbitmq-cluster-operator":                         "rabbitmq-cluster-operator",
		"out/charts/cloudnative-pg-kubebuilderv4-with-a-long-name-yes": "cloudnative-pg-kubebuilderv4-with-a-long",
		"out/charts/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-b":         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	} {
		if got := operatorName(chart); got != want || len(got) > 40 {
			t.Errorf("operatorName(%s) = %q, want %q", chart, got, want)
		}
	}
}

// The summary counts the live column by class, the refusals apart, and
// how many of the rows the offline check finds fitting are ready.
func TestSummaryTenant(t *testing.T) {
	var s summary
	for _, r := range []*result{
		{check: "fits", tenant: "ready"},
		{check: "podsec", tenant: "stalled"},
		{check: "allns,rules", tenant: "allns", nowebhook: "allns"},
		{check: "rules", tenant: "rights"},
		{check: "fits", tenant: "crd", nowebhook: "ready"},
	} {
		r.status = map[string]string{"package": "ok"}
		s.add(r)
	}
	got := s.String(true)
	for _, want := range []string{
		"corpus: 5 projects: 4 passed every check, 1 failed", // stalled fails the row; refusals do not
		"check (opctl tenancy check --offline, shipped policy, before install; a project may have several reasons): allns 1, fits 2, podsec 1, rules 2",
		"chart's defaults): allns 1, crd 1, ready 1, rights 1, stalled 1: 1 of 5 rows ready, 3 refused before install, 1 neither; 1 of the 3 rows whose check finds neither allns, rules nor crd ready",
		"webhooks not ready with them): allns 1, ready 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary\n%s\nlacks %q", got, want)
		}
	}
}
