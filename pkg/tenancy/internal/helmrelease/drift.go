package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// driftKinds are the release objects an informer follows, with the typed
// object their cached copy is read into. The cache holds them slimmed
// (slimRelease): a cached copy only tells whether the object changed
// since it was last seen to match; a changed one is read live.
var driftKinds = map[schema.GroupKind]func() client.Object{
	{Group: "apps", Kind: "Deployment"}:                       func() client.Object { return &appsv1.Deployment{} },
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:        func() client.Object { return &rbacv1.Role{} },
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: func() client.Object { return &rbacv1.RoleBinding{} },
	{Kind: "ServiceAccount"}:                                  func() client.Object { return &corev1.ServiceAccount{} },
}

// DriftMemo remembers, per object, the resourceVersion last seen to match
// the manifest: an unchanged object is not read again, so a steady state
// costs no request.
type DriftMemo struct {
	mu sync.Mutex
	Rv map[string]string
	// Parsed holds each release's drift objects, by namespace/release,
	// for the revision they were read from: a steady state parses nothing.
	Parsed map[string]ParsedRelease
	// Swept is when each release's unwatched objects were last read, by
	// namespace/release.
	Swept map[string]time.Time
	// restores are the recent restores of each object, by driftKey.
	restores map[string]restores
}

// restores counts an object's restores since the last quiet spell.
type restores struct {
	n    int
	last time.Time
}

// Restores of one object back off: the first freeRestores are immediate,
// then each waits twice as long as the last, from restoreBackoff up to
// maxRestoreWait. Whoever keeps changing the object (an owner's
// autoscaler made before the scale guardrail armed, a controller of the
// cluster) cannot make the controller fight it at the API server's
// expense: a fight settles at one restore per maxRestoreWait. An object
// left alone for restoreQuiet, longer than any wait, starts over.
const (
	freeRestores   = 3
	restoreBackoff = 10 * time.Second
	maxRestoreWait = 10 * time.Minute
	restoreQuiet   = 2 * maxRestoreWait
)

// restoreWait is how long a restore of key must wait, at now.
func (m *DriftMemo) restoreWait(key string, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.restores[key]
	if r.n < freeRestores || now.Sub(r.last) >= restoreQuiet {
		return 0
	}
	wait := min(restoreBackoff<<min(r.n-freeRestores, 10), maxRestoreWait)
	return max(r.last.Add(wait).Sub(now), 0)
}

// restoredAt records a restore of key at now.
func (m *DriftMemo) restoredAt(key string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.restores == nil {
		m.restores = map[string]restores{}
	}
	r := m.restores[key]
	if now.Sub(r.last) >= restoreQuiet {
		r.n = 0
	}
	m.restores[key] = restores{n: r.n + 1, last: now}
}

type ParsedRelease struct {
	version int
	labels  string // the owned labels set on objs
	Objs    []driftObject
	// scaled are the workloads an HPA of the release scales, by
	// Kind/name, with the HPA's minReplicas: their replicas are the HPA's.
	scaled map[string]int64
	// hooks are the release's webhook configurations, cluster-scoped,
	// which keepWebhooksNarrowed keeps narrowed.
	hooks []driftObject
}

// driftObject is one object of a release's manifest that drift correction
// keeps, held as gzipped JSON (records.Pack): a small part of the memory of its
// parsed form, which is needed only when the object has changed.
type driftObject struct {
	Gvk    schema.GroupVersionKind
	Ref    client.ObjectKey
	packed []byte
	// watched: of driftKinds, which an informer follows; the others are
	// read live every Options.DriftInterval (sweep).
	watched bool
}

// key names the object in the memo.
func (o driftObject) key() string { return driftKey(o.Ref.Namespace, o.Gvk.Kind, o.Ref.Name) }

// driftKey names an object in the memo: namespace/Kind/name.
func driftKey(namespace, kind, name string) string { return namespace + "/" + kind + "/" + name }

