package tenancy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	helmrelease "opctl.dev/opctl/pkg/tenancy/internal/helmrelease"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/packaging/contract"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// chartBackend installs operators from charts (spec.operators[].chart) as
// Helm releases of the tenant.
type chartBackend struct {
	releases releaser
	charts   *chartCache
	kube     chartutil.KubeVersion // what charts render for

	mu       sync.Mutex
	analyses map[string]*quota.Analysis // by chart and user values
}

// newChartBackend is the chart backend of releases, loading charts
// through charts and rendering them for kube.
func newChartBackend(releases releaser, charts *chartCache, kube chartutil.KubeVersion) *chartBackend {
	return &chartBackend{releases: releases, charts: charts, kube: kube, analyses: map[string]*quota.Analysis{}}
}

func (*chartBackend) source(op tenancyv1.OperatorSpec) (string, bool) {
	if op.Chart == nil {
		return "", false
	}
	if op.Chart.Path != "" {
		return op.Chart.Path, true
	}
	return op.Chart.Repository, true
}

// installed: an operator that no other backend claims is a release.
func (*chartBackend) installed(st tenancyv1.OperatorStatus) bool {
	return st.OLM == nil && st.Bundle == nil
}

// plan loads the chart, renders it for the analysis and sets the release
// values.
func (h *chartBackend) plan(ctx context.Context, t *tenancyv1.Tenant, op tenancyv1.OperatorSpec) (operatorPlan, error) {
	lc, err := h.charts.Load(ctx, op.Chart)
	if err != nil {
		return operatorPlan{}, fmt.Errorf("operator %s: %w", op.Name, err)
	}
	if err := namespacedManager(lc, op.Name, len(t.Spec.Namespaces)); err != nil {
		return operatorPlan{}, err
	}
	values, err := releaseValues(op, t.Spec.Namespaces)
	if err != nil {
		return operatorPlan{}, operatorkit.Terminal("InvalidValues", fmt.Errorf("operator %s: %w", op.Name, err))
	}
	a, err := h.analysis(lc, op)
	if err != nil {
		return operatorPlan{}, err
	}
	return operatorPlan{analysis: a, release: &helmrelease.Spec{Name: op.Name, Namespace: t.Spec.Namespaces[0], Install: a.Release, Values: values}}, nil
}

// analysis renders the chart with CRDs and reads it. The result does not
// depend on the tenant's namespaces, so it is computed once per chart and
// user values, not once per tenant.
func (c *chartBackend) analysis(lc *loadedChart, op tenancyv1.OperatorSpec) (*quota.Analysis, error) {
	key := lc.key
	if op.Values != nil {
		key += "|" + string(op.Values.Raw)
	}
	c.mu.Lock()
	a, ok := c.analyses[key]
	c.mu.Unlock()
	if ok {
		return a, nil
	}
	values, err := releaseValues(op, []string{"tenant"})
	if err != nil {
		return nil, operatorkit.Terminal("InvalidValues", fmt.Errorf("operator %s: %w", op.Name, err))
	}
	withCRDs := chartutil.CoalesceTables(map[string]any{"crds": map[string]any{"install": true}}, values)
	rendered, err := lc.Render(op.Name, "tenant", withCRDs, c.kube)
	if err != nil {
		return nil, operatorkit.Terminal("RenderFailed", fmt.Errorf("operator %s: %w", op.Name, err))
	}
	var objs []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		objs = append(objs, rendered[name]...)
	}
	if a, err = quota.Analyze(objs); err != nil {
		return nil, operatorkit.Terminal("InvalidPlatformAsCode", fmt.Errorf("operator %s: %w", op.Name, err))
	}
	a.Release = lc.withoutCRDs(rendered)
	c.mu.Lock()
	c.analyses[key] = a
	c.mu.Unlock()
	return a, nil
}

// releaseValues are the user's values with what the controller decides:
// namespace-scoped RBAC, the tenant namespaces watched, no CRDs.
func releaseValues(op tenancyv1.OperatorSpec, namespaces []string) (map[string]any, error) {
	user := map[string]any{}
	if op.Values != nil && len(op.Values.Raw) > 0 {
		if err := json.Unmarshal(op.Values.Raw, &user); err != nil {
			return nil, fmt.Errorf("spec.operators[].values: %w", err)
		}
	}
	ns := make([]any, len(namespaces))
	for i, n := range namespaces {
		ns[i] = n
	}
	forced := map[string]any{
		"rbac":            map[string]any{"scope": "namespace"},
		"watchNamespaces": ns,
		"crds":            map[string]any{"install": false},
	}
	return chartutil.CoalesceTables(forced, user), nil
}

// namespacedManager refuses, before anything is installed, a chart whose
// manager opctl package found watching every namespace whatever it is told
// (it reads no watch-namespace setting: the contract's install modes lack
// OwnNamespace), or reading a single namespace for a tenant of several.
// A chart without the annotations (not made by opctl package), or whose
// manager's code was not found (watch-namespace unknown), is taken as it
// is.
func namespacedManager(lc *loadedChart, operator string, namespaces int) error {
	ann := lc.chart.Metadata.Annotations
	v, ok := ann[contract.InstallModes]
	if !ok || ann[contract.WatchNamespace] == contract.WatchUnknown {
		return nil
	}
	modes := contract.ParseInstallModes(v)
	switch {
	case !modes[contract.OwnNamespace]:
		return operatorkit.Terminal("InstallModeNotSupported", fmt.Errorf("operator %s: its manager watches all namespaces (install modes %s: it reads no watch-namespace setting), "+
			"so one instance per tenant would act in every tenant's namespaces; it can only be installed once for the cluster", operator, v))
	case namespaces > 1 && !modes[contract.MultiNamespace]:
		return operatorkit.Terminal("InstallModeNotSupported", fmt.Errorf("operator %s: its manager watches one namespace (install modes %s), and the tenant has %d; give the tenant one namespace", operator, v, namespaces))
	}
	return nil
}

func (h *chartBackend) runsReleases() {}
