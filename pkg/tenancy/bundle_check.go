package tenancy

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// bundleBackend installs registry+v1 bundles from file-based catalogs
// (spec.operators[].bundle) with no OLM: it resolves the bundle in the
// catalog's upgrade graph, renders it for the tenant (bundle_render.go)
// and installs the result as a Helm release through the shared release
// path, so history, rollback, recovery, tamper checks and drift
// correction are the chart source's.
type bundleBackend struct {
	*Controller
	fbc *fbcCatalogs
}

// bundlePlan is what the check step worked out for a bundle operator.
type bundlePlan struct {
	res     *resolution
	content *bundleContent
	// err is why the catalog or the bundle could not be read yet.
	err error
}

func (*bundleBackend) source(op tenancyv1.OperatorSpec) (string, bool) {
	if op.Bundle == nil {
		return "", false
	}
	return bundleSourceString(op.Bundle.Catalog), true
}

func (*bundleBackend) installed(st tenancyv1.OperatorStatus) bool { return st.Bundle != nil }

// plan reads the catalog, resolves the bundle and renders it. A catalog
// or bundle that cannot be read yet is not an error of the spec: the plan
// records it and the quota leaves the operator out until it can.
func (b *bundleBackend) plan(ctx context.Context, t *tenancyv1.Tenant, op tenancyv1.OperatorSpec) (operatorPlan, error) {
	src := op.Bundle
	cfg, err := b.fbc.load(ctx, src.Catalog, t.Spec.Namespaces)
	var refused errRefusedConfigMap
	if errors.As(err, &refused) {
		return operatorPlan{}, operatorkit.Terminal("CatalogRefused", fmt.Errorf("operator %s: %w", op.Name, err))
	}
	if err != nil {
		return operatorPlan{detail: &bundlePlan{err: err}}, nil
	}
	running := ""
	if st := operatorStatus(t, op.Name); st.Bundle != nil {
		running = st.ChartVersion
	}
	res, err := resolveBundle(cfg, resolveInput{pkg: src.Package, channel: src.Channel, pinned: op.Version, running: running, manual: src.Approval == approvalManual})
	if err != nil {
		return operatorPlan{detail: &bundlePlan{err: err}}, nil
	}
	content, err := b.fbc.content(ctx, res.bundle)
	if err != nil {
		return operatorPlan{detail: &bundlePlan{res: res, err: err}}, nil
	}
	rendered, err := renderBundle(bundleRender{tenant: t.Name, release: op.Name, namespaces: t.Spec.Namespaces,
		objects: content.objects, clusterScoped: b.clusterScoped, clusterResource: b.clusterResource,
		certs: func(deployments []string) (*webhookCerts, error) {
			return b.webhookCertsFor(ctx, t, op.Name, deployments)
		}})
	if err != nil {
		if !operatorkit.IsTerminal(err) {
			err = operatorkit.Terminal("InvalidBundle", err)
		}
		return operatorPlan{}, fmt.Errorf("operator %s: bundle %s: %w", op.Name, res.bundle.Name, err)
	}
	install := bundleChart(src.Package, res, rendered)
	rendered.analysis.Release = install
	values := map[string]any{"bundle": res.bundle.Name, "image": content.image, "manifest": rendered.digest}
	return operatorPlan{analysis: rendered.analysis, detail: &bundlePlan{res: res, content: content},
		release: &releaseSpec{Name: op.Name, Namespace: t.Spec.Namespaces[0], Install: install, Values: values}}, nil
}

// clusterScoped asks the API server's discovery; an unknown kind is
// namespaced, and the tamper check refuses it if it is not.
func (b *bundleBackend) clusterScoped(gvk schema.GroupVersionKind) bool {
	scoped, _ := guard.ScopeOf(b.helm.mapper, gvk)
	return scoped
}

// clusterResource reports whether the cluster serves group/resource
// cluster-scoped, or not at all.
func (b *bundleBackend) clusterResource(group, resource string) bool {
	gvk, err := b.helm.mapper.KindFor(schema.GroupVersionResource{Group: group, Resource: resource})
	if err != nil {
		return true
	}
	scoped, known := guard.ScopeOf(b.helm.mapper, gvk)
	return scoped || !known
}

// bundleChart is the chart Helm installs for a rendered bundle: the
// manifest as a file that one template prints, so that nothing in it is
// read as a template.
func bundleChart(pkg string, res *resolution, r *renderedBundle) *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: pkg, Version: res.version.String(), AppVersion: res.version.String(),
			Description: fmt.Sprintf("registry+v1 bundle %s, rendered by the opctl tenancy controller", res.bundle.Name)},
		Templates: []*chart.File{{Name: "templates/bundle.yaml", Data: []byte(`{{ .Files.Get "bundle.yaml" }}`)}},
		Files:     []*chart.File{{Name: "bundle.yaml", Data: r.manifest}},
	}
}
