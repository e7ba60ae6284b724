package records

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// Labels on the release records the controller keeps in its own
// namespace: they say whose record it is, so that one tenant's release
// never reads another's history.
const (
	LabelRecordTenant    = "tenancy.opctl.dev/tenant"
	LabelRecordNamespace = "tenancy.opctl.dev/release-namespace"
)

// HelmKeyPrefix starts the Secret name Helm gives a release record.
const HelmKeyPrefix = "sh.helm.release.v1."

// recordName is the Secret name of a release record in the storage
// namespace: Helm's key with the tenant and the release namespace put in
// front of the release name, so that every tenant's releases of the same
// name live side by side.
func recordName(tenant, namespace, key string) string {
	return HelmKeyPrefix + tenant + "." + namespace + "." + strings.TrimPrefix(key, HelmKeyPrefix)
}

// pendingTTL bounds how long a write of this process that the record
// index has not shown yet sends reads of its release to the API server.
const pendingTTL = time.Minute

// recordStore keeps the release records of every tenant in the storage
// namespace. Which records exist, with their labels and resourceVersions,
// comes from a metadata informer, so that reading a release's history
// costs a GET of the records it needs (served from the API server's watch
// cache) instead of a LIST scanning every tenant's records. Until the
// index shows a write of this process, reads take the write's name,
// resourceVersion and labels in its place: a reconcile always sees its
// own writes.
type Store struct {
	secrets   typedcorev1.SecretInterface // of the storage namespace
	Namespace string                      // the storage namespace
	index     cache.SharedIndexInformer   // nil: every read is a LIST

	mu sync.Mutex
	// seen is the resourceVersion this process last read or wrote of
	// each record: the precondition of its next update or delete.
	seen    map[string]string
	pending map[string]pendingWrite
}

// pendingWrite is a write of this process the index has not shown yet.
type pendingWrite struct {
	tenant, namespace string
	rv                string            // "" for a delete
	labels            map[string]string // the record's, as written
	at                time.Time
}

func NewStore(secrets typedcorev1.SecretInterface, namespace string) *Store {
	return &Store{secrets: secrets, Namespace: namespace, seen: map[string]string{}, pending: map[string]pendingWrite{}}
}

// byOwner indexes records by tenant and release namespace, byTenant by
// tenant alone.
const (
	byOwner  = "owner"
	byTenant = "tenant"
)

func indexByTenant(o any) ([]string, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, nil
	}
	return []string{m.GetLabels()[LabelRecordTenant]}, nil
}

func ownerKey(tenant, namespace string) string { return tenant + "/" + namespace }

func indexByOwner(o any) ([]string, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, nil
	}
	l := m.GetLabels()
	return []string{ownerKey(l[LabelRecordTenant], l[LabelRecordNamespace])}, nil
}

// WithIndex gives the store a metadata informer of its records, without
// their managedFields. It runs under Start.
func (s *Store) WithIndex(client metadata.Interface) {
	hasTenant, _ := labels.NewRequirement(LabelRecordTenant, selection.Exists, nil)
	sel := labels.SelectorFromSet(labels.Set{"owner": "helm"}).Add(*hasTenant).String()
	inf := metadatainformer.NewFilteredMetadataInformer(client, SecretsResource, s.Namespace, 0, cache.Indexers{byOwner: indexByOwner, byTenant: indexByTenant},
		func(o *metav1.ListOptions) { o.LabelSelector = sel })
	_ = inf.Informer().SetTransform(cache.TransformFunc(func(o any) (any, error) {
		if m, ok := o.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		return o, nil
	}))
	s.index = inf.Informer()
}

// Start runs the index until ctx ends: a manager runnable of every
// replica.
func (s *Store) Start(ctx context.Context) error {
	if s.index != nil {
		s.index.RunWithContext(ctx)
	}
	return nil
}

// NeedLeaderElection is false: every shard reads records.
func (s *Store) NeedLeaderElection() bool { return false }

