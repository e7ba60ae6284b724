package tenancy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
	"opctl.dev/opctl/pkg/tenancy/policy"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// subscription is the operator's Subscription, or nil.
func (c *olmBackend) subscription(ctx context.Context, ns, name string) *operatorsv1alpha1.Subscription {
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.owned.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sub); err != nil {
		return nil
	}
	return sub
}

// reconcile subscribes the tenant to the operator, approves the
// InstallPlans its approval policy allows and maps the Subscription, the
// InstallPlan and the CSV into st.
func (c *olmBackend) reconcile(ctx context.Context, s *plan, op operatorPlan, st *tenancyv1.OperatorStatus) error {
	t := s.tenant
	ns := t.Spec.Namespaces[0]
	src := op.spec.OLM
	p := op.detail.(*olmPlan)
	st.Chart = src.Package
	if st.OLM == nil {
		st.OLM = &tenancyv1.OLMStatus{}
	}
	if p.err != nil {
		st.Health, st.Reason, st.LastError = tenancyv1.HealthProgressing, "", fmt.Sprintf("waiting for the catalog: %v", p.err)
		return fmt.Errorf("operator %s: %w", op.spec.Name, p.err)
	}
	st.CRDs = crdNames(p.target.Analysis)
	if err := c.olmGrants(ctx, s, p.target); err != nil {
		return c.grantRefused(t, op, st, err)
	}
	sub := c.subscription(ctx, ns, op.spec.Name)
	if sub == nil {
		if err := c.olmConflicts(ctx, t, p.target); err != nil {
			st.Health, st.Reason, st.LastError = tenancyv1.HealthFailed, err.reason, err.Error()
			c.event(t, "Warning", err.reason, "operator %s: %v", op.spec.Name, err)
			return nil
		}
	}
	want := &operatorsv1alpha1.Subscription{
		TypeMeta:   metav1.TypeMeta{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: "Subscription"},
		ObjectMeta: metav1.ObjectMeta{Name: op.spec.Name, Namespace: ns, Labels: s.settings.ownedLabels(t.Name)},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource: p.source, CatalogSourceNamespace: p.sourceNamespace, Package: src.Package, Channel: src.Channel,
			StartingCSV: src.StartingCSV, InstallPlanApproval: operatorsv1alpha1.ApprovalManual, // the controller approves
		},
	}
	if src.Approval == approvalManual && p.pinned != "" && src.StartingCSV == "" {
		want.Spec.StartingCSV = p.pinned
	}
	if sub == nil || !sameSubscription(sub, want) {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
		if err != nil {
			return err
		}
		delete(u, "status")
		if err := c.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u}), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying Subscription %s/%s: %w", ns, want.Name, err)
		}
		c.event(t, "Normal", "Subscribed", "operator %s: subscribed to %s/%s in catalog %s", op.spec.Name, src.Package, src.Channel, p.source)
		if sub == nil {
			st.Health, st.TargetVersion = tenancyv1.HealthProgressing, p.target.Version
			return nil
		}
	}
	plans, err := c.approve(ctx, s, op, sub, st)
	if err != nil {
		return err
	}
	c.olmStatus(ctx, sub, plans, op, st)
	return nil
}

func sameSubscription(live, want *operatorsv1alpha1.Subscription) bool {
	if live.Spec == nil {
		return false
	}
	for k, v := range want.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	l, w := live.Spec, want.Spec
	return l.CatalogSource == w.CatalogSource && l.CatalogSourceNamespace == w.CatalogSourceNamespace && l.Package == w.Package &&
		l.Channel == w.Channel && l.StartingCSV == w.StartingCSV && l.InstallPlanApproval == w.InstallPlanApproval
}

