package packaging

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// component is an optional kustomize component of kubebuilder's layout,
// which config/default often leaves commented out. The chart carries it
// behind <Value>.enabled: on when the overlay includes it, else off.
type component struct{ Dir, Value string }

var components = []component{{"prometheus", "prometheus"}, {"network-policy", "networkPolicy"}}

// loadComponents builds the project's optional components and records
// which objects belong to them; objects the overlay lacks go to Optional.
func (p *Project) loadComponents() error {
	p.componentValues = map[string]string{}
	p.Components = map[string]bool{}
	for _, c := range components {
		dir := filepath.Join(p.Dir, "config", c.Dir)
		if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err != nil {
			continue
		}
		objs, err := buildOverlay(dir)
		if err != nil {
			return err
		}
		on := false
		for _, o := range objs {
			name := p.NamePrefix + strings.TrimPrefix(o.GetName(), p.NamePrefix)
			key := o.GetKind() + "/" + name
			p.componentValues[key] = c.Value
			if slices.ContainsFunc(p.Objects, func(e *unstructured.Unstructured) bool { return e.GetKind()+"/"+e.GetName() == key }) {
				on = true
				continue
			}
			o.SetName(name)
			if o.GetNamespace() != "" {
				o.SetNamespace(p.Namespace)
			}
			p.Optional = append(p.Optional, o)
		}
		p.Components[c.Value] = on
	}
	slices.SortFunc(p.Optional, compareObjects)
	return nil
}

// componentOf is the value that gates o, or "".
func (p *Project) componentOf(o *unstructured.Unstructured) string {
	return p.componentValues[o.GetKind()+"/"+o.GetName()]
}

// helperRole reports a ClusterRole the overlay binds to nobody whose rules
// only cover the project's API groups: the admin, editor and viewer roles
// kubebuilder scaffolds for users of the CRDs.
func (p *Project) helperRole(o *unstructured.Unstructured) bool {
	for _, b := range p.Objects {
		if k := b.GetKind(); k == "RoleBinding" || k == "ClusterRoleBinding" {
			if ref, _, _ := unstructured.NestedString(b.Object, "roleRef", "name"); ref == o.GetName() {
				return false
			}
		}
	}
	groups := map[string]bool{}
	for _, c := range p.CRDs {
		groups[c.Spec.Group] = true
	}
	rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		apiGroups, _, _ := unstructured.NestedStringSlice(rule, "apiGroups")
		if len(apiGroups) == 0 {
			return false
		}
		for _, g := range apiGroups {
			if !groups[g] {
				return false
			}
		}
	}
	return len(rules) > 0
}

// metricsService reports the Service in front of the manager's metrics.
func (p *Project) metricsService(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Service" && strings.Contains(o.GetName(), "metrics")
}

// rbacValues are the rbac.* values; helpers only when the project has
// helper roles.
func (p *Project) rbacValues(opts ChartOptions) []value {
	vs := []value{
		{Key: "create", Doc: "Create Roles, ClusterRoles and their bindings.", Val: true},
		{Key: "scope", Doc: "namespace: Roles in each watched namespace (the release namespace by default) plus a minimal ClusterRole for cluster-scoped rules; cluster: one ClusterRole.", Val: opts.RBACScope, Enum: []string{"namespace", "cluster"}},
	}
	if slices.ContainsFunc(p.Objects, func(o *unstructured.Unstructured) bool { return o.GetKind() == "ClusterRole" && p.helperRole(o) }) {
		vs = append(vs, value{Key: "helpers", Doc: "The admin, editor and viewer ClusterRoles for users of the CRDs.", Kids: []value{
			{Key: "enabled", Doc: "Create the helper ClusterRoles.", Val: false},
		}})
	}
	return vs
}

// metricsValues are the metrics.* values; port and secure when the
// manager takes them as flags.
func (p *Project) metricsValues(a ManagerArgs) []value {
	vs := []value{{Key: "enabled", Doc: "Create the metrics Service.", Val: true}}
	if a.MetricsPort != 0 {
		vs = append(vs, value{Key: "port", Doc: "Port of the metrics endpoint (--metrics-bind-address) and its Service.", Val: int64(a.MetricsPort), Min: 1, Max: 65535})
	}
	if a.SecureFlag {
		vs = append(vs, value{Key: "secure", Doc: "Serve metrics over HTTPS with authentication and authorization (--metrics-secure).", Val: a.MetricsSecure})
	}
	return vs
}

func toAnyList(s []string) []any {
	out := []any{}
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

func (p *Project) priorityClassDoc() string {
	if pc := p.ownPriorityClass(); pc != "" {
		return "PriorityClass of the operator pod; empty means the chart's own (" + strings.TrimPrefix(pc, p.NamePrefix) + ")."
	}
	return "PriorityClass of the operator pod."
}
