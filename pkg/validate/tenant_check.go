package validate

import (
	"fmt"
	"maps"
	"slices"

	"helm.sh/helm/v3/pkg/chart/loader"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TenantVerdict is what opctl tenancy check says of a chart for a tenant:
// what the tenancy controller would refuse before installing it, judged
// against the shipped baseline and the platform's ClusterRoles given, and
// a ClusterRole that would allow the cluster-wide rules still missing.
type TenantVerdict struct {
	Chart string `json:"chart"`
	// ClusterRoles are the platform's roles it was judged with.
	ClusterRoles []string `json:"clusterRoles"`
	// Fits is true when nothing would be refused.
	Fits bool `json:"fits"`
	// Refusals name each rule or object refused and why.
	Refusals []Finding `json:"refusals"`
	// Allow is a ClusterRole that, named for the tenant's profile and
	// bound to the controller, allows the missing cluster-wide rules;
	// nil when none are missing.
	Allow *rbacv1.ClusterRole `json:"allow,omitempty"`
}

// CheckTenant judges the chart in dir for a tenant, the platform's roles
// allowing more than the shipped baseline, as the tenant-ready check does
// (rbac.scope=namespace, the chart's required values stood in).
func CheckTenant(dir string, platform []rbacv1.ClusterRole) (*TenantVerdict, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not a loadable Helm chart: %w", dir, err)
	}
	in := &chartInput{dir: dir, chart: c, standIns: standIns(c)}
	vals := maps.Clone(in.standIns)
	vals["rbac"] = map[string]any{"scope": "namespace"}
	rd := newRender(c, vals)
	if rd.err != nil {
		return nil, fmt.Errorf("%s does not render with rbac.scope=namespace: %w", dir, rd.err)
	}
	in.renders = []chartRender{rd}
	r := &Report{Path: dir, Kind: KindChart, Findings: []Finding{}}
	missing := judgeTenant(TenantReady, r, in, platform)
	v := &TenantVerdict{Chart: dir, ClusterRoles: []string{}, Refusals: r.Findings, Fits: len(r.Findings) == 0}
	for _, role := range platform {
		v.ClusterRoles = append(v.ClusterRoles, role.Name)
	}
	if len(missing) > 0 {
		name := "tenant-operators"
		if c.Metadata != nil {
			name = c.Metadata.Name + "-for-tenants"
		}
		v.Allow = &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: slices.Clip(missing)}
	}
	return v, nil
}