// approve approves the InstallPlan OLM made for the controller's
// Subscription, if the approval policy allows it and its CRDs pass the
// skew guard. Any other InstallPlan of the namespace is the tenant's (the
// owner may create them): never approved. It returns the namespace's
// InstallPlans.
func (c *olmBackend) approve(ctx context.Context, s *plan, op operatorPlan, sub *operatorsv1alpha1.Subscription, st *tenancyv1.OperatorStatus) ([]operatorsv1alpha1.InstallPlan, error) {
	t := s.tenant
	var plans operatorsv1alpha1.InstallPlanList
	if err := c.client.List(ctx, &plans, client.InNamespace(t.Spec.Namespaces[0])); err != nil {
		return nil, err
	}
	st.OLM.AwaitingApproval = nil
	src, pinned := op.spec.OLM, op.detail.(*olmPlan).pinned
	for i := range plans.Items {
		plan := &plans.Items[i]
		if plan.Spec.Approved || plan.Status.Phase != operatorsv1alpha1.InstallPlanPhaseRequiresApproval || !planOf(sub, plan) {
			continue
		}
		csvs := plan.Spec.ClusterServiceVersionNames
		if src.Approval == approvalManual && pinned != "" && !slices.Contains(csvs, pinned) {
			st.OLM.AwaitingApproval = append(st.OLM.AwaitingApproval, fmt.Sprintf("%s: %s", plan.Name, strings.Join(csvs, ", ")))
			continue
		}
		if src.Approval == approvalManual && pinned == "" && st.OLM.CSV != "" {
			// Manual without a pinned version: the first install only.
			st.OLM.AwaitingApproval = append(st.OLM.AwaitingApproval, fmt.Sprintf("%s: %s", plan.Name, strings.Join(csvs, ", ")))
			continue
		}
		crds, err := c.guardPlan(ctx, s, op, csvs)
		if err == nil {
			// The cache keeps no steps (slimInstallPlan): read them live.
			full := &operatorsv1alpha1.InstallPlan{}
			if err = c.reader.Get(ctx, client.ObjectKeyFromObject(plan), full); err == nil && full.UID == plan.UID && !full.Spec.Approved {
				var marked bool
				var left []string
				if marked, left, err = c.grantPlan(ctx, s, full, crds); errors.Is(err, errCatalogChanged) {
					for _, name := range csvs {
						c.catalogs.Forget(op.detail.(*olmPlan).address, name)
					}
				} else if err == nil && marked {
					// What the API server stored, not what was sent, is
					// approved: exactly the steps checked, or nothing.
					sent := full.DeepCopy()
					if err = c.client.Status().Update(ctx, full); err == nil {
						err = samePlan(sent, full)
					}
				}
				if err == nil && len(left) > 0 {
					c.event(t, "Normal", "ClusterRolesLeftOut", "operator %s: InstallPlan %s: ClusterRoles %s bind nothing in the plan and would add to every namespace's roles: not created (the owners hold the operator's kinds through Role %s)",
						op.spec.Name, plan.Name, strings.Join(left, ", "), KindsRole)
				}
				plan = full
			}
		}
		if err != nil {
			var ge *guard.GrantError
			var skew *guard.SkewError
			var re *operatorkit.ReasonError
			reason := tenancyv1.ReasonCRDSkew
			switch {
			case errors.As(err, &ge):
				return plans.Items, c.grantRefused(t, op, st, err)
			case errors.As(err, &re):
				reason = re.Reason
			case !errors.As(err, &skew):
				// An API or catalog error (a conflict with OLM's own status
				// update, say): retried, not a refusal.
				return nil, fmt.Errorf("operator %s: InstallPlan %s: %w", op.spec.Name, plan.Name, err)
			}
			st.Health, st.Reason, st.LastError = tenancyv1.HealthFailed, reason, err.Error()
			c.event(t, "Warning", reason, "operator %s: not approving InstallPlan %s: %v", op.spec.Name, plan.Name, err)
			return plans.Items, nil
		}
		// At the resourceVersion checked: a plan recreated or changed since
		// is a conflict, retried, never approved unchecked.
		checked := plan.DeepCopy()
		patch := client.MergeFromWithOptions(checked, client.MergeFromWithOptimisticLock{})
		plan.Spec.Approved = true
		if err := c.client.Patch(ctx, plan, patch); err != nil {
			return nil, fmt.Errorf("approving InstallPlan %s: %w", plan.Name, err)
		}
		if err := samePlan(checked, plan); err != nil {
			// The approval's own admission changed the plan: a platform
			// write that something outside the platform could see.
			st.Health, st.Reason, st.LastError = tenancyv1.HealthFailed, tenancyv1.ReasonPlanChanged, err.Error()
			c.event(t, "Warning", tenancyv1.ReasonPlanChanged, "operator %s: %v", op.spec.Name, err)
			return plans.Items, nil
		}
		c.event(t, "Normal", "Approved", "operator %s: approved InstallPlan %s (%s)", op.spec.Name, plan.Name, strings.Join(csvs, ", "))
	}
	return plans.Items, nil
}

