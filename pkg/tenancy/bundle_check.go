package tenancy

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmrelease "opctl.dev/opctl/pkg/tenancy/internal/helmrelease"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/apimachinery/pkg/api/meta"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
)

// bundleBackend installs registry+v1 bundles from file-based catalogs
// (spec.operators[].bundle) with no OLM: it resolves the bundle in the
// catalog's upgrade graph, renders it for the tenant (internal/registryv1)
// and installs the result as a Helm release through the shared release
// path, so history, rollback, recovery, tamper checks and drift
// correction are the chart source's.
type bundleBackend struct {
	tenantEvents
	releases releaser
	client   client.Client // writes the webhook certificates' Secrets
	reader   client.Reader
	mapper   meta.RESTMapper
	fbc      *registryv1.FBCCatalogs
	// storageNamespace keeps the webhook certificates; catalogPoll is how
	// often a catalog is read again.
	storageNamespace string
	catalogPoll      time.Duration
}

// bundlePlan is what the check step worked out for a bundle operator.
type bundlePlan struct {
	res     *registryv1.Resolution
	content *registryv1.BundleContent
	// err is why the catalog or the bundle could not be read yet.
	err error
}

func (*bundleBackend) source(op tenancyv1.OperatorSpec) (string, bool) {
	if op.Bundle == nil {
		return "", false
	}
	return registryv1.BundleSourceString(op.Bundle.Catalog), true
}

func (*bundleBackend) installed(st tenancyv1.OperatorStatus) bool { return st.Bundle != nil }

// plan reads the catalog, resolves the bundle and renders it. A catalog
// or bundle that cannot be read yet is not an error of the spec: the plan
// records it and the quota leaves the operator out until it can.
func (b *bundleBackend) plan(ctx context.Context, t *tenancyv1.Tenant, op tenancyv1.OperatorSpec) (operatorPlan, error) {
	src := op.Bundle
	cfg, err := b.fbc.Load(ctx, src.Catalog, t.Spec.Namespaces)
	var refused registryv1.ErrRefusedConfigMap
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
	res, err := registryv1.ResolveBundle(cfg, registryv1.ResolveInput{Pkg: src.Package, Channel: src.Channel, Pinned: op.Version, Running: running, Manual: src.Approval == approvalManual})
	if err != nil {
		return operatorPlan{detail: &bundlePlan{err: err}}, nil
	}
	content, err := b.fbc.Content(ctx, res.Bundle)
	if err != nil {
		return operatorPlan{detail: &bundlePlan{res: res, err: err}}, nil
	}
	clusterScoped, clusterResource := registryv1.MapperScopes(b.mapper)
	rendered, err := registryv1.RenderBundle(registryv1.BundleRender{Tenant: t.Name, Release: op.Name, Namespaces: t.Spec.Namespaces,
		Objects: content.Objects, ClusterScoped: clusterScoped, ClusterResource: clusterResource,
		Certs: func(deployments []string) (*registryv1.WebhookCerts, error) {
			return b.webhookCertsFor(ctx, t, op.Name, deployments)
		}})
	if err != nil {
		if !operatorkit.IsTerminal(err) {
			err = operatorkit.Terminal("InvalidBundle", err)
		}
		return operatorPlan{}, fmt.Errorf("operator %s: bundle %s: %w", op.Name, res.Bundle.Name, err)
	}
	install, err := registryv1.ReleaseChart(src.Package, res, rendered)
	if err != nil {
		return operatorPlan{}, fmt.Errorf("operator %s: bundle %s: %w", op.Name, res.Bundle.Name, err)
	}
	digest, err := rendered.Digest()
	if err != nil {
		return operatorPlan{}, fmt.Errorf("operator %s: bundle %s: %w", op.Name, res.Bundle.Name, err)
	}
	rendered.Analysis.Release = install
	values := map[string]any{"bundle": res.Bundle.Name, "image": content.Image, "manifest": digest}
	return operatorPlan{analysis: rendered.Analysis, detail: &bundlePlan{res: res, content: content},
		release: &helmrelease.Spec{Name: op.Name, Namespace: t.Spec.Namespaces[0], Install: install, Values: values}}, nil
}

func (b *bundleBackend) runsReleases() {}
