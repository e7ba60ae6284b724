package tenancy

import (
	"fmt"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
)

func init() {
	registerBackend(backendType{name: "olm", cache: olmCache, new: func(c *Controller) (backend, error) {
		served, err := servesOLM(c.config)
		return newOLMBackend(tenantEvents{c.recorder}, c.client, c.reader, c.owned(), c.catalogs, c.discovery, c.storedObjects(), served), err
	}})
}

// olmCache caches, where the cluster serves OLM's APIs, what the
// controller creates by its label; the CSVs and InstallPlans OLM creates
// carry no label of ours, so they are cached cluster-wide with only the
// fields the controller reads. A controller started before OLM was
// installed needs a restart to serve OLM tenants.
func olmCache(cfg *rest.Config, opts *cache.Options, owned cache.ByObject) error {
	olm, err := servesOLM(cfg)
	if err != nil || !olm {
		return err
	}
	opts.ByObject[&operatorsv1alpha1.Subscription{}] = owned
	opts.ByObject[&operatorsv1.OperatorGroup{}] = owned
	opts.ByObject[&operatorsv1alpha1.CatalogSource{}] = owned
	opts.ByObject[&operatorsv1alpha1.ClusterServiceVersion{}] = cache.ByObject{Transform: slimCSV}
	opts.ByObject[&operatorsv1alpha1.InstallPlan{}] = cache.ByObject{Transform: slimInstallPlan}
	return nil
}

// watch owns the OperatorGroups and CatalogSources and watches the
// Subscriptions, InstallPlans and CSVs of tenant namespaces, each for the
// changes the controller acts on (predicates.go).
func (c *olmBackend) watch(b *builder.Builder) *builder.Builder {
	if !c.served {
		return b
	}
	b = b.Owns(&operatorsv1.OperatorGroup{}, builder.WithPredicates(operatorGroupChanged)).
		Owns(&operatorsv1alpha1.CatalogSource{}, builder.WithPredicates(catalogSourceChanged))
	mapper := tenantOfNamespace(c.client)
	for _, w := range []struct {
		obj     client.Object
		changed predicate.Predicate
	}{
		{&operatorsv1alpha1.Subscription{}, subscriptionChanged},
		{&operatorsv1alpha1.InstallPlan{}, installPlanChanged},
	} {
		b = b.Watches(w.obj, handler.EnqueueRequestsFromMapFunc(mapper), builder.WithPredicates(w.changed))
	}
	// A CSV's phase follows OLM's Deployment, which the tenant's owners
	// may edit or delete at will: its updates are coalesced per Tenant.
	return b.Watches(&operatorsv1alpha1.ClusterServiceVersion{}, boundedUpdates(mapper, newCoalescer(rolloutStatusInterval, rolloutStatusMaxInterval)),
		builder.WithPredicates(csvChanged))
}

// servesOLM reports whether the cluster serves OLM's APIs; the controller
// watches them only then, and refuses OLM sources otherwise.
func servesOLM(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	_, err = dc.ServerResourcesForGroupVersion(operatorsv1alpha1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering OLM's APIs: %w", err)
	}
	return true, nil
}

// slimCSV keeps what the controller reads of a CSV: its version and phase.
func slimCSV(o any) (any, error) {
	csv, ok := o.(*operatorsv1alpha1.ClusterServiceVersion)
	if !ok {
		return o, nil
	}
	csv.ManagedFields = nil
	csv.Annotations = nil
	csv.Spec = operatorsv1alpha1.ClusterServiceVersionSpec{Version: csv.Spec.Version}
	csv.Status = operatorsv1alpha1.ClusterServiceVersionStatus{Phase: csv.Status.Phase, Reason: csv.Status.Reason, Message: csv.Status.Message}
	return csv, nil
}

// slimInstallPlan keeps an InstallPlan's spec, phase and message, not its
// steps.
func slimInstallPlan(o any) (any, error) {
	plan, ok := o.(*operatorsv1alpha1.InstallPlan)
	if !ok {
		return o, nil
	}
	plan.ManagedFields = nil
	plan.Status = operatorsv1alpha1.InstallPlanStatus{Phase: plan.Status.Phase, Message: operatorkit.BoundText(plan.Status.Message)}
	return plan, nil
}

// newOLMBackend is the OLM v0 backend: it subscribes through client and
// reader (owned for the objects labelled for a tenant), reads bundles
// from catalogs, and acts only when served, the cluster serving OLM's
// APIs.
func newOLMBackend(events tenantEvents, cl client.Client, reader client.Reader, owned ownedReader, catalogs *registryv1.CatalogClient, dc discovery.DiscoveryInterface, stored storedObjects, served bool) *olmBackend {
	return &olmBackend{tenantEvents: events, client: cl, reader: reader, owned: owned, catalogs: catalogs, discovery: dc, stored: stored, served: served}
}

// apiServed reads the API server's discovery for group/version, uncached.
func (c *olmBackend) apiServed(group, version, resource string) (bool, error) {
	return guard.ServedBy(c.discovery, group, version, resource)
}
