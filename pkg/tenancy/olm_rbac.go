package tenancy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/policy"
)

// OLM's marks on the cluster-scoped objects it makes for a CSV.
const (
	olmOwnerLabel          = "olm.owner"
	olmOwnerNamespaceLabel = "olm.owner.namespace"
	olmManagedLabel        = "olm.managed"
)

// grantPlan writes, with the controller's own rights and after its
// checks, what OLM would otherwise write as the OperatorGroup's
// ServiceAccount, and marks those steps Present, which OLM skips:
//   - the CSVs: the ServiceAccount may not create them, or a CSV the owner
//     wrote would have OLM, with its own rights, aggregate rules on any
//     CRD the CSV claims into every namespace's admin, and label that CRD
//     as the tenant's. A CSV may own only the bundles' CRDs (crds), which
//     guardPlan applied and checked.
//   - the ClusterRoles and ClusterRoleBindings (its clusterPermissions),
//     which the ServiceAccount, holding nothing cluster-wide, could not
//     write. A bound role must be covered by the platform's named
//     ClusterRoles (and get on the bundles' CRDs) and aggregate into no
//     other role, and a binding must bind one of the plan's roles to
//     ServiceAccounts of the plan's namespace; an object of that name that
//     is not OLM's for this CSV and namespace is never overwritten. A
//     ClusterRole no binding of the plan binds (a bundle's editor and
//     viewer roles, which aggregate into every namespace's admin, edit
//     and view) is left out: the owners hold the operator's kinds through
//     the tenant-kinds Role.
//
// It returns whether it changed the plan's status and the roles it left
// out.
func (c *olmBackend) grantPlan(ctx context.Context, s *plan, ip *operatorsv1alpha1.InstallPlan, checked []*apiextensionsv1.CustomResourceDefinition) (bool, []string, error) {
	crds := make([]string, 0, len(checked))
	for _, crd := range checked {
		crds = append(crds, crd.Name)
	}
	g := guard.GrantPolicy{Roles: s.settings.ClusterRoles, Crds: crds, Reader: c.reader}
	allowed, err := g.Allowed(ctx)
	if err != nil {
		return false, nil, err
	}
	var csvs []*operatorsv1alpha1.ClusterServiceVersion
	var roles []*rbacv1.ClusterRole
	var bindings []*rbacv1.ClusterRoleBinding
	steps := map[client.Object]int{}
	for i, step := range ip.Status.Plan {
		if step == nil {
			continue
		}
		if step.Resource.Kind == "CustomResourceDefinition" {
			// OLM applies these with its own rights whatever their status:
			// exactly the CRDs guardPlan checked and applied, or nothing.
			if err := notReference(ip, step); err != nil {
				return false, nil, err
			}
			if err := sameCRD(ip, step, checked); err != nil {
				return false, nil, err
			}
			continue
		}
		if step.Status == operatorsv1alpha1.StepStatusPresent || step.Status == operatorsv1alpha1.StepStatusCreated {
			continue
		}
		if err := notReference(ip, step); err != nil {
			return false, nil, err
		}
		switch step.Resource.Kind {
		case operatorsv1alpha1.ClusterServiceVersionKind:
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			if err := decodeStep(ip, step, csv); err != nil {
				return false, nil, err
			}
			csvs, steps[csv] = append(csvs, csv), i
		case "ClusterRole":
			role := &rbacv1.ClusterRole{}
			if err := decodeStep(ip, step, role); err != nil {
				return false, nil, err
			}
			roles, steps[role] = append(roles, role), i
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			if err := decodeStep(ip, step, b); err != nil {
				return false, nil, err
			}
			bindings, steps[b] = append(bindings, b), i
		}
	}
	refused := func(what, grants string) error {
		return &guard.GrantError{Release: ip.Namespace + "/" + strings.Join(ip.Spec.ClusterServiceVersionNames, ","), What: what, Grants: []string{grants}}
	}
	for _, csv := range csvs {
		// OLM installs APIServices and webhooks as the OperatorGroup's
		// ServiceAccount, which may not; and then aggregates rules on the
		// APIs they serve into every admin.
		if len(csv.Spec.APIServiceDefinitions.Owned) > 0 || len(csv.Spec.WebhookDefinitions) > 0 {
			return false, nil, refused("its InstallPlan's CSV "+csv.Name, "APIServices or admission and conversion webhooks, which OLM would install cluster-wide "+
				"(the bundle source installs webhooks narrowed to the tenant's namespaces)")
		}
		for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
			if !slices.Contains(crds, owned.Name) {
				return false, nil, refused("its InstallPlan's CSV "+csv.Name, fmt.Sprintf("ownership of CRD %s, which is not one of the bundle's CRDs the controller checked", owned.Name))
			}
		}
		// As OLM creates it (catalog operator, ExecutePlan).
		csv.Namespace = ip.Namespace
	}
	bound := map[string]bool{}
	for _, b := range bindings {
		if b.RoleRef.Kind != "ClusterRole" || !slices.ContainsFunc(roles, func(r *rbacv1.ClusterRole) bool { return r.Name == b.RoleRef.Name }) {
			return false, nil, refused("its InstallPlan's ClusterRoleBinding "+b.Name, fmt.Sprintf("%s %s, which is not a ClusterRole of the plan", b.RoleRef.Kind, b.RoleRef.Name))
		}
		for j, sub := range b.Subjects {
			if sub.Namespace == "" && sub.Kind == rbacv1.ServiceAccountKind {
				b.Subjects[j].Namespace = ip.Namespace
			}
			if sub.Kind != rbacv1.ServiceAccountKind || b.Subjects[j].Namespace != ip.Namespace {
				return false, nil, refused("its InstallPlan's ClusterRoleBinding "+b.Name, fmt.Sprintf("cluster-wide rights to %s %s, not a ServiceAccount of %s", sub.Kind, policy.Qualified(sub.Namespace, sub.Name), ip.Namespace))
			}
		}
		bound[b.RoleRef.Name] = true
	}
	var aggregators []labels.Selector
	var writes []client.Object
	var left []string
	for _, role := range roles {
		if !bound[role.Name] {
			left = append(left, role.Name)
			continue
		}
		if role.AggregationRule != nil {
			return false, nil, refused("its InstallPlan's ClusterRole "+role.Name, "an aggregationRule")
		}
		if aggregators == nil {
			if aggregators, err = g.Aggregators(ctx); err != nil {
				return false, nil, err
			}
		}
		if into := aggregatesInto(role.Labels, aggregators); into != "" {
			return false, nil, refused("its InstallPlan's ClusterRole "+role.Name, "its rules added to other roles ("+into+")")
		}
		if ok, missing := validation.Covers(allowed, role.Rules); !ok {
			return false, nil, refused("its CSV's clusterPermissions, which OLM grants cluster-wide", policy.DescribeRules(missing))
		}
		writes = append(writes, role)
	}
	for _, b := range bindings {
		writes = append(writes, b)
	}
	// Every refusal before the first write.
	lives := make([]client.Object, len(writes))
	for i, o := range writes {
		if lives[i], err = c.planObject(ctx, ip, ip.Status.Plan[steps[o]].Resolving, o); err != nil {
			return false, nil, err
		}
	}
	for i, o := range writes {
		if err := c.writePlanObject(ctx, ip, o, lives[i]); err != nil {
			return false, nil, err
		}
	}
	for _, csv := range csvs {
		// Nobody else may create a CSV in a tenant namespace: one that
		// exists is this plan's, from an earlier pass.
		sent := csv.DeepCopy()
		if err := c.client.Create(ctx, csv, client.FieldOwner(FieldManager)); apierrors.IsAlreadyExists(err) {
			continue
		} else if err != nil {
			return false, nil, fmt.Errorf("InstallPlan %s/%s: creating CSV %s: %w", ip.Namespace, ip.Name, csv.Name, err)
		}
		if !equality.Semantic.DeepEqual(sent.Spec, csv.Spec) {
			// Stored otherwise than checked: OLM would act on it with its
			// own rights. Gone before anything reads it.
			_ = c.client.Delete(ctx, csv, client.Preconditions{UID: &csv.UID})
			return false, nil, operatorkit.Terminal(tenancyv1.ReasonPlanChanged, fmt.Errorf("InstallPlan %s/%s: CSV %s was stored otherwise than the controller checked and wrote it: an admission webhook changed it; deleted, not approving the plan",
				ip.Namespace, ip.Name, csv.Name))
		}
	}
	for _, i := range steps {
		ip.Status.Plan[i].Status = operatorsv1alpha1.StepStatusPresent
	}
	return len(steps) > 0, left, nil
}

