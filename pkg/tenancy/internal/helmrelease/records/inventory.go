package records

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Recorded is a release of a tenant that has records in the storage
// namespace: its name and the namespace it is recorded for.
type Recorded struct {
	Namespace, Name string
}

// Releases lists every release of tenant that has a record, wherever it
// is recorded, sorted: what the controller installed for the tenant and
// has not uninstalled, whatever its spec says now (an operator or a
// namespace taken out of it, a namespace deleted meanwhile). Read from
// the index (with this process's writes it does not show yet), or a LIST
// of the storage namespace while the index cannot answer. The records
// are the controller's, in its own namespace: nothing a tenant writes.
func (s *Store) Releases(ctx context.Context, tenant string) ([]Recorded, error) {
	var metas []metav1.Object
	if s.synced() {
		objs, err := s.index.GetIndexer().ByIndex(byTenant, tenant)
		if err != nil {
			return nil, fmt.Errorf("reading the release records of tenant %s: %w", tenant, err)
		}
		mine := s.unshownWhere(func(w pendingWrite) bool { return w.tenant == tenant })
		for _, o := range objs {
			if m, ok := o.(metav1.Object); ok {
				if _, written := mine[m.GetName()]; !written {
					metas = append(metas, m)
				}
			}
		}
		for name, w := range mine {
			if w.rv != "" {
				metas = append(metas, &metav1.ObjectMeta{Name: name, Labels: w.labels})
			}
		}
	} else {
		sel := labels.SelectorFromSet(labels.Set{"owner": "helm", LabelRecordTenant: tenant})
		list, err := s.secrets.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return nil, fmt.Errorf("listing the release records of tenant %s: %w", tenant, err)
		}
		for i := range list.Items {
			metas = append(metas, &list.Items[i].ObjectMeta)
		}
	}
	var out []Recorded
	for _, m := range metas {
		l := m.GetLabels()
		if l[LabelRecordTenant] != tenant || l["owner"] != "helm" || l["name"] == "" || l[LabelRecordNamespace] == "" {
			continue
		}
		out = append(out, Recorded{Namespace: l[LabelRecordNamespace], Name: l["name"]})
	}
	slices.SortFunc(out, func(a, b Recorded) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return slices.Compact(out), nil
}
