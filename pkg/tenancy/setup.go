package tenancy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/sharding"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	helmrelease "opctl.dev/opctl/pkg/tenancy/internal/helmrelease"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// CacheOptions selects the informers the controller needs by label, so
// that it never caches the whole cluster: tenant namespaces and the
// objects in them by the tenant label, Deployments by Helm's label, and
// what each backend adds (olm_setup.go). A shard (o.Shard) caches only
// its own Tenants and the objects labelled with its shard.
func CacheOptions(cfg *rest.Config, o Options) (cache.Options, error) {
	owned := ownedObjects(o.Shard)
	// A release's Deployments: made by Helm and labelled for a tenant,
	// which only the controller and the tenant's actor may label
	// (guardrail tenant-owned-labels); Helm's label alone is anyone's.
	helm, _ := labels.NewRequirement(guard.HelmManagedBy, selection.Equals, []string{"Helm"})
	deployments := owned.Label.Add(*helm)
	opts := cache.Options{
		// managedFields are a large share of every cached object and the
		// controller never reads them.
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Namespace{}:           owned,
			&corev1.ResourceQuota{}:       owned,
			&corev1.LimitRange{}:          owned,
			&rbacv1.RoleBinding{}:         slimmed(owned),
			&rbacv1.Role{}:                slimmed(owned),
			&corev1.ServiceAccount{}:      slimmed(owned),
			&networkingv1.NetworkPolicy{}: owned,
			&appsv1.Deployment{}:          {Label: deployments, Transform: slimDeployment},
			// The API server's addresses, for the tenants' egress policy.
			&corev1.Service{}: {Namespaces: map[string]cache.Config{apiServerNamespace: {}},
				Field: fields.OneTermEqualSelector("metadata.name", apiServerService)},
			&discoveryv1.EndpointSlice{}: {Namespaces: map[string]cache.Config{apiServerNamespace: {}},
				Label: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: apiServerService})},
		}}
	if o.Shard != nil {
		opts.ByObject[&tenancyv1.Tenant{}] = cache.ByObject{Label: sharding.Selector(o.Shard.Ring, o.Shard.ID)}
	}
	for _, bt := range backendTypes {
		if bt.cache == nil {
			continue
		}
		if err := bt.cache(cfg, &opts, owned); err != nil {
			return opts, fmt.Errorf("cache of the %s backend: %w", bt.name, err)
		}
	}
	return opts, nil
}

// ownedObjects selects the objects that carry the tenant label and, for a
// shard, its shard label (settings.ownedLabels).
func ownedObjects(shard *sharding.Options) cache.ByObject {
	hasTenant, _ := labels.NewRequirement(tenancyv1.LabelTenant, selection.Exists, nil)
	sel := labels.NewSelector().Add(*hasTenant)
	if shard != nil {
		sel = sel.Add(sharding.Requirement(shard.Ring, shard.ID))
	}
	return cache.ByObject{Label: sel}
}

// Setup registers the Tenant controller with mgr, whose cache must use
// CacheOptions.
func Setup(mgr ctrl.Manager, opts Options) error {
	opts.defaults()
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the Kubernetes version: %w", err)
	}
	logger := mgr.GetLogger().WithName("helm")
	hc, err := helmrelease.NewHelmClient(mgr.GetConfig(), opts.StorageNamespace, opts.MaxHistory, func(format string, args ...any) {
		logger.V(2).Info(fmt.Sprintf(format, args...))
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(hc.Records); err != nil {
		return err
	}
	c := &Controller{
		client: mgr.GetClient(), reader: mgr.GetAPIReader(), config: mgr.GetConfig(), helm: hc,
		charts: newChartCache(opts.PlainHTTPRegistries), opts: opts,
		kube:     chartutil.KubeVersion{Version: info.GitVersion, Major: info.Major, Minor: info.Minor},
		recorder: mgr.GetEventRecorder("tenancy"),
		catalogs: registryv1.NewCatalogClient(), drift: &helmrelease.DriftMemo{Rv: map[string]string{}, Parsed: map[string]helmrelease.ParsedRelease{}, Swept: map[string]time.Time{}},
		discovery: dc,
	}
	hc.Created = c.drift.Created
	hc.Impersonate = func(cfg *rest.Config, tenant string) *rest.Config {
		return actorConfig(cfg, opts.StorageNamespace, tenant)
	}
	c.releases = releaser{reader: c.reader, clusterRoles: opts.ClusterRoles, engine: &helmrelease.Reconciler{
		Client: c.client, Reader: c.reader, Owned: c.owned(), Helm: hc, Drift: c.drift,
		Recorder: c.recorder, Actor: c.actorClient, ActorName: ActorName, FieldManager: FieldManager,
		UpgradeTimeout: opts.UpgradeTimeout, DriftInterval: opts.DriftInterval,
	}}
	if c.servedCounts, err = quota.ServedCounts(dc); err != nil {
		return err
	}
	for _, bt := range backendTypes {
		b, err := bt.new(c)
		if err != nil {
			return fmt.Errorf("the %s backend: %w", bt.name, err)
		}
		c.backends = append(c.backends, b)
	}
	var guard *sharding.Guard
	if opts.Shard != nil {
		// Every replica reconciles its shard; the leader runs the sharder.
		if guard, err = sharding.Setup(mgr, *opts.Shard, &tenancyv1.Tenant{}); err != nil {
			return err
		}
	}
	r := operatorkit.New(mgr, "tenancy", func() *tenancyv1.Tenant { return &tenancyv1.Tenant{} }, operatorkit.Scoped[*tenancyv1.Tenant, *plan](c),
		operatorkit.Options{FieldManager: FieldManager, MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
			LiveReader: mgr.GetAPIReader(), AggregateEvents: true, NeedLeaderElection: ptr.To(guard == nil)})
	tenants.use(mgr.GetClient())
	// Each watch passes only the changes the controller acts on
	// (predicates.go); a quota's usage and the Deployments' rollout
	// status reach the status bounded (quota_usage.go, rollout_status.go).
	b := r.Builder(mgr).
		Owns(&corev1.Namespace{}, builder.WithPredicates(namespaceChanged)).
		Owns(&corev1.ResourceQuota{}, builder.WithPredicates(quotaChanged)).
		Owns(&corev1.LimitRange{}, builder.WithPredicates(limitRangeChanged)).
		Owns(&rbacv1.RoleBinding{}, builder.WithPredicates(roleBindingChanged)).
		Owns(&networkingv1.NetworkPolicy{}, builder.WithPredicates(networkPolicyChanged)).
		Watches(&corev1.ResourceQuota{}, newQuotaUsage(c.client, opts.QuotaUsageInterval).handler()).
		Watches(&appsv1.Deployment{}, newRolloutStatus(tenantOfNamespace(c.client), rolloutStatusInterval, rolloutStatusMaxInterval).handler()).
		// The release objects drift correction keeps (drift.go).
		Watches(&rbacv1.Role{}, handler.EnqueueRequestsFromMapFunc(tenantOfNamespace(c.client)), builder.WithPredicates(roleChanged)).
		Watches(&rbacv1.RoleBinding{}, handler.EnqueueRequestsFromMapFunc(tenantOfNamespace(c.client)), builder.WithPredicates(roleBindingChanged)).
		Watches(&corev1.ServiceAccount{}, handler.EnqueueRequestsFromMapFunc(tenantOfNamespace(c.client)), builder.WithPredicates(serviceAccountChanged)).
		Watches(&tenancyv1.TenantProfile{}, handler.EnqueueRequestsFromMapFunc(c.tenantsOfProfile), builder.WithPredicates(profileChanged)).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(c.allTenants), builder.WithPredicates(apiServerSliceChanged))
	for _, be := range c.backends {
		b = be.watch(b)
	}
	if guard != nil {
		return b.Complete(guard.Wrap(r))
	}
	return b.Complete(r)
}