// samePlan refuses an InstallPlan the API server stored otherwise than
// the controller checked it (sent): its steps or CSVs changed on the way,
// by whatever admission saw the write.
func samePlan(sent, stored *operatorsv1alpha1.InstallPlan) error {
	if equality.Semantic.DeepEqual(sent.Status.Plan, stored.Status.Plan) && slices.Equal(sent.Spec.ClusterServiceVersionNames, stored.Spec.ClusterServiceVersionNames) {
		return nil
	}
	return operatorkit.Terminal(tenancyv1.ReasonPlanChanged, fmt.Errorf("InstallPlan %s/%s was stored with other steps than the controller checked and wrote: "+
		"an admission webhook changed it; not approving it. Find the webhook that matches installplans and scope it away from the controller's writes",
		stored.Namespace, stored.Name))
}

// planOf reports whether plan is the one OLM made for sub: named by the
// Subscription's status, which OLM writes, and owned by it.
func planOf(sub *operatorsv1alpha1.Subscription, plan *operatorsv1alpha1.InstallPlan) bool {
	if sub == nil || sub.Status.InstallPlanRef == nil {
		return false
	}
	ref := sub.Status.InstallPlanRef
	if ref.Name != plan.Name || ref.UID != plan.UID {
		return false
	}
	for _, o := range plan.OwnerReferences {
		if o.Kind == operatorsv1alpha1.SubscriptionKind && o.UID == sub.UID {
			return true
		}
	}
	return false
}

// guardPlan runs the CRD skew guard over the CRDs of the plan's bundles,
// and returns them.
// OLM replaces a CRD with the bundle's definition, so a bundle whose CRD
// is older than the live one is refused too: it would take fields away
// from tenants on newer versions.
func (c *olmBackend) guardPlan(ctx context.Context, s *plan, op operatorPlan, csvs []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	src := op.spec.OLM
	bundles := make([]*registryv1.Bundle, 0, len(csvs))
	for _, name := range csvs {
		b, err := c.catalogs.Bundle(ctx, op.detail.(*olmPlan).address, src.Package, src.Channel, name)
		if err != nil {
			return nil, err
		}
		bundles = append(bundles, b)
	}
	return c.guardBundles(ctx, s, bundles)
}

