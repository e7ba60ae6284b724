package tenancy

import (
	"fmt"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// objects are the OperatorGroup and the CatalogSources the controller
// creates in the tenant's first namespace.
func (*olmBackend) objects(t *tenancyv1.Tenant, labels map[string]string) []client.Object {
	ns := t.Spec.Namespaces[0]
	var objs []client.Object
	for _, op := range t.Spec.Operators {
		if op.OLM == nil {
			continue
		}
		if len(objs) == 0 {
			objs = append(objs, &operatorsv1.OperatorGroup{
				ObjectMeta: metav1.ObjectMeta{Name: OperatorGroupName, Namespace: ns, Labels: labels},
				Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: t.Spec.Namespaces},
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