// errCatalogChanged is a plan whose bundle differs from the one the
// controller read: the catalog served it differently since.
var errCatalogChanged = errors.New("the catalog changed since the controller read the bundle")

// sameCRD refuses a CRD step that is not one of the checked CRDs, as
// they are, or that carries the controller's own labels or annotations
// (OLM writes them as the step has them).
func sameCRD(ip *operatorsv1alpha1.InstallPlan, step *operatorsv1alpha1.Step, checked []*apiextensionsv1.CustomResourceDefinition) error {
	var head metav1.TypeMeta
	if err := json.Unmarshal([]byte(step.Resource.Manifest), &head); err != nil {
		return fmt.Errorf("InstallPlan %s/%s: reading step CRD %s: %w", ip.Namespace, ip.Name, step.Resource.Name, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if head.APIVersion == apiextensionsv1.SchemeGroupVersion.String() {
		if err := json.Unmarshal([]byte(step.Resource.Manifest), crd); err != nil {
			return fmt.Errorf("InstallPlan %s/%s: reading step CRD %s: %w", ip.Namespace, ip.Name, step.Resource.Name, err)
		}
	}
	i := slices.IndexFunc(checked, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Name == crd.Name })
	switch {
	case crd.Name != step.Resource.Name || i < 0:
		return &guard.GrantError{Release: ip.Namespace + "/" + strings.Join(ip.Spec.ClusterServiceVersionNames, ","), What: "its InstallPlan",
			Grants: []string{fmt.Sprintf("CRD %s (%s), which is not one of the bundle's CRDs the controller checked, and which OLM would apply with its own rights", step.Resource.Name, head.APIVersion)}}
	case guard.ReservedMetadata(crd) != "":
		return reservedMetadataRefused(strings.Join(ip.Spec.ClusterServiceVersionNames, ","), crd.Name, guard.ReservedMetadata(crd))
	case guard.CRDHash(crd) != guard.CRDHash(checked[i]):
		return operatorkit.WithReason(tenancyv1.ReasonCatalogChanged, fmt.Errorf("InstallPlan %s/%s: CRD %s differs from the bundle's the controller checked and applied: %w; not approving it (it reads the bundle again)",
			ip.Namespace, ip.Name, crd.Name, errCatalogChanged))
	}
	return nil
}

// aggregatesInto names how labels would add a role's rules to other
// roles: an aggregate-to label, or the selector of an aggregated role
// they match; "" for neither.
func aggregatesInto(l map[string]string, aggregators []labels.Selector) string {
	for k := range l {
		if strings.HasPrefix(k, guard.AggregateLabelPrefix) {
			return "label " + k
		}
	}
	for _, sel := range aggregators {
		if sel.Matches(labels.Set(l)) {
			return "its labels match " + sel.String()
		}
	}
	return ""
}

// notReference refuses a step whose manifest is a reference to a bundle
// OLM unpacked into a ConfigMap (a catalog of bundle images), not the
// object itself.
func notReference(ip *operatorsv1alpha1.InstallPlan, step *operatorsv1alpha1.Step) error {
	var head struct {
		Kind              string `json:"kind"`
		CatalogSourceName string `json:"catalogSourceName"`
	}
	if json.Unmarshal([]byte(step.Resource.Manifest), &head) == nil && head.Kind == "ConfigMap" && step.Resource.Kind != "ConfigMap" && head.CatalogSourceName != "" {
		return operatorkit.Terminal(tenancyv1.ReasonBundleReference, fmt.Errorf("InstallPlan %s/%s: step %s %s refers to a bundle OLM unpacked from its image; the controller reads only bundles a catalog serves whole "+
			"(a file-based catalog whose bundles carry olm.bundle.object properties, as opm render writes them), so it cannot check this one: use such a catalog, or the bundle source (spec.operators[].bundle), which reads bundle images itself",
			ip.Namespace, ip.Name, step.Resource.Kind, step.Resource.Name))
	}
	return nil
}

// decodeStep reads the object of an InstallPlan step, which OLM keeps as
// JSON, into obj, with OLM's marks: managed, and for a cluster-scoped
// object owned by the step's CSV.
func decodeStep(ip *operatorsv1alpha1.InstallPlan, step *operatorsv1alpha1.Step, obj client.Object) error {
	if err := json.Unmarshal([]byte(step.Resource.Manifest), obj); err != nil {
		return fmt.Errorf("InstallPlan %s/%s: reading step %s %s: %w", ip.Namespace, ip.Name, step.Resource.Kind, step.Resource.Name, err)
	}
	if obj.GetName() != step.Resource.Name {
		return fmt.Errorf("InstallPlan %s/%s: step %s %s holds an object named %q", ip.Namespace, ip.Name, step.Resource.Kind, step.Resource.Name, obj.GetName())
	}
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[olmManagedLabel] = "true"
	if _, csv := obj.(*operatorsv1alpha1.ClusterServiceVersion); !csv {
		labels[olmOwnerLabel], labels[olmOwnerNamespaceLabel] = step.Resolving, ip.Namespace
	}
	obj.SetLabels(labels)
	obj.SetNamespace("")
	obj.SetResourceVersion("")
	return nil
}

// writePlanObject creates obj, or updates live, the object of that name
// planObject found to be OLM's for the same CSV and namespace.
func (c *olmBackend) writePlanObject(ctx context.Context, ip *operatorsv1alpha1.InstallPlan, obj, live client.Object) error {
	if live == nil {
		if err := c.client.Create(ctx, obj, client.FieldOwner(FieldManager)); err != nil {
			return fmt.Errorf("InstallPlan %s/%s: creating %s %s: %w", ip.Namespace, ip.Name, kindOf(obj), obj.GetName(), err)
		}
		return nil
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	if same(live, obj) {
		return nil
	}
	if err := c.client.Update(ctx, obj, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("InstallPlan %s/%s: updating %s %s: %w", ip.Namespace, ip.Name, kindOf(obj), obj.GetName(), err)
	}
	return nil
}

// planObject returns the live object of obj's name, nil if there is none,
// and refuses one that is not OLM's for csv in the plan's namespace.
func (c *olmBackend) planObject(ctx context.Context, ip *operatorsv1alpha1.InstallPlan, csv string, obj client.Object) (client.Object, error) {
	live := obj.DeepCopyObject().(client.Object)
	if err := c.reader.Get(ctx, client.ObjectKeyFromObject(obj), live); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if l := live.GetLabels(); l[olmOwnerLabel] != csv || l[olmOwnerNamespaceLabel] != ip.Namespace {
		return nil, fmt.Errorf("InstallPlan %s/%s: %s %s already exists and is not OLM's for %s in %s: not approving it; remove it, or ask a cluster admin", ip.Namespace, ip.Name,
			kindOf(obj), obj.GetName(), csv, ip.Namespace)
	}
	return live, nil
}

// kindOf names the kind of an RBAC object.
func kindOf(obj client.Object) string {
	if _, ok := obj.(*rbacv1.ClusterRole); ok {
		return "ClusterRole"
	}
	return "ClusterRoleBinding"
}

// same compares the rules or the binding of two RBAC objects.
func same(live, want client.Object) bool {
	switch w := want.(type) {
	case *rbacv1.ClusterRole:
		return equality.Semantic.DeepEqual(live.(*rbacv1.ClusterRole).Rules, w.Rules) && labelsCover(live.GetLabels(), w.Labels)
	case *rbacv1.ClusterRoleBinding:
		l := live.(*rbacv1.ClusterRoleBinding)
		return l.RoleRef == w.RoleRef && slices.Equal(l.Subjects, w.Subjects) && labelsCover(l.Labels, w.Labels)
	}
	return false
}

// labelsCover reports whether have holds every label of want.
func labelsCover(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
