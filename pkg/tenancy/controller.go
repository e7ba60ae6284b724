package tenancy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	helmrelease "opctl.dev/opctl/pkg/tenancy/internal/helmrelease"

	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/sharding"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// FieldManager is the server-side apply manager of the controller.
const FieldManager = "opctl-tenancy"

// Options tune the controller.
type Options struct {
	// MaxConcurrentReconciles bounds parallel Tenant reconciles.
	MaxConcurrentReconciles int
	// UpgradeTimeout is how long an installed or upgraded release may take
	// to become ready before an upgrade is rolled back.
	UpgradeTimeout time.Duration
	// MaxHistory bounds the revisions Helm keeps per release.
	MaxHistory int
	// DeleteUnusedCRDs removes a shared CRD when the last Tenant using it
	// is deleted (and so every custom resource of it).
	DeleteUnusedCRDs bool
	// PlainHTTPRegistries pulls oci:// charts over plain HTTP.
	PlainHTTPRegistries bool
	// CatalogPollInterval is how often the bundle source reads a catalog
	// again, to follow its channels (default 1m).
	CatalogPollInterval time.Duration
	// DriftInterval is how often the release objects no informer follows
	// (every kind but Deployments, Roles, RoleBindings and
	// ServiceAccounts) are read and compared with their release (default
	// 10m): a bounded poll, not an informer per kind.
	DriftInterval time.Duration
	// QuotaUsageInterval bounds the reconciles a change of a quota's
	// usage alone brings (an owner creating or deleting objects): one at
	// once, then at most one at the end of each interval (default 30s),
	// so the usage a Tenant's status shows lags its quota by at most this
	// (quota_usage.go).
	QuotaUsageInterval time.Duration
	// StorageNamespace holds the Helm release records of every tenant,
	// where no tenant can read or write (default opctl-system).
	StorageNamespace string
	// ClusterRoles names ClusterRoles whose rules every Tenant's operators
	// may hold cluster-wide (a TenantProfile adds its own): the allow-list
	// of grants.go.
	ClusterRoles []string
	// ClusterRolesConfigMap names a ConfigMap in StorageNamespace whose
	// data key clusterRoles lists (comma- or line-separated) more of them:
	// charts/opctl's tenantClusterRoles value, which the chart also binds
	// to the controller. Read at every reconcile, so a helm upgrade of the
	// value needs no restart.
	ClusterRolesConfigMap string
	// Shard, when set, makes this replica one shard of a ring: it
	// reconciles only the Tenants the ring assigns it (package sharding).
	Shard *sharding.Options
}

// DefaultStorageNamespace is where release records live when
// Options.StorageNamespace is empty.
const DefaultStorageNamespace = "opctl-system"

func (o *Options) defaults() {
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 16
	}
	if o.UpgradeTimeout <= 0 {
		o.UpgradeTimeout = 5 * time.Minute
	}
	if o.MaxHistory <= 0 {
		o.MaxHistory = 5
	}
	if o.CatalogPollInterval <= 0 {
		o.CatalogPollInterval = time.Minute
	}
	if o.DriftInterval <= 0 {
		o.DriftInterval = 10 * time.Minute
	}
	if o.QuotaUsageInterval <= 0 {
		o.QuotaUsageInterval = 30 * time.Second
	}
	if o.StorageNamespace == "" {
		o.StorageNamespace = DefaultStorageNamespace
	}
}

// Controller is the operatorkit ScopedHandler of Tenant: Check works
// out a plan, which the later steps of the same reconcile receive.
type Controller struct {
	client   client.Client
	reader   client.Reader
	config   *rest.Config
	helm     *helmrelease.HelmClient
	charts   *chartCache
	catalogs *registryv1.CatalogClient
	backends []backend
	kube     chartutil.KubeVersion
	opts     Options
	recorder events.EventRecorder

	// releases is the release engine of the chart and bundle backends;
	// helm and drift are its Helm client and drift memo.
	releases releaser
	drift    *helmrelease.DriftMemo
	// discovery reads what the API server serves, uncached (served).
	discovery discovery.DiscoveryInterface
	// servedCounts are the shipped default quota's counts of kinds a
	// cluster may not serve, for those it served at start (servedCounts).
	servedCounts corev1.ResourceList
	// finalized holds the UIDs of the Tenants whose Finalize is done.
	finalized sync.Map
	// settleFailing holds, by Tenant UID, when settleLeaving first failed.
	settleFailing sync.Map
	// held memoizes what of the named ClusterRoles it does not hold.
	held heldRoles
	// namedRoles are the platform's ClusterRoles as last read
	// (platformRoles), for the deletion path, which has no plan.
	namedRoles atomic.Pointer[[]string]
	// rbsDeleted holds, by namespace being handed back, when its
	// RoleBindings were last deleted (handBackAll).
	rbsDeleted sync.Map
}

