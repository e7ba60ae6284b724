package tenancy

import (
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

func init() {
	registerBackend(backendType{name: "chart", new: func(c *Controller) (backend, error) {
		return newChartBackend(c.releases, c.charts, c.kube), nil
	}})
}

// objects: a release's objects are Helm's, not the Tenant's.
func (*chartBackend) objects(*tenancyv1.Tenant, settings) []client.Object { return nil }

// watch: the release path's watches (Deployments, and the RBAC drift
// correction keeps) are the Controller's, shared with the bundle backend.
func (*chartBackend) watch(b *builder.Builder) *builder.Builder { return b }