// guardBundles checks the bundles of a plan, every one whether or not it
// is the target the tenant's plan resolved (OLM applies the CRDs of
// each): their clusterPermissions (olmGrants), then their CRDs as Repair
// checks a target's (bundleCRDChecks), all before anything is applied;
// then, bundle by bundle, the skew guard and the controller's own apply
// of their CRDs. It returns the CRDs.
func (c *olmBackend) guardBundles(ctx context.Context, s *plan, bundles []*registryv1.Bundle) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	for _, b := range bundles {
		if err := c.olmGrants(ctx, s, b); err != nil {
			return nil, err
		}
		if err := bundleCRDChecks(ctx, c.client, c.discovery, b.CSVName, b.Analysis.CRDs); err != nil {
			return nil, err
		}
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, b := range bundles {
		name := b.CSVName
		crds = append(crds, b.Analysis.CRDs...)
		for _, want := range b.Analysis.CRDs {
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.client.Get(ctx, client.ObjectKey{Name: want.Name}, live); apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return nil, err
			}
			// OLM takes over a bundle's CRDs with its own rights and marks
			// them the tenant's (isShared): only a CRD shared already.
			if shared, err := guard.IsShared(ctx, c.reader, live); err != nil {
				return nil, err
			} else if !shared {
				return nil, operatorkit.Terminal(tenancyv1.ReasonCRDNotShared, fmt.Errorf("CRD %s exists and was not installed for tenants (no %s label): OLM would take it over for %s; "+
					"remove it from the operator, or have the platform team label it if it is meant to be shared", want.Name, tenancyv1.LabelSharedCRD, name))
			}
			if err := olmCRDCheck(name, live, want); err != nil {
				return nil, err
			}
			if err := guard.StoredObjectsFit(ctx, c.stored, live, want); err != nil {
				return nil, err
			}
		}
		// OLM installs a bundle's CRDs with its own rights, whoever wrote
		// them before: the controller applies them first, as it does a
		// chart's (labelled shared, skew-guarded), and refuses a bundle
		// whose CRDs are another installer's (CRDNotShared).
		if _, err := guard.EnsureCRDs(ctx, c.client, c.apiServed, FieldManager, b.Analysis.CRDs, c.stored); err != nil {
			return nil, err
		}
	}
	return crds, nil
}

// bundleCRDChecks refuses the CRDs of a plan's bundle (csv) that Repair
// refuses of a target's, and what only OLM would write: a CRD that
// converts through a webhook (ConversionWebhook), one in a group a
// tenant may not define kinds in (GroupsReserved), and one carrying the
// controller's own labels or annotations, which OLM would write on the
// shared CRD as the bundle has them.
func bundleCRDChecks(ctx context.Context, reader client.Reader, dc discovery.DiscoveryInterface, csv string, crds []*apiextensionsv1.CustomResourceDefinition) error {
	if err := policy.ConversionWebhook(crds); err != nil {
		return operatorkit.WithReason(tenancyv1.ReasonConversionWebhook, fmt.Errorf("%s: %w", csv, err))
	}
	if err := guard.GroupsReserved(ctx, reader, dc, crds); err != nil {
		return err
	}
	for _, crd := range crds {
		if keys := guard.ReservedMetadata(crd); keys != "" {
			return reservedMetadataRefused(csv, crd.Name, keys)
		}
	}
	return nil
}

// reservedMetadataRefused is the refusal of a bundle CRD that carries the
// controller's own labels or annotations (keys).
func reservedMetadataRefused(csv, crd, keys string) error {
	return operatorkit.Terminal(tenancyv1.ReasonCRDMetadataReserved, fmt.Errorf("%s: CRD %s carries %s: only the tenancy controller writes those, and OLM would write them on the shared CRD as the bundle has them; "+
		"remove them from the bundle", csv, crd, keys))
}

// olmGrants refuses a bundle whose CSV's clusterPermissions, which OLM
// grants cluster-wide to a ServiceAccount the tenant can mint tokens for,
// go beyond what the platform allows tenants (grants.go): namespaced
// rules included, since OLM does not narrow them.
func (c *olmBackend) olmGrants(ctx context.Context, s *plan, b *registryv1.Bundle) error {
	if len(b.ClusterPermissions) == 0 {
		return nil
	}
	g := guard.GrantPolicy{Roles: s.settings.ClusterRoles, Crds: crdNames(b.Analysis), Reader: c.reader}
	allowed, err := g.Allowed(ctx)
	if err != nil {
		return err
	}
	if ok, missing := validation.Covers(allowed, b.ClusterPermissions); !ok {
		return &guard.GrantError{Release: s.tenant.Spec.Namespaces[0] + "/" + b.CSVName, What: "its CSV's clusterPermissions, which OLM grants cluster-wide",
			Grants: []string{policy.DescribeRules(missing)}}
	}
	return nil
}