// plan is the scope of one reconcile: what Check worked out for a Tenant.
type plan struct {
	tenant    *tenancyv1.Tenant
	settings  settings
	operators []operatorPlan
	quotas    map[string]quota.Quota // by namespace
	// quotaInputs are the quotas' inputs, by namespace, less the
	// controller's own objects, which Build counts.
	quotaInputs map[string]quota.Input
	requeue     time.Duration
	// leaving are the namespaces t is leaving (leavingNamespaces).
	leaving []string
}

// Check reads the profile and plans every operator with its backend,
// then computes the quotas. A spec that cannot work is a Terminal error.
func (c *Controller) Check(ctx context.Context, t *tenancyv1.Tenant) (*plan, error) {
	var profile *tenancyv1.TenantProfile
	if t.Spec.Profile != "" {
		profile = &tenancyv1.TenantProfile{}
		if err := c.client.Get(ctx, client.ObjectKey{Name: t.Spec.Profile}, profile); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, operatorkit.Terminal("ProfileNotFound", fmt.Errorf("TenantProfile %s does not exist: create it or fix spec.profile", t.Spec.Profile))
			}
			return nil, err
		}
	}
	p := &plan{tenant: t, settings: effectiveSettings(t, profile), quotas: map[string]quota.Quota{}, quotaInputs: map[string]quota.Input{}}
	if profile == nil || profile.Spec.DefaultQuota == nil {
		maps.Copy(p.settings.DefaultQuota.Hard, c.servedCounts)
	}
	named, err := c.platformRoles(ctx)
	if err != nil {
		return nil, err
	}
	p.settings.ClusterRoles = append(named, p.settings.ClusterRoles...)
	p.settings.Actor = c.actorUser(t.Name)
	if err := c.checkHeld(ctx, p.settings.ClusterRoles); err != nil {
		return nil, err
	}
	leaving, err := leavingNamespaces(ctx, c.reader, t)
	if err != nil {
		return nil, err
	}
	p.leaving = leaving
	if c.opts.Shard != nil {
		p.settings.ShardLabel = sharding.ShardLabel(c.opts.Shard.Ring)
		p.settings.Shard = t.Labels[p.settings.ShardLabel]
	}
	if p.settings.NetworkPolicy {
		api, err := c.apiServerEndpoints(ctx)
		if err != nil {
			return nil, err
		}
		p.settings.APIServer = api
	}
	for _, op := range t.Spec.Operators {
		b, src := c.backendFor(op)
		if b == nil {
			return nil, operatorkit.Terminal("NoSource", fmt.Errorf("operator %s: set one of spec.operators[].%s", op.Name, strings.Join(backendNames(), ", .")))
		}
		if profile != nil && !allowed(src, profile.Spec.AllowedSources) {
			return nil, operatorkit.Terminal("SourceNotAllowed", fmt.Errorf("operator %s: profile %s does not allow the source %s", op.Name, profile.Name, src))
		}
		planned, err := b.plan(ctx, t, op)
		if err != nil {
			return nil, err
		}
		planned.spec, planned.backend = op, b
		p.operators = append(p.operators, planned)
	}
	for i, ns := range t.Spec.Namespaces {
		d := p.settings.DefaultQuota
		in := quota.Input{HeadroomPercent: p.settings.HeadroomPercent,
			NoNodePorts: !p.settings.Services.AllowNodePorts, NoLoadBalancers: !p.settings.Services.AllowLoadBalancers,
			Defaults: d.Hard, ContainerRequest: d.DefaultRequest, ContainerLimit: d.Default, Objects: maps.Clone(quota.BuiltIn)}
		if t.Spec.Quota != nil {
			in.Overrides = t.Spec.Quota.Hard
		}
		for _, op := range p.operators {
			if op.analysis == nil {
				continue
			}
			if i == 0 {
				in.Workloads = append(in.Workloads, op.analysis.Workloads...)
				for name, n := range op.analysis.Counts {
					in.Objects[name] += n
				}
			}
			for _, o := range op.analysis.Operands {
				o.Instances = int64(instances(op.spec))
				in.Operands = append(in.Operands, o)
			}
		}
		p.quotaInputs[ns] = in
		p.quotas[ns] = quota.Compute(in)
	}
	return p, nil
}