// slimDeployment keeps what the controller reads of a Deployment (the
// labels it selects by, replicas and rollout status), not its pod
// template, other labels, finalizers or owners.
func slimDeployment(o any) (any, error) {
	d, ok := o.(*appsv1.Deployment)
	if !ok {
		return o, nil
	}
	d.ManagedFields = nil
	d.Annotations = nil
	d.Finalizers = nil
	d.OwnerReferences = nil
	maps.DeleteFunc(d.Labels, func(k, _ string) bool {
		return k != guard.HelmInstance && k != guard.HelmManagedBy && !strings.HasPrefix(k, "tenancy.opctl.dev/") && !strings.Contains(k, "sharding.opctl.dev/")
	})
	d.Spec = appsv1.DeploymentSpec{Replicas: d.Spec.Replicas}
	// ReplicaFailure says why its pods are refused (quota, LimitRange,
	// Pod Security): the release's status quotes it.
	d.Status.Conditions = slices.DeleteFunc(d.Status.Conditions, func(c appsv1.DeploymentCondition) bool {
		return c.Type != appsv1.DeploymentReplicaFailure || c.Status != corev1.ConditionTrue
	})
	return d, nil
}

// slimmed is by with the slimRelease transform.
func slimmed(by cache.ByObject) cache.ByObject {
	by.Transform = slimRelease
	return by
}

// slimRelease keeps, of an object Helm made (a release's Role, RoleBinding
// or ServiceAccount), its metadata but its annotations: drift correction
// reads the cached copy only for its resourceVersion and reads a changed
// object live. The controller's own objects (the owner RoleBinding, which
// has a controller reference: Helm sets none) stay whole, whatever their
// labels: the Applier compares them with what it would apply.
func slimRelease(o any) (any, error) {
	m, ok := o.(client.Object)
	if !ok {
		return o, nil
	}
	m.SetManagedFields(nil)
	if m.GetLabels()[guard.HelmManagedBy] != "Helm" || metav1.GetControllerOf(m) != nil {
		return o, nil
	}
	m.SetAnnotations(nil)
	switch x := o.(type) {
	case *rbacv1.Role:
		x.Rules = nil
	case *rbacv1.RoleBinding:
		x.Subjects, x.RoleRef = nil, rbacv1.RoleRef{}
	case *corev1.ServiceAccount:
		x.Secrets, x.ImagePullSecrets, x.AutomountServiceAccountToken = nil, nil, nil
	}
	return o, nil
}

// tenantOfNamespace maps an object to the Tenant its namespace belongs to.
func tenantOfNamespace(cl client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		ns := &corev1.Namespace{}
		if err := cl.Get(ctx, client.ObjectKey{Name: o.GetNamespace()}, ns); err != nil {
			return nil
		}
		if t := ns.Labels[tenancyv1.LabelTenant]; t != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: t}}}
		}
		return nil
	}
}

// tenantsOfProfile maps a TenantProfile to the Tenants that use it.
func (c *Controller) tenantsOfProfile(ctx context.Context, o client.Object) []reconcile.Request {
	var tenants tenancyv1.TenantList
	if err := c.client.List(ctx, &tenants); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, t := range tenants.Items {
		if t.Spec.Profile == o.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: t.Name}})
		}
	}
	return reqs
}

// Scheme returns the types the controller reads and writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(tenancyv1.AddToScheme(s))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(s))
	utilruntime.Must(operatorsv1.AddToScheme(s))
	return s
}
