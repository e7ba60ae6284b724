package tenancy

import (
	"context"

	helmrelease "opctl.dev/opctl/pkg/tenancy/internal/helmrelease"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// backend installs the operators of one source (spec.operators[].chart,
// .olm or .bundle). The controller runs the steps of every backend in
// turn; each backend keeps its steps in files named for it and for the
// step: <backend>_check.go, _build.go, _repair.go, _status.go,
// _finalize.go and _setup.go.
type backend interface {
	// source reports whether op uses this backend, and names op's source
	// for a profile's allowedSources.
	source(op tenancyv1.OperatorSpec) (string, bool)
	// installed reports whether st is the status of an operator this
	// backend installed, for operators gone from the spec.
	installed(st tenancyv1.OperatorStatus) bool
	// plan is the check step: what to install and the quota input
	// (operatorPlan.analysis, nil while it cannot be known yet). A spec
	// that cannot work is a Terminal error.
	plan(ctx context.Context, t *tenancyv1.Tenant, op tenancyv1.OperatorSpec) (operatorPlan, error)
	// objects is the build step: the objects the backend adds to the
	// tenant's namespaces, applied and owned with them.
	objects(t *tenancyv1.Tenant, s settings) []client.Object
	// reconcile is the repair step, after the shared CRDs are applied:
	// install, upgrade, roll back or recover op, and report it in st.
	reconcile(ctx context.Context, s *plan, op operatorPlan, st *tenancyv1.OperatorStatus) error
	// remove uninstalls the named operators (deletion policy Delete).
	remove(ctx context.Context, t *tenancyv1.Tenant, names []string) error
	// disconnect hands the named operators over to the tenant's owners
	// (deletion policy Orphan) and returns the objects to disconnect.
	disconnect(ctx context.Context, t *tenancyv1.Tenant, names []string) ([]client.Object, error)
	// watch adds the watches of the objects the backend reads.
	watch(b *builder.Builder) *builder.Builder
}

// releaseBackend marks the backends whose operators run as Helm releases
// through the shared release engine (chart, bundle): the controller knows
// their releases from its storage (releaser.recorded), and removes one no
// operator of the spec runs.
type releaseBackend interface{ runsReleases() }

// operatorPlan is what a backend's check step worked out for one operator.
type operatorPlan struct {
	spec    tenancyv1.OperatorSpec
	backend backend
	// analysis is the quota input and the shared CRDs; nil while a
	// catalog cannot be read.
	analysis *quota.Analysis
	// release is the Helm release the operator runs as, for the backends
	// that install through the shared release path.
	release *helmrelease.Spec
	// detail is the backend's own plan.
	detail any
}

// backendType registers a backend: a name (the spec field), how to make
// it for a Controller, and what it adds to the cache options.
type backendType struct {
	name string
	// cache adds the informers the backend needs; optional. owned
	// selects the objects the controller labels for a tenant (of this
	// shard, when sharded).
	cache func(cfg *rest.Config, opts *cache.Options, owned cache.ByObject) error
	new   func(c *Controller) (backend, error)
}

var backendTypes []backendType

// registerBackend adds a backend; each backend registers itself in its
// _setup.go file.
func registerBackend(bt backendType) { backendTypes = append(backendTypes, bt) }

// backendFor returns op's backend and its source string.
func (c *Controller) backendFor(op tenancyv1.OperatorSpec) (backend, string) {
	for _, b := range c.backends {
		if src, ok := b.source(op); ok {
			return b, src
		}
	}
	return nil, ""
}

// backendNames lists the registered sources, for error messages.
func backendNames() []string {
	names := make([]string, len(backendTypes))
	for i, bt := range backendTypes {
		names[i] = bt.name
	}
	return names
}