func (o driftObject) decode() (*unstructured.Unstructured, error) {
	raw, err := records.Unpack(o.packed)
	if err != nil {
		return nil, fmt.Errorf("release object %s: %w", o.key(), err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("release object %s: %w", o.key(), err)
	}
	return u, nil
}

// objects returns the drift objects of rel with the owned labels, parsed
// once per revision and labels (a tenant that moved to another shard keeps
// its revision).
func (m *DriftMemo) objects(rel *release.Release, ns string, t *tenancyv1.Tenant, labels map[string]string, namespaced namespacedFunc) ParsedRelease {
	key, set := ns+"/"+rel.Name, fmt.Sprint(labels)
	m.mu.Lock()
	p, ok := m.Parsed[key]
	m.mu.Unlock()
	if ok && p.version == rel.Version && p.labels == set {
		return p
	}
	p = driftObjects(rel.Manifest, ns, t, labels, namespaced)
	p.version, p.labels = rel.Version, set
	m.mu.Lock()
	m.Parsed[key] = p
	m.mu.Unlock()
	return p
}

// Release returns the drift objects last parsed for release key
// (namespace/name), if any.
func (m *DriftMemo) Release(key string) (ParsedRelease, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.Parsed[key]
	return p, ok
}

// sweepDue reports whether the unwatched objects of release key are due
// to be read, and if not, how long until they are.
func (m *DriftMemo) sweepDue(key string, now time.Time, every time.Duration) (bool, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.Swept[key]
	if !ok || now.Sub(last) >= every {
		return true, every
	}
	return false, every - now.Sub(last)
}

func (m *DriftMemo) sweptAt(key string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Swept[key] = now
}

// Forget drops what is remembered about the objects of namespace ns.
func (m *DriftMemo) Forget(ns string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.Rv {
		if strings.HasPrefix(k, ns+"/") {
			delete(m.Rv, k)
		}
	}
	for k := range m.Parsed {
		if strings.HasPrefix(k, ns+"/") {
			delete(m.Parsed, k)
		}
	}
	for k := range m.Swept {
		if strings.HasPrefix(k, ns+"/") {
			delete(m.Swept, k)
		}
	}
	for k := range m.restores {
		if strings.HasPrefix(k, ns+"/") {
			delete(m.restores, k)
		}
	}
}

func (m *DriftMemo) synced(key, rv string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Rv[key] == rv
}

func (m *DriftMemo) set(key, rv string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Rv[key] = rv
}

// correctDrift restores the objects of the release that someone other
// than the controller changed or deleted, from the deployed revision's
// manifest, with a server-side apply of the controller's field manager as
// the tenant's actor (flux's drift detection). Deployments, Roles,
// RoleBindings and ServiceAccounts are followed by informers and compared
// on every reconcile; the release's other namespaced objects are read as
// the actor every Options.DriftInterval. The fields an ignore rule names
// (spec.operators[].driftIgnore, and the replicas of a workload an HPA of
// the release scales) are left as they are. Only objects in the tenant's
// namespaces are touched; the release's webhook configurations are kept
// narrowed to the tenant (keepWebhooksNarrowed).
func (c *Reconciler) correctDrift(r *releaseRun, rel *release.Release, ns string, rules []tenancyv1.DriftIgnoreRule) error {
	ctx, t := r.ctx, r.t
	parsed := c.Drift.objects(rel, ns, t, r.labels, c.namespaced)
	key := ns + "/" + rel.Name
	now := time.Now()
	sweep, next := c.Drift.sweepDue(key, now, c.DriftInterval)
	if slices.ContainsFunc(parsed.Objs, func(o driftObject) bool { return !o.watched }) {
		r.requeue(next) // the next sweep; informers bring the rest
	}
	d := &drifter{c: c, t: t, rel: rel, rules: rules, scaled: parsed.scaled, requeue: r.requeue, now: now}
	// One object that cannot be restored (the API server refuses what an
	// owner made of it) does not keep the others as they drifted.
	var errs []error
	for _, o := range parsed.Objs {
		if !o.watched && !sweep {
			continue
		}
		if err := d.correct(ctx, o); err != nil {
			errs = append(errs, err)
		}
	}
	if sweep {
		c.Drift.sweptAt(key, now)
	}
	// The release's webhook configurations: cluster-scoped, but the
	// release's own, and narrowed to the tenant whatever made them.
	if err := c.keepWebhooksNarrowed(r, rel, ns); err != nil {
		errs = append(errs, err)
	}
	if len(d.restored) > 0 {
		sort.Strings(d.restored)
		c.event(t, "Warning", "DriftCorrected", "release %s: restored %s, changed or deleted outside the controller", rel.Name, strings.Join(d.restored, ", "))
	}
	return errors.Join(errs...)
}

// drifter corrects the objects of one release.
type drifter struct {
	c        *Reconciler
	t        *tenancyv1.Tenant
	rel      *release.Release
	rules    []tenancyv1.DriftIgnoreRule
	scaled   map[string]int64 // the HPA-scaled workloads and their minReplicas
	actor    client.Client    // the tenant's actor reads the unwatched and restores (actor.go)
	restored []string
	requeue  func(time.Duration) // when a restore backs off
	now      time.Time
}

func (d *drifter) actorClient() (client.Client, error) {
	if d.actor == nil {
		a, err := d.c.Actor(d.t.Name)
		if err != nil {
			return nil, err
		}
		d.actor = a
	}
	return d.actor, nil
}

// correct restores o if its live object differs from it.
func (d *drifter) correct(ctx context.Context, o driftObject) error {
	c, key := d.c, o.key()
	var reader client.Reader = c.Reader
	if o.watched {
		cached := driftKinds[o.Gvk.GroupKind()]()
		err := c.Client.Get(ctx, o.Ref, cached)
		if err == nil && c.Drift.synced(key, cached.GetResourceVersion()) {
			return nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	} else {
		actor, err := d.actorClient()
		if err != nil {
			return err
		}
		reader = actor
	}
	obj, err := o.decode()
	if err != nil {
		return err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err = reader.Get(ctx, client.ObjectKeyFromObject(obj), live)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	if err == nil {
		if !o.watched && c.Drift.synced(key, live.GetResourceVersion()) {
			return nil
		}
		keepIgnored(obj, live, d.rulesFor(obj, live))
		drifted, err := operatorkit.Drifted(obj.Object, live.Object)
		if err != nil {
			return err
		}
		if !drifted {
			c.Drift.set(key, live.GetResourceVersion())
			return nil
		}
	}
	if wait := c.Drift.restoreWait(key, d.now); wait > 0 {
		d.requeue(wait)
		return nil
	}
	actor, err := d.actorClient()
	if err != nil {
		return err
	}
	applied := obj.DeepCopy() // the apply writes the response into it
	if err := actor.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner(d.c.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("restoring %s %s/%s from release %s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), d.rel.Name, err)
	}
	if rv := applied.GetResourceVersion(); rv != "" {
		c.Drift.set(key, rv)
	}
	c.Drift.restoredAt(key, d.now)
	driftCorrections.WithLabelValues(obj.GetKind()).Inc()
	d.restored = append(d.restored, obj.GetKind()+" "+obj.GetName())
	return nil
}

// rulesFor are the ignore rules for obj: the operator's, and for a
// workload an HPA of the release scales, its replicas while the HPA
// could have set them (at least minReplicas; an HPA does not scale up
// from 0).
func (d *drifter) rulesFor(obj, live *unstructured.Unstructured) []tenancyv1.DriftIgnoreRule {
	least, ok := d.scaled[obj.GetKind()+"/"+obj.GetName()]
	if !ok {
		return d.rules
	}
	if replicas, found := intField(live.Object, "spec", "replicas"); !found || replicas < max(least, 1) {
		return d.rules
	}
	return append(slices.Clip(d.rules), tenancyv1.DriftIgnoreRule{Paths: []string{"/spec/replicas"}})
}

// namespacedFunc reports whether objects of a kind are namespaced.
type namespacedFunc func(schema.GroupVersionKind) bool

// namespaced reports whether the API server serves gvk as a namespaced
// kind; an unknown kind is not drift-corrected.
func (c *Reconciler) namespaced(gvk schema.GroupVersionKind) bool {
	m, err := c.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}

// driftObjects are the manifest's namespaced objects in the tenant's
// namespaces, with labels set as the render guard sets them (after a
// tenant moves shard, drift correction moves its release objects with
// it), and the workloads its HPAs scale.
func driftObjects(manifest, ns string, t *tenancyv1.Tenant, labels map[string]string, namespaced namespacedFunc) ParsedRelease {
	var p ParsedRelease
	for _, doc := range guard.SplitManifest(manifest) {
		u := guard.ParseDoc(doc).Obj
		if u == nil || u.GetName() == "" {
			continue
		}
		if guard.IsWebhookConfiguration(u.GroupVersionKind()) {
			guard.SetLabels(u, labels)
			if raw, err := u.MarshalJSON(); err == nil {
				p.hooks = append(p.hooks, driftObject{Gvk: u.GroupVersionKind(), Ref: client.ObjectKey{Name: u.GetName()}, packed: records.Pack(raw)})
			}
			continue
		}
		if !namespaced(u.GroupVersionKind()) {
			continue
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
		if !slices.Contains(t.Spec.Namespaces, u.GetNamespace()) {
			continue
		}
		switch u.GroupVersionKind().GroupKind() {
		case schema.GroupKind{Group: "batch", Kind: "Job"}, schema.GroupKind{Kind: "Pod"}:
			// They run to completion: one gone (a TTL, an owner cleaning up)
			// is not brought back to run again.
			continue
		case schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "kind")
			name, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "name")
			least, found := intField(u.Object, "spec", "minReplicas")
			if !found {
				least = 1
			}
			if p.scaled == nil {
				p.scaled = map[string]int64{}
			}
			p.scaled[kind+"/"+name] = least
		}
		guard.SetLabels(u, labels)
		raw, err := u.MarshalJSON()
		if err != nil {
			continue // it parsed from the manifest: it marshals
		}
		_, watched := driftKinds[u.GroupVersionKind().GroupKind()]
		p.Objs = append(p.Objs, driftObject{Gvk: u.GroupVersionKind(), Ref: client.ObjectKeyFromObject(u), packed: records.Pack(raw), watched: watched})
	}
	p.Objs = slices.Clip(p.Objs)
	return p
}

// intField is the integer at fields of obj, whether JSON decoding made it
// an int64 (the API's objects) or a float64 (a parsed manifest).
func intField(obj map[string]any, fields ...string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}
