package tenancy

import (
	"fmt"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/policy"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// objects are the OperatorGroup and the CatalogSources the controller
// creates in the tenant's first namespace, and the OperatorGroup's
// ServiceAccount with its rights (installerObjects).
func (*olmBackend) objects(t *tenancyv1.Tenant, s settings) []client.Object {
	ns := t.Spec.Namespaces[0]
	labels := s.ownedLabels(t.Name)
	var objs []client.Object
	for _, op := range t.Spec.Operators {
		if op.OLM == nil {
			continue
		}
		if len(objs) == 0 {
			objs = append(objs, installerObjects(t, s)...)
			objs = append(objs, &operatorsv1.OperatorGroup{
				ObjectMeta: metav1.ObjectMeta{Name: OperatorGroupName, Namespace: ns, Labels: labels},
				Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: t.Spec.Namespaces, ServiceAccountName: OperatorGroupName},
			})
		}
		// Only an address: a catalog image would run its registry pod in
		// the tenant's namespace, which Check refuses.
		cat := op.OLM.Catalog
		if cat.Address == "" {
			continue
		}
		objs = append(objs, &operatorsv1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Name: catalogSourceName(op), Namespace: ns, Labels: labels},
			Spec: operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: cat.Address,
				DisplayName: fmt.Sprintf("%s of tenant %s", op.OLM.Package, t.Name)},
		})
	}
	return objs
}

// installerObjects are the ServiceAccount the OperatorGroup names and its
// rights. OLM runs InstallPlans and installs CSVs as that ServiceAccount
// (CRDs excepted), so what a CSV, or a CSV the owner writes, makes OLM do
// is bounded by what it holds: in each tenant namespace what the owners
// hold (admin), the operators' own kinds and the platform's named
// ClusterRoles; nothing cluster-wide. It lives in the tenant's namespace,
// as OLM requires, so the owners can act as it: it holds nothing they do
// not. It may not create CSVs (a CSV makes OLM act with its own rights
// on the CRDs it claims): the controller creates the plan's CSV, and
// grants its clusterPermissions, itself, after its checks (grantPlan).
func installerObjects(t *tenancyv1.Tenant, s settings) []client.Object {
	labels := s.ownedLabels(t.Name)
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: OperatorGroupName, Namespace: t.Spec.Namespaces[0]}}
	objs := []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: OperatorGroupName, Namespace: t.Spec.Namespaces[0], Labels: labels}}}
	for _, ns := range t.Spec.Namespaces {
		bind := func(name, kind, role string) *rbacv1.RoleBinding {
			return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}}
		}
		objs = append(objs, bind(OperatorGroupName, "ClusterRole", policy.OwnerRole), bind(OperatorGroupName+"-kinds", "Role", KindsRole))
		for _, role := range sortedUnique(s.ClusterRoles) {
			objs = append(objs, bind(OperatorGroupName+"-role-"+role, "ClusterRole", role))
		}
	}
	return objs
}
