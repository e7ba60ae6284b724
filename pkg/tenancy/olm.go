package tenancy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// OperatorGroupName is the OperatorGroup in a tenant's first namespace.
const OperatorGroupName = "tenant-operators"

// Reasons of OLM installs.
const (
	ReasonOperatorGroupConflict = "InterOperatorGroupOwnerConflict"
	ReasonTooManyOperatorGroups = "TooManyOperatorGroups"
	ReasonCatalogUnavailable    = "CatalogUnavailable"
	approvalManual              = "Manual"
	annotationProvidedAPIs      = "olm.providedAPIs"
)

// olmPlan is what Check worked out for an OLM operator.
type olmPlan struct {
	address string
	// source is the CatalogSource the Subscription names.
	source, sourceNamespace string
	// target is the CSV the tenant should run; pinned is set for Manual.
	target *bundle
	pinned string
	// err is why the catalog could not be read yet.
	err error
}

// catalogSourceName is the CatalogSource the controller creates for an
// operator whose catalog is an address or an image.
func catalogSourceName(op tenancyv1.OperatorSpec) string { return op.Name + "-catalog" }

// planOLM resolves the catalog, the version to run and its bundle. A
// catalog that cannot be read yet is not an error of the spec: the plan
// records it and the quota leaves the operator out until it can.
func (c *Controller) planOLM(ctx context.Context, t *tenancyv1.Tenant, op tenancyv1.OperatorSpec) (*olmPlan, error) {
	if !c.olmAPI {
		return nil, operatorkit.Terminal("OLMNotInstalled", fmt.Errorf("operator %s: this cluster has no OLM (operators.coreos.com APIs); install OLM or use a chart source", op.Name))
	}
	src := op.OLM
	ns := t.Spec.Namespaces[0]
	p := &olmPlan{source: catalogSourceName(op), sourceNamespace: ns}
	switch {
	case src.Catalog.Address != "":
		p.address = src.Catalog.Address
	default:
		if src.Catalog.Name != "" {
			p.source = src.Catalog.Name
			if src.Catalog.Namespace != "" {
				p.sourceNamespace = src.Catalog.Namespace
			}
		}
		cs := &operatorsv1alpha1.CatalogSource{}
		if err := c.reader.Get(ctx, client.ObjectKey{Namespace: p.sourceNamespace, Name: p.source}, cs); err != nil {
			p.err = fmt.Errorf("CatalogSource %s/%s: %w", p.sourceNamespace, p.source, err)
			return p, nil
		}
		p.address = cs.Spec.Address
		if cs.Spec.Image != "" || p.address == "" {
			if cs.Status.RegistryServiceStatus == nil {
				p.err = fmt.Errorf("CatalogSource %s/%s has no registry service yet", p.sourceNamespace, p.source)
				return p, nil
			}
			p.address = cs.Status.RegistryServiceStatus.Address()
		}
	}
	csv := src.StartingCSV
	if src.Approval == approvalManual {
		if op.Version != "" {
			pinned, err := c.catalogs.csvFor(ctx, p.address, src.Package, src.Channel, op.Version)
			if err != nil {
				p.err = err
				return p, nil
			}
			csv = pinned
		}
		p.pinned = csv
	}
	if sub := c.subscription(ctx, ns, op.Name); sub != nil && src.Approval != approvalManual && sub.Status.CurrentCSV != "" {
		csv = sub.Status.CurrentCSV // where OLM is taking the channel
	}
	if csv == "" {
		head, err := c.catalogs.csvFor(ctx, p.address, src.Package, src.Channel, "")
		if err != nil {
			p.err = err
			return p, nil
		}
		csv = head
	}
	b, err := c.catalogs.bundle(ctx, p.address, src.Package, src.Channel, csv)
	if err != nil {
		p.err = err
		return p, nil
	}
	p.target = b
	if len(t.Spec.Namespaces) > 1 && !b.InstallModes[operatorsv1alpha1.InstallModeTypeMultiNamespace] {
		return nil, operatorkit.Terminal("InstallModeNotSupported", fmt.Errorf("operator %s: %s does not support the MultiNamespace install mode that %d namespaces need; give the tenant one namespace", op.Name, b.CSVName, len(t.Spec.Namespaces)))
	}
	if len(t.Spec.Namespaces) == 1 && !b.InstallModes[operatorsv1alpha1.InstallModeTypeOwnNamespace] {
		return nil, operatorkit.Terminal("InstallModeNotSupported", fmt.Errorf("operator %s: %s does not support the OwnNamespace install mode", op.Name, b.CSVName))
	}
	return p, nil
}

