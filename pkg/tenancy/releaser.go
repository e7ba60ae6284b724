package tenancy

import (
	"context"
	"slices"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	helmrelease "opctl.dev/opctl/pkg/tenancy/internal/helmrelease"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// releaser runs the releases of the chart and bundle backends through the
// release engine, each within its tenant's scope.
type releaser struct {
	engine       *helmrelease.Reconciler
	reader       client.Reader
	clusterRoles []string // Options.ClusterRoles: a release's allow-list without a profile
}

// reconcileRelease has the release engine bring one release of t to its
// spec, within the tenant's scope.
func (r releaser) reconcileRelease(ctx context.Context, t *tenancyv1.Tenant, spec helmrelease.Spec, st *tenancyv1.OperatorStatus, p *plan) error {
	scope := r.scope(t, spec.Namespace, spec.Name, p)
	scope.Grants.Gates = guard.TemplateGates(spec.Install)
	return r.engine.Reconcile(ctx, helmrelease.Request{
		Tenant: t, Spec: spec, Status: st,
		Scope:       scope,
		Labels:      p.settings.ownedLabels(t.Name),
		DriftIgnore: driftIgnore(t, spec.Name),
		Requeue:     p.requeueAtMost,
	})
}

// scope is what the release name of t in ns may touch, and grant outside
// its namespaces: the ClusterRoles p allows (nil: the controller's only)
// and get on the operator's own CRDs.
func (r releaser) scope(t *tenancyv1.Tenant, ns, name string, p *plan) guard.ReleaseScope {
	g := guard.GrantPolicy{Roles: r.clusterRoles, Namespaces: t.Spec.Namespaces, Reader: r.reader, Mapper: r.engine.Helm.Mapper}
	if p != nil {
		g.Roles, g.Exposure = p.settings.ClusterRoles, p.settings.Services
		g.Tenant, g.LockNetworkPolicies = t.Name, p.settings.LockNetworkPolicies
		for _, op := range p.operators {
			if op.spec.Name == name && op.analysis != nil {
				g.Crds = crdNames(op.analysis)
				crds := op.analysis.CRDs
				g.Kinds = func(ctx context.Context) ([]string, error) { return guard.OwnKinds(ctx, r.reader, crds) }
			}
		}
	}
	scope := guard.ReleaseScope{Tenant: t.Name, Release: name, Namespace: ns, Namespaces: t.Spec.Namespaces, Mapper: r.engine.Helm.Mapper, Reader: r.reader, Grants: g}
	if p != nil {
		scope.Leaving = p.leaving
	}
	return scope
}

// recorded lists the releases of t the controller's storage records,
// wherever recorded, whose name is one of names (every one for nil): what
// the controller installed for t, whatever its spec says now.
func (r releaser) recorded(ctx context.Context, t *tenancyv1.Tenant, names []string) ([]records.Recorded, error) {
	all, err := r.engine.Releases(ctx, t.Name)
	if err != nil || names == nil {
		return all, err
	}
	return slices.DeleteFunc(all, func(rec records.Recorded) bool { return !slices.Contains(names, rec.Name) }), nil
}

// uninstallAll uninstalls the named releases of t (every one for nil),
// wherever recorded. Objects their last revisions hold in the namespaces
// t is leaving, or in namespaces deleted meanwhile, go too.
func (r releaser) uninstallAll(ctx context.Context, t *tenancyv1.Tenant, names []string) error {
	recorded, err := r.recorded(ctx, t, names)
	if err != nil || len(recorded) == 0 {
		return err
	}
	leaving, err := leavingNamespaces(ctx, r.reader, t)
	if err != nil {
		return err
	}
	for _, rec := range recorded {
		scope := r.scope(t, rec.Namespace, rec.Name, nil)
		scope.Leaving = leaving
		if err := r.engine.Uninstall(ctx, t, rec.Namespace, rec.Name, scope); err != nil {
			return err
		}
	}
	return nil
}

// handBackAll moves the records of the named releases of t (every one for
// nil) back to the namespaces they are recorded for: the owners take the
// releases over.
func (r releaser) handBackAll(ctx context.Context, t *tenancyv1.Tenant, names []string) error {
	recorded, err := r.recorded(ctx, t, names)
	if err != nil {
		return err
	}
	return r.engine.HandBack(t, recorded)
}