func instances(op tenancyv1.OperatorSpec) int32 {
	if op.Instances == 0 {
		return 1
	}
	return op.Instances
}

// allowed reports whether a source starts with one of the allowed
// prefixes; none allows every source.
func allowed(s string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, a := range prefixes {
		if strings.HasPrefix(s, a) {
			return true
		}
	}
	return false
}

// Build returns the namespaces, the objects in each and the backends'
// objects. On deletion there is no plan: names are enough.
func (c *Controller) Build(ctx context.Context, t *tenancyv1.Tenant, p *plan) ([]client.Object, error) {
	kinds, err := c.actorKinds(ctx, c.client, p)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &plan{tenant: t, settings: c.deletionSettings(t), quotas: map[string]quota.Quota{}}
	}
	var objs []client.Object
	for _, ns := range t.Spec.Namespaces {
		objs = append(objs, namespaceObjects(t, ns, p.settings, p.quotas[ns])...)
	}
	objs = append(objs, actorObjects(t, p.settings, c.opts.StorageNamespace, kinds)...)
	for _, b := range c.backends {
		objs = append(objs, b.objects(t, p.settings)...)
	}
	p.countOwnObjects(objs, c.client.Scheme())
	return objs, nil
}

// countOwnObjects adds the controller's objects in each namespace to its
// quota's object counts, and sets the quotas' figures.
func (p *plan) countOwnObjects(objs []client.Object, scheme *runtime.Scheme) {
	counts := map[string]map[corev1.ResourceName]int64{}
	for _, o := range objs {
		if in, ok := p.quotaInputs[o.GetNamespace()]; ok {
			if counts[o.GetNamespace()] == nil {
				counts[o.GetNamespace()] = maps.Clone(in.Objects)
			}
			if gvk, err := apiutil.GVKForObject(o, scheme); err == nil {
				quota.ObjectCounts(counts[o.GetNamespace()], gvk.GroupKind(), 1)
			}
		}
	}
	for _, o := range objs {
		rq, ok := o.(*corev1.ResourceQuota)
		if !ok || rq.Name != QuotaName {
			continue
		}
		in := p.quotaInputs[rq.Namespace]
		in.Objects = counts[rq.Namespace]
		q := quota.Compute(in)
		p.quotas[rq.Namespace], rq.Spec.Hard = q, q.Hard
	}
}

// deletionSettings are t's settings when there is no plan (deletion):
// without its profile, with the controller's named ClusterRoles.
func (c *Controller) deletionSettings(t *tenancyv1.Tenant) settings {
	s := effectiveSettings(t, nil)
	s.ClusterRoles = slices.Clone(c.opts.ClusterRoles)
	if named := c.namedRoles.Load(); named != nil {
		s.ClusterRoles = slices.Clone(*named)
	}
	s.Actor = c.actorUser(t.Name)
	return s
}

// Mutate has nothing to add: Build sets every field.
func (c *Controller) Mutate(context.Context, *tenancyv1.Tenant, *plan, []client.Object) error {
	return nil
}

// quotaStatus reads the live quota of each namespace. It reports the
// namespaces whose quota the quota controller has not counted yet: until
// then the API server refuses the objects the quota limits.
func (c *Controller) quotaStatus(ctx context.Context, t *tenancyv1.Tenant, p *plan) (out []tenancyv1.NamespaceStatus, syncing []string) {
	for _, ns := range t.Spec.Namespaces {
		st := tenancyv1.NamespaceStatus{Name: ns}
		if p != nil {
			st.Derivation = p.quotas[ns].Derivation
		}
		q := &corev1.ResourceQuota{}
		if err := c.getOwned(ctx, client.ObjectKey{Namespace: ns, Name: QuotaName}, q); err == nil {
			st.Hard, st.Used = q.Status.Hard, q.Status.Used
		}
		if !quotaCounted(q) {
			syncing = append(syncing, ns)
		}
		out = append(out, st)
	}
	return out, syncing
}

// quotaCounted reports whether the quota controller has counted every
// resource of the quota's spec.
func quotaCounted(q *corev1.ResourceQuota) bool {
	for name, h := range q.Spec.Hard {
		sh, ok := q.Status.Hard[name]
		if _, used := q.Status.Used[name]; !ok || !used || sh.Cmp(h) != 0 {
			return false
		}
	}
	return true
}

// served reads the API server's discovery for group/version, uncached.
func (c *Controller) served(group, version, resource string) (bool, error) {
	return guard.ServedBy(c.discovery, group, version, resource)
}