// olmObjects are the OperatorGroup and the CatalogSources the controller
// creates in the tenant's first namespace.
func olmObjects(t *tenancyv1.Tenant) []client.Object {
	ns := t.Spec.Namespaces[0]
	var objs []client.Object
	for _, op := range t.Spec.Operators {
		if op.OLM == nil {
			continue
		}
		if len(objs) == 0 {
			objs = append(objs, &operatorsv1.OperatorGroup{
				ObjectMeta: metav1.ObjectMeta{Name: OperatorGroupName, Namespace: ns, Labels: map[string]string{LabelTenant: t.Name}},
				Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: t.Spec.Namespaces},
			})
		}
		cat := op.OLM.Catalog
		if cat.Address == "" && cat.Image == "" {
			continue
		}
		objs = append(objs, &operatorsv1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Name: catalogSourceName(op), Namespace: ns, Labels: map[string]string{LabelTenant: t.Name}},
			Spec: operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: cat.Address, Image: cat.Image,
				DisplayName: fmt.Sprintf("%s of tenant %s", op.OLM.Package, t.Name)},
		})
	}
	return objs
}

// subscription is the operator's Subscription, or nil.
func (c *Controller) subscription(ctx context.Context, ns, name string) *operatorsv1alpha1.Subscription {
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sub); err != nil {
		return nil
	}
	return sub
}

// reconcileOLM subscribes the tenant to the operator, approves the
// InstallPlans its approval policy allows and maps the Subscription, the
// InstallPlan and the CSV into st.
func (c *Controller) reconcileOLM(ctx context.Context, t *tenancyv1.Tenant, op operatorPlan, st *tenancyv1.OperatorStatus) error {
	ns := t.Spec.Namespaces[0]
	src := op.spec.OLM
	p := op.olm
	st.Chart = src.Package
	if st.OLM == nil {
		st.OLM = &tenancyv1.OLMStatus{}
	}
	if p.err != nil {
		st.Health, st.Reason, st.LastError = HealthProgressing, "", fmt.Sprintf("waiting for the catalog: %v", p.err)
		return fmt.Errorf("operator %s: %w", op.spec.Name, p.err)
	}
	st.CRDs = crdNames(p.target.Analysis)
	sub := c.subscription(ctx, ns, op.spec.Name)
	if sub == nil {
		if err := c.olmConflicts(ctx, t, p.target); err != nil {
			st.Health, st.Reason, st.LastError = HealthFailed, err.reason, err.Error()
			c.event(t, "Warning", err.reason, "operator %s: %v", op.spec.Name, err)
			return nil
		}
	}
	want := &operatorsv1alpha1.Subscription{
		TypeMeta:   metav1.TypeMeta{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: "Subscription"},
		ObjectMeta: metav1.ObjectMeta{Name: op.spec.Name, Namespace: ns, Labels: map[string]string{LabelTenant: t.Name}},
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
			st.Health, st.TargetVersion = HealthProgressing, p.target.Version
			return nil
		}
	}
	plans, err := c.approve(ctx, t, op, st)
	if err != nil {
		return err
	}
	c.olmStatus(ctx, sub, plans, op, st)
	return nil
}

