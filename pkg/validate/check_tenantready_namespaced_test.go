package validate

import (
	"context"
	"slices"
	"testing"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Offline, tenant-ready and opctl tenancy check refuse the Roles in the
// tenant's namespaces that the tenancy controller refuses (beyond
// Kubernetes' built-in admin role, the shipped baseline and the
// operator's own kinds), and CRDs that convert through a webhook, with the
// controller's reason and text; the operator's own kind with its status
// and finalizers fits.
func TestTenantReadyNamespaced(t *testing.T) {
	const beyond = " in the tenant's namespaces, beyond what its owners hold (admin) and the operator's own kinds"
	dir := "testdata/tenantroles/"
	tests := []struct {
		chart string
		// refusals are the tenant-ready findings' messages (after
		// againstBaseline), reason their controller reason.
		refusals []string
		reason   string
	}{
		{"configmaps-status", []string{"Role validate/leader-election-role grants get,patch,update configmaps/status" + beyond}, tenancyv1.ReasonClusterRightsRefused},
		{"pods-status", []string{"RoleBinding validate/opctl-validate-manager of ClusterRole opctl-validate-manager grants patch,update pods/status" + beyond}, tenancyv1.ReasonClusterRightsRefused},
		{"own-kind", nil, ""},
		{"endpointslices", []string{"Role validate/endpoints-writer grants create,delete,patch,update discovery.k8s.io/endpointslices, delete endpoints" + beyond}, tenancyv1.ReasonClusterRightsRefused},
		{"conversion", []string{"CRD gadgets.tenantroles.example.com converts through a webhook, which would convert every tenant's objects through one tenant's Service: " +
			"shared CRDs must use conversion strategy None; install this operator once for the cluster"}, tenancyv1.ReasonConversionWebhook},
	}
	for _, tt := range tests {
		t.Run(tt.chart, func(t *testing.T) {
			r, err := ValidateChart(dir+tt.chart, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var findings []Finding
			for _, f := range r.Findings {
				if f.Check == TenantReady.ID {
					findings = append(findings, f)
				}
			}
			v, err := CheckTenant(context.Background(), dir+tt.chart, nil, TenantOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v.Fits != (len(tt.refusals) == 0) || v.OwnerRole != "Kubernetes 1.36's built-in admin role" {
				t.Errorf("opctl tenancy check: fits %v, owner role %q; want fits %v, Kubernetes 1.36's built-in admin role", v.Fits, v.OwnerRole, len(tt.refusals) == 0)
			}
			for what, got := range map[string][]Finding{"tenant-ready": findings, "opctl tenancy check": v.Refusals} {
				var msgs []string
				for _, f := range got {
					msgs = append(msgs, f.Message)
					if f.Reason != tt.reason {
						t.Errorf("%s: %q has reason %q, want %q", what, f.Message, f.Reason, tt.reason)
					}
				}
				var want []string
				for _, w := range tt.refusals {
					want = append(want, againstBaseline+w)
				}
				if !slices.Equal(msgs, want) {
					t.Errorf("%s:\n got %q\nwant %q", what, msgs, want)
				}
			}
		})
	}
}