// The controller's permissions, generated into config/rbac/role.yaml by
// `make generate`. docs/tenancy.md explains each one. They are what the
// controller uses and no more: it writes with patches and server-side
// applies (update only for records, certificates, InstallPlan status and
// the ClusterRoles of OLM plans), and reads
// what it caches through its informers (no get). After the whole suite,
// a check fails on any right none of its requests used
// (rights_exercised_test.go).
//
// Tenants and profiles: read, the finalizer and the status.
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants,verbs=list;watch;patch
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants/status,verbs=patch
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenants/finalizers,verbs=update
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=tenantprofiles,verbs=list;watch
//
// Tenant namespaces and what the controller puts in each: the quota, the
// LimitRange, the NetworkPolicies, the owners' and the actor's bindings,
// and the actor's Roles (actor.go). The controller grants only what it
// holds, with three exceptions, each by name: it binds admin (to the
// owners and the actor), and writes and binds the Role tenant-kinds, which
// grants the operators' own kinds, whose CRDs it installs for the tenants
// and does not use itself. RBAC cannot scope escalate to namespaces that
// do not exist yet (a RoleBinding granting it in each new tenant namespace
// would need bind on its role everywhere), so the guardrail
// tenant-kinds-role admits rules in that Role only in a namespace labelled
// for the Role's tenant. The platform's named ClusterRoles are bound to
// the controller too, so that it may pass them on.
// +kubebuilder:rbac:groups="",resources=namespaces;resourcequotas;limitranges,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=admin
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=bind;escalate,resourceNames=tenant-kinds
//
// The API server's addresses (the kubernetes Service and its
// EndpointSlices), which tenant egress policies allow.
// +kubebuilder:rbac:groups="",resources=services,verbs=list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list;watch
//
// The shipped baseline of what tenants' operators may hold cluster-wide
// (baseline.ClusterRules), which the controller passes on in the
// ClusterRoles of releases and so holds; it uses none of it itself.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
//
// Shared CRDs of the tenants' operators.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;create;patch;delete
//
// Helm releases. Each tenant's actor, a ServiceAccount of the controller's
// namespace, writes the objects of its releases in the tenant's namespaces
// (actor.go): the controller impersonates it, and only reads what drift
// correction and readiness follow. The release records and the webhook
// certificates are Secrets of the controller's namespace.
// +kubebuilder:rbac:groups="",namespace=opctl-system,resources=serviceaccounts,verbs=impersonate;create;patch;delete
// +kubebuilder:rbac:groups="",namespace=opctl-system,resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch
//
// The ServiceAccount an OLM tenant's OperatorGroup names, tenant-operators
// in the tenant's first namespace (olm_build.go): created, and changed or
// deleted by that name only.
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=create
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=patch;delete,resourceNames=tenant-operators
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch
//
// A release's cluster-scoped RBAC, which the grant policy (grants.go) has
// checked, is the controller's to write: the actor holds nothing outside
// the tenant's namespaces. Its ClusterRoles are bound cluster-wide and so
// hold only what the named ClusterRoles cover, which the controller holds;
// the render guard makes the release's other ClusterRoles Roles in the
// tenant's namespaces (localize.go), which the actor writes.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=get;list;create;patch;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=get;create;patch;update;delete
//
// Catalog ConfigMaps, read one by one, outside tenant namespaces.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
//
// The webhook configurations of bundle operators, named for the tenant
// and the release and narrowed to the tenant's namespaces.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;create;patch;delete
//
// The guardrail policies (config/guardrails) let whoever holds this
// verb through: the controller and cluster admins, and a tenant's actor
// in the tenant's namespaces for the objects of its releases (the Role the
// controller gives it holds the verb there). The resource is virtual;
// nothing serves it.
// +kubebuilder:rbac:groups=tenancy.opctl.dev,resources=guardrails,verbs=bypass
//
// Events for every action.
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch
//
// OLM installs: the OperatorGroup, CatalogSource and Subscription of each
// OLM tenant; InstallPlans to approve them, and their status to mark the
// CSV and the cluster-wide RBAC the controller wrote for them
// (olm_rbac.go); CSVs to create them so, read their phase and delete them
// with the tenant. OLM creates the
// operator's Deployment and namespaced RBAC as the OperatorGroup's
// ServiceAccount.
// +kubebuilder:rbac:groups=operators.coreos.com,resources=operatorgroups;catalogsources;subscriptions,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=operators.coreos.com,resources=installplans,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=operators.coreos.com,resources=installplans/status,verbs=update
// +kubebuilder:rbac:groups=operators.coreos.com,resources=clusterserviceversions,verbs=get;list;watch;create;delete