// wrote notes a write of record name for tenant's releases in namespace:
// its resourceVersion and labels, or rv "" for a delete.
func (s *Store) wrote(tenant, namespace, name, rv string, labels map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rv == "" {
		delete(s.seen, name)
	} else {
		s.seen[name] = rv
	}
	if s.index != nil {
		s.pending[name] = pendingWrite{tenant: tenant, namespace: namespace, rv: rv, labels: labels, at: time.Now()}
	}
}

// read notes the resourceVersion a record was read at.
func (s *Store) read(name, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[name] = rv
}

// precondition is the resourceVersion to write record name at, or "".
func (s *Store) precondition(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[name]
}

// synced reports whether the index can answer: it runs and has listed.
func (s *Store) synced() bool { return s.index != nil && s.index.HasSynced() }

// unshown returns this process's writes to tenant's records of namespace
// that the index does not show yet, by record name. It forgets the writes
// the index shows, and those older than pendingTTL.
func (s *Store) unshown(tenant, namespace string) map[string]pendingWrite {
	return s.unshownWhere(func(w pendingWrite) bool { return w.tenant == tenant && w.namespace == namespace })
}

// unshownWhere is unshown of the writes mine selects.
func (s *Store) unshownWhere(mine func(pendingWrite) bool) map[string]pendingWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string]pendingWrite
	for name, w := range s.pending {
		if s.shown(name, w) || time.Since(w.at) > pendingTTL {
			delete(s.pending, name)
			continue
		}
		if mine(w) {
			if out == nil {
				out = map[string]pendingWrite{}
			}
			out[name] = w
		}
	}
	return out
}

// shown reports whether the index shows write w of record name.
func (s *Store) shown(name string, w pendingWrite) bool {
	o, exists, err := s.index.GetIndexer().GetByKey(s.Namespace + "/" + name)
	if err != nil {
		return false
	}
	if w.rv == "" {
		return !exists
	}
	if !exists {
		return false
	}
	m, ok := o.(metav1.Object)
	return ok && notOlder(m.GetResourceVersion(), w.rv)
}

// ownedBy is want with the labels of tenant's records in namespace.
func ownedBy(tenant, namespace string, want map[string]string) labels.Set {
	set := labels.Set{LabelRecordTenant: tenant, LabelRecordNamespace: namespace}
	for k, v := range want {
		set[k] = v
	}
	return set
}

// records returns the records that sel, a selector of ownedBy, matches:
// the index's, with this process's writes that it does not show yet in
// their place, so that a reconcile reads its own writes without a LIST.
// ok is false while the index cannot answer.
func (s *Store) records(sel labels.Selector) (out []metav1.Object, ok bool) {
	if !s.synced() {
		return nil, false
	}
	tenant, _ := sel.RequiresExactMatch(LabelRecordTenant)
	namespace, _ := sel.RequiresExactMatch(LabelRecordNamespace)
	objs, err := s.index.GetIndexer().ByIndex(byOwner, ownerKey(tenant, namespace))
	if err != nil {
		return nil, false
	}
	mine := s.unshown(tenant, namespace)
	for _, o := range objs {
		m, ok := o.(metav1.Object)
		if !ok {
			continue
		}
		if _, written := mine[m.GetName()]; !written && sel.Matches(labels.Set(m.GetLabels())) {
			out = append(out, m)
		}
	}
	for name, w := range mine {
		if w.rv != "" && sel.Matches(labels.Set(w.labels)) {
			out = append(out, &metav1.ObjectMeta{Namespace: s.Namespace, Name: name, ResourceVersion: w.rv, Labels: w.labels})
		}
	}
	return out, true
}

// notOlder reports whether resourceVersion a is b or newer. Where either
// is not a number (the API server does not promise one), only equality
// counts.
func notOlder(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return a == b
	}
	return x >= y
}

// Indexed reports whether the index shows every write of this process to
// tenant's releases in namespace.
func (s *Store) Indexed(tenant, namespace string) bool {
	return s.synced() && len(s.unshown(tenant, namespace)) == 0
}