// grantRefused reports a GrantError on st and in an Event; the operator
// is not subscribed or approved until the catalog or the allow-list
// changes.
func (c *olmBackend) grantRefused(t *tenancyv1.Tenant, op operatorPlan, st *tenancyv1.OperatorStatus, err error) error {
	st.Health, st.Reason, st.LastError = tenancyv1.HealthFailed, tenancyv1.ReasonClusterRightsRefused, err.Error()
	c.event(t, "Warning", tenancyv1.ReasonClusterRightsRefused, "operator %s: %v", op.spec.Name, err)
	return nil
}

// olmCRDCheck is the skew guard for a bundle CRD that OLM would apply
// over live. Unlike the controller, OLM cannot keep a newer live
// definition for an older bundle, so an older definition is refused too.
func olmCRDCheck(csv string, live, want *apiextensionsv1.CustomResourceDefinition) error {
	d, err := guard.CompareCRD(live, want)
	if err != nil {
		return err
	}
	if d == guard.CrdKeep && live != nil && !guard.Subset(guard.ServedFields(live), guard.ServedFields(want)) {
		return &guard.SkewError{CRD: want.Name, Reason: fmt.Sprintf("%s carries an older definition, and OLM would replace the shared one with it; pin a version at least as new as the other tenants'", csv)}
	}
	if live != nil {
		// OLM replaces the live definition whatever CompareCRD would keep:
		// judged as a replacement, narrower in any way is refused.
		return guard.ReplaceSkew(live, want)
	}
	return nil
}

// conflictError is an OLM refusal the controller saw coming.
type conflictError struct {
	reason, msg string
}

func (e *conflictError) Error() string { return e.msg }

// olmConflicts finds what OLM would refuse before subscribing: another
// OperatorGroup in the namespace, or an OperatorGroup whose namespaces
// overlap the tenant's and that already provides an API of the bundle.
func (c *olmBackend) olmConflicts(ctx context.Context, t *tenancyv1.Tenant, b *registryv1.Bundle) *conflictError {
	var groups operatorsv1.OperatorGroupList
	if err := c.reader.List(ctx, &groups); err != nil {
		return &conflictError{reason: tenancyv1.ReasonCatalogUnavailable, msg: fmt.Sprintf("listing OperatorGroups: %v", err)}
	}
	ns := t.Spec.Namespaces[0]
	for _, g := range groups.Items {
		if g.Namespace == ns && g.Name == OperatorGroupName {
			continue
		}
		if g.Namespace == ns {
			return &conflictError{reason: tenancyv1.ReasonTooManyOperatorGroups, msg: fmt.Sprintf("namespace %s already has OperatorGroup %s; OLM allows one per namespace: remove it, or give the tenant a namespace of its own", ns, g.Name)}
		}
		if !overlaps(groupTargets(g), t.Spec.Namespaces) {
			continue
		}
		provided := strings.Split(g.Annotations[annotationProvidedAPIs], ",")
		for _, api := range b.OwnedAPIs {
			if slices.Contains(provided, api) {
				return &conflictError{reason: tenancyv1.ReasonOperatorGroupConflict, msg: fmt.Sprintf(
					"OperatorGroup %s/%s already provides %s to namespaces that include the tenant's, and OLM refuses a second owner (InterOperatorGroupOwnerConflict): uninstall that operator or scope its OperatorGroup away from the tenant namespaces", g.Namespace, g.Name, api)}
			}
		}
	}
	return nil
}

// groupTargets are the namespaces an OperatorGroup targets: its status
// once OLM has computed it, else its spec ("" for all namespaces).
func groupTargets(g operatorsv1.OperatorGroup) []string {
	switch {
	case len(g.Status.Namespaces) > 0:
		return g.Status.Namespaces
	case len(g.Spec.TargetNamespaces) > 0:
		return g.Spec.TargetNamespaces
	case g.Spec.Selector == nil:
		return []string{""}
	}
	return nil
}

// overlaps reports whether an OperatorGroup's targets ("" for all
// namespaces) include any of namespaces.
func overlaps(targets, namespaces []string) bool {
	if slices.Contains(targets, "") {
		return true
	}
	for _, ns := range namespaces {
		if slices.Contains(targets, ns) {
			return true
		}
	}
	return false
}