func sameSubscription(live, want *operatorsv1alpha1.Subscription) bool {
	if live.Spec == nil || live.Labels[LabelTenant] != want.Labels[LabelTenant] {
		return false
	}
	l, w := live.Spec, want.Spec
	return l.CatalogSource == w.CatalogSource && l.CatalogSourceNamespace == w.CatalogSourceNamespace && l.Package == w.Package &&
		l.Channel == w.Channel && l.StartingCSV == w.StartingCSV && l.InstallPlanApproval == w.InstallPlanApproval
}

// approve approves the InstallPlans of the tenant's first namespace that
// the approval policy allows and whose CRDs pass the skew guard. It
// returns the namespace's InstallPlans.
func (c *Controller) approve(ctx context.Context, t *tenancyv1.Tenant, op operatorPlan, st *tenancyv1.OperatorStatus) ([]operatorsv1alpha1.InstallPlan, error) {
	var plans operatorsv1alpha1.InstallPlanList
	if err := c.client.List(ctx, &plans, client.InNamespace(t.Spec.Namespaces[0])); err != nil {
		return nil, err
	}
	st.OLM.AwaitingApproval = nil
	src := op.spec.OLM
	for i := range plans.Items {
		plan := &plans.Items[i]
		if plan.Spec.Approved || plan.Status.Phase != operatorsv1alpha1.InstallPlanPhaseRequiresApproval {
			continue
		}
		csvs := plan.Spec.ClusterServiceVersionNames
		if src.Approval == approvalManual && op.olm.pinned != "" && !slices.Contains(csvs, op.olm.pinned) {
			st.OLM.AwaitingApproval = append(st.OLM.AwaitingApproval, fmt.Sprintf("%s: %s", plan.Name, strings.Join(csvs, ", ")))
			continue
		}
		if src.Approval == approvalManual && op.olm.pinned == "" && st.OLM.CSV != "" {
			// Manual without a pinned version: the first install only.
			st.OLM.AwaitingApproval = append(st.OLM.AwaitingApproval, fmt.Sprintf("%s: %s", plan.Name, strings.Join(csvs, ", ")))
			continue
		}
		if err := c.guardPlan(ctx, op, csvs); err != nil {
			st.Health, st.Reason, st.LastError = HealthFailed, ReasonCRDSkew, err.Error()
			c.event(t, "Warning", ReasonCRDSkew, "operator %s: not approving InstallPlan %s: %v", op.spec.Name, plan.Name, err)
			return plans.Items, nil
		}
		patch := client.MergeFrom(plan.DeepCopy())
		plan.Spec.Approved = true
		if err := c.client.Patch(ctx, plan, patch); err != nil {
			return nil, fmt.Errorf("approving InstallPlan %s: %w", plan.Name, err)
		}
		c.event(t, "Normal", "Approved", "operator %s: approved InstallPlan %s (%s)", op.spec.Name, plan.Name, strings.Join(csvs, ", "))
	}
	return plans.Items, nil
}

// guardPlan runs the CRD skew guard over the CRDs of the plan's bundles.
// OLM replaces a CRD with the bundle's definition, so a bundle whose CRD
// is older than the live one is refused too: it would take fields away
// from tenants on newer versions.
func (c *Controller) guardPlan(ctx context.Context, op operatorPlan, csvs []string) error {
	src := op.spec.OLM
	for _, name := range csvs {
		b, err := c.catalogs.bundle(ctx, op.olm.address, src.Package, src.Channel, name)
		if err != nil {
			return err
		}
		for _, want := range b.Analysis.CRDs {
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.client.Get(ctx, client.ObjectKey{Name: want.Name}, live); apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return err
			}
			if err := olmCRDCheck(name, live, want); err != nil {
				return err
			}
		}
	}
	return nil
}

// olmCRDCheck is the skew guard for a bundle CRD that OLM would apply
// over live. Unlike the controller, OLM cannot keep a newer live
// definition for an older bundle, so an older definition is refused too.
func olmCRDCheck(csv string, live, want *apiextensionsv1.CustomResourceDefinition) error {
	d, err := compareCRD(live, want)
	if err != nil {
		return err
	}
	if d == crdKeep && live != nil && !subset(servedFields(live), servedFields(want)) {
		return &SkewError{CRD: want.Name, Reason: fmt.Sprintf("%s carries an older definition, and OLM would replace the shared one with it; pin a version at least as new as the other tenants'", csv)}
	}
	return nil
}

