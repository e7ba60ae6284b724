package tenancy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
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
	// StorageNamespace holds the Helm release records of every tenant,
	// where no tenant can read or write (default opctl-system).
	StorageNamespace string
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
	if o.StorageNamespace == "" {
		o.StorageNamespace = DefaultStorageNamespace
	}
}

// Controller is the operatorkit Handler of Tenant.
type Controller struct {
	client   client.Client
	reader   client.Reader
	helm     *helmClient
	charts   *chartCache
	catalogs *catalogClient
	olmAPI   bool // the cluster serves OLM's operators.coreos.com APIs
	kube     chartutil.KubeVersion
	opts     Options
	recorder events.EventRecorder

	drift driftMemo

	mu       sync.Mutex
	plans    map[string]*plan     // by Tenant UID, for one reconcile
	analyses map[string]*analysis // by chart and user values
}

// plan is what Check worked out for a Tenant.
type plan struct {
	settings  settings
	operators []operatorPlan
	quotas    map[string]Quota // by namespace
	requeue   time.Duration
}

type operatorPlan struct {
	spec     tenancyv1.OperatorSpec
	chart    *loadedChart
	values   map[string]any
	analysis *analysis // nil while an OLM catalog cannot be read
	olm      *olmPlan
}

func (c *Controller) setPlan(t *tenancyv1.Tenant, p *plan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plans[string(t.UID)] = p
}

func (c *Controller) plan(t *tenancyv1.Tenant) *plan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.plans[string(t.UID)]
}

func (c *Controller) dropPlan(t *tenancyv1.Tenant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.plans, string(t.UID))
}

// Check reads the profile and the charts, renders them and computes the
// quotas. A spec that cannot work is a Terminal error.
func (c *Controller) Check(ctx context.Context, t *tenancyv1.Tenant) error {
	var profile *tenancyv1.TenantProfile
	if t.Spec.Profile != "" {
		profile = &tenancyv1.TenantProfile{}
		if err := c.client.Get(ctx, client.ObjectKey{Name: t.Spec.Profile}, profile); err != nil {
			if apierrors.IsNotFound(err) {
				return operatorkit.Terminal("ProfileNotFound", fmt.Errorf("TenantProfile %s does not exist: create it or fix spec.profile", t.Spec.Profile))
			}
			return err
		}
	}
	p := &plan{settings: effectiveSettings(t, profile), quotas: map[string]Quota{}}
	if p.settings.NetworkPolicy {
		api, err := c.apiServerEndpoints(ctx)
		if err != nil {
			return err
		}
		p.settings.APIServer = api
	}
	for _, op := range t.Spec.Operators {
		if op.OLM != nil {
			if profile != nil && !allowed(olmSourceString(op.OLM), profile.Spec.AllowedSources) {
				return operatorkit.Terminal("SourceNotAllowed", fmt.Errorf("operator %s: profile %s does not allow catalog %s", op.Name, profile.Name, olmSourceString(op.OLM)))
			}
			olm, err := c.planOLM(ctx, t, op)
			if err != nil {
				return err
			}
			plan := operatorPlan{spec: op, olm: olm}
			if olm.target != nil {
				plan.analysis = olm.target.Analysis
			}
			p.operators = append(p.operators, plan)
			continue
		}
		if op.Chart == nil {
			return operatorkit.Terminal("NoSource", fmt.Errorf("operator %s: set spec.operators[].chart", op.Name))
		}
		if profile != nil && !allowed(sourceString(op.Chart), profile.Spec.AllowedSources) {
			return operatorkit.Terminal("SourceNotAllowed", fmt.Errorf("operator %s: profile %s does not allow charts from %s", op.Name, profile.Name, sourceString(op.Chart)))
		}
		lc, err := c.charts.Load(ctx, op.Chart)
		if err != nil {
			return fmt.Errorf("operator %s: %w", op.Name, err)
		}
		values, err := releaseValues(op, t.Spec.Namespaces)
		if err != nil {
			return operatorkit.Terminal("InvalidValues", fmt.Errorf("operator %s: %w", op.Name, err))
		}
		a, err := c.analysis(lc, op)
		if err != nil {
			return err
		}
		p.operators = append(p.operators, operatorPlan{spec: op, chart: lc, values: values, analysis: a})
	}
	for i, ns := range t.Spec.Namespaces {
		in := QuotaInput{HeadroomPercent: p.settings.HeadroomPercent,
			NoNodePorts: !p.settings.Services.AllowNodePorts, NoLoadBalancers: !p.settings.Services.AllowLoadBalancers}
		if t.Spec.Quota != nil {
			in.Overrides = t.Spec.Quota.Hard
		}
		for _, op := range p.operators {
			if op.analysis == nil {
				continue
			}
			if i == 0 {
				in.Workloads = append(in.Workloads, op.analysis.Workloads...)
			}
			for _, o := range op.analysis.Operands {
				o.Instances = int64(instances(op.spec))
				in.Operands = append(in.Operands, o)
			}
		}
		p.quotas[ns] = ComputeQuota(in)
	}
	c.setPlan(t, p)
	return nil
}

// analysis renders the chart with CRDs and reads it. The result does not
// depend on the tenant's namespaces, so it is computed once per chart and
// user values, not once per tenant.
func (c *Controller) analysis(lc *loadedChart, op tenancyv1.OperatorSpec) (*analysis, error) {
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
	if a, err = analyze(objs); err != nil {
		return nil, operatorkit.Terminal("InvalidPlatformAsCode", fmt.Errorf("operator %s: %w", op.Name, err))
	}
	a.release = lc.withoutCRDs(rendered)
	c.mu.Lock()
	c.analyses[key] = a
	c.mu.Unlock()
	return a, nil
}

func instances(op tenancyv1.OperatorSpec) int32 {
	if op.Instances == 0 {
		return 1
	}
	return op.Instances
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

func sourceString(src *tenancyv1.ChartSource) string {
	if src.Path != "" {
		return src.Path
	}
	return src.Repository
}

// olmSourceString names an OLM catalog for allowedSources: its address,
// image, or namespace/name.
func olmSourceString(src *tenancyv1.OLMSource) string {
	switch c := src.Catalog; {
	case c.Address != "":
		return c.Address
	case c.Image != "":
		return c.Image
	default:
		return c.Namespace + "/" + c.Name
	}
}

// Build returns the namespaces and the objects in each.
func (c *Controller) Build(_ context.Context, t *tenancyv1.Tenant) ([]client.Object, error) {
	p := c.plan(t)
	if p == nil { // deletion: names are enough
		p = &plan{settings: effectiveSettings(t, nil), quotas: map[string]Quota{}}
	}
	var objs []client.Object
	for _, ns := range t.Spec.Namespaces {
		objs = append(objs, namespaceObjects(t, ns, p.settings, p.quotas[ns])...)
	}
	return append(objs, olmObjects(t)...), nil
}

// Mutate has nothing to add: Build sets every field.
func (c *Controller) Mutate(context.Context, *tenancyv1.Tenant, []client.Object) error { return nil }

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
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: QuotaName}, q); err == nil {
			st.Hard, st.Used = q.Status.Hard, q.Status.Used
			recordQuota(t.Name, ns, q.Status.Hard, q.Status.Used)
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