// olmStatus maps the Subscription, the installed CSV and the InstallPlan
// that installed it (or the Subscription's latest one).
func (c *Controller) olmStatus(ctx context.Context, sub *operatorsv1alpha1.Subscription, plans []operatorsv1alpha1.InstallPlan, op operatorPlan, st *tenancyv1.OperatorStatus) {
	s := st.OLM
	s.CSV, s.Phase, s.Version, s.InstallPlan, s.InstallPlanPhase = sub.Status.InstalledCSV, "", "", "", ""
	if sub.Status.InstallPlanRef != nil {
		s.InstallPlan = sub.Status.InstallPlanRef.Name
	}
	for _, plan := range plans {
		if s.CSV != "" && plan.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete && slices.Contains(plan.Spec.ClusterServiceVersionNames, s.CSV) {
			s.InstallPlan = plan.Name
		}
	}
	for _, plan := range plans {
		if plan.Name == s.InstallPlan {
			s.InstallPlanPhase = string(plan.Status.Phase)
		}
	}
	want := op.olm.target
	st.TargetVersion = want.Version
	st.Health = HealthProgressing
	if s.CSV == "" {
		return
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: sub.Namespace, Name: s.CSV}, csv); err != nil {
		return
	}
	s.Phase, s.Version = string(csv.Status.Phase), csv.Spec.Version.String()
	switch csv.Status.Phase {
	case operatorsv1alpha1.CSVPhaseSucceeded:
		st.ChartVersion = s.Version
		if s.CSV == want.CSVName {
			st.Health, st.TargetVersion, st.Reason, st.LastError = HealthReady, "", "", ""
		}
	case operatorsv1alpha1.CSVPhaseFailed:
		st.Health, st.Reason = HealthFailed, ReasonInstallFailed
		if csv.Status.Reason == operatorsv1alpha1.CSVReasonInterOperatorGroupOwnerConflict {
			st.Reason = ReasonOperatorGroupConflict
		}
		st.LastError = fmt.Sprintf("CSV %s failed: %s", s.CSV, csv.Status.Message)
	}
}

// conflictError is an OLM refusal the controller saw coming.
type conflictError struct {
	reason, msg string
}

func (e *conflictError) Error() string { return e.msg }

// olmConflicts finds what OLM would refuse before subscribing: another
// OperatorGroup in the namespace, or an OperatorGroup whose namespaces
// overlap the tenant's and that already provides an API of the bundle.
func (c *Controller) olmConflicts(ctx context.Context, t *tenancyv1.Tenant, b *bundle) *conflictError {
	var groups operatorsv1.OperatorGroupList
	if err := c.reader.List(ctx, &groups); err != nil {
		return &conflictError{reason: ReasonCatalogUnavailable, msg: fmt.Sprintf("listing OperatorGroups: %v", err)}
	}
	ns := t.Spec.Namespaces[0]
	for _, g := range groups.Items {
		if g.Namespace == ns && g.Name == OperatorGroupName {
			continue
		}
		if g.Namespace == ns {
			return &conflictError{reason: ReasonTooManyOperatorGroups, msg: fmt.Sprintf("namespace %s already has OperatorGroup %s; OLM allows one per namespace: remove it, or give the tenant a namespace of its own", ns, g.Name)}
		}
		if !overlaps(groupTargets(g), t.Spec.Namespaces) {
			continue
		}
		provided := strings.Split(g.Annotations[annotationProvidedAPIs], ",")
		for _, api := range b.OwnedAPIs {
			if slices.Contains(provided, api) {
				return &conflictError{reason: ReasonOperatorGroupConflict, msg: fmt.Sprintf(
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
