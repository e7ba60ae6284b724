package tenancy

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// driftKinds are the release objects kept as the release manifest says,
// with the typed object their cached copy is read into. The cache holds
// them slimmed (slimRelease): a cached copy only tells whether the object
// changed since it was last seen to match; a changed one is read live.
var driftKinds = map[string]func() client.Object{
	"Deployment":     func() client.Object { return &appsv1.Deployment{} },
	"Role":           func() client.Object { return &rbacv1.Role{} },
	"RoleBinding":    func() client.Object { return &rbacv1.RoleBinding{} },
	"ServiceAccount": func() client.Object { return &corev1.ServiceAccount{} },
}

// driftMemo remembers, per object, the resourceVersion last seen to match
// the manifest: an unchanged object is not read again, so a steady state
// costs no request.
type driftMemo struct {
	mu sync.Mutex
	rv map[string]string
	// parsed holds each release's drift objects, by namespace/release,
	// for the revision they were read from: a steady state parses nothing.
	parsed map[string]parsedRelease
}

type parsedRelease struct {
	version int
	labels  string // the owned labels set on objs
	objs    []driftObject
}

// driftObject is one object of a release's manifest that drift correction
// keeps, held as gzipped JSON (packed.go): a small part of the memory of its
// parsed form, which is needed only when the object has changed.
type driftObject struct {
	gvk    schema.GroupVersionKind
	ref    client.ObjectKey
	packed []byte
}

// key names the object in the memo.
func (o driftObject) key() string { return driftKey(o.ref.Namespace, o.gvk.Kind, o.ref.Name) }

// driftKey names an object in the memo: namespace/Kind/name.
func driftKey(namespace, kind, name string) string { return namespace + "/" + kind + "/" + name }

func (o driftObject) decode() (*unstructured.Unstructured, error) {
	raw, err := unpack(o.packed)
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
func (m *driftMemo) objects(rel *release.Release, ns string, t *tenancyv1.Tenant, labels map[string]string) []driftObject {
	key, set := ns+"/"+rel.Name, fmt.Sprint(labels)
	m.mu.Lock()
	p, ok := m.parsed[key]
	m.mu.Unlock()
	if ok && p.version == rel.Version && p.labels == set {
		return p.objs
	}
	objs := driftObjects(rel.Manifest, ns, t, labels)
	m.mu.Lock()
	m.parsed[key] = parsedRelease{version: rel.Version, labels: set, objs: objs}
	m.mu.Unlock()
	return objs
}

// forget drops what is remembered about the objects of namespace ns.
func (m *driftMemo) forget(ns string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.rv {
		if strings.HasPrefix(k, ns+"/") {
			delete(m.rv, k)
		}
	}
	for k := range m.parsed {
		if strings.HasPrefix(k, ns+"/") {
			delete(m.parsed, k)
		}
	}
}

func (m *driftMemo) synced(key, rv string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rv[key] == rv
}

func (m *driftMemo) set(key, rv string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rv[key] = rv
}

// correctDrift restores the release's Deployments, Roles, RoleBindings and
// ServiceAccounts that someone other than the controller changed or
// deleted, from the deployed revision's manifest, with a server-side apply
// of the controller's field manager as the tenant's actor (flux's drift
// detection). Only objects
// in the tenant's namespaces are touched.
func (c *Controller) correctDrift(ctx context.Context, p *plan, rel *release.Release, ns string) error {
	t := p.tenant
	var restored []string
	var actor client.Client // the tenant's actor restores (actor.go)
	for _, o := range c.drift.objects(rel, ns, t, p.settings.ownedLabels(t.Name)) {
		key := o.key()
		cached := driftKinds[o.gvk.Kind]()
		err := c.client.Get(ctx, o.ref, cached)
		if err == nil && c.drift.synced(key, cached.GetResourceVersion()) {
			continue
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		obj, derr := o.decode()
		if derr != nil {
			return derr
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		err = c.reader.Get(ctx, client.ObjectKeyFromObject(obj), live)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading %s: %w", key, err)
		}
		if err == nil {
			drifted, err := operatorkit.Drifted(obj.Object, live.Object)
			if err != nil {
				return err
			}
			if !drifted {
				c.drift.set(key, live.GetResourceVersion())
				continue
			}
		}
		if actor == nil {
			if actor, err = c.actorClient(t.Name); err != nil {
				return err
			}
		}
		applied := obj.DeepCopy() // the apply writes the response into it
		if err := actor.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("restoring %s %s/%s from release %s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), rel.Name, err)
		}
		if rv := applied.GetResourceVersion(); rv != "" {
			c.drift.set(key, rv)
		}
		driftCorrections.WithLabelValues(obj.GetKind()).Inc()
		restored = append(restored, obj.GetKind()+" "+obj.GetName())
	}
	if len(restored) > 0 {
		sort.Strings(restored)
		c.event(t, "Warning", "DriftCorrected", "release %s: restored %s, changed or deleted outside the controller", rel.Name, strings.Join(restored, ", "))
	}
	return nil
}

// driftObjects are the manifest's objects of driftKinds in the tenant's
// namespaces, with labels set as the render guard sets them: after a
// tenant moves shard, drift correction moves its release objects with it.
func driftObjects(manifest, ns string, t *tenancyv1.Tenant, labels map[string]string) []driftObject {
	var out []driftObject
	for _, doc := range splitManifest(manifest) {
		// Most of a release is of other kinds: those need no parse.
		if kind, sure := docKind(doc); sure && driftKinds[kind] == nil {
			continue
		}
		u := parseDoc(doc).obj
		if u == nil {
			continue
		}
		if _, ok := driftKinds[u.GetKind()]; !ok || u.GetName() == "" {
			continue
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
		if !slices.Contains(t.Spec.Namespaces, u.GetNamespace()) {
			continue
		}
		setLabels(u, labels)
		raw, err := u.MarshalJSON()
		if err != nil {
			continue // it parsed from the manifest: it marshals
		}
		out = append(out, driftObject{gvk: u.GroupVersionKind(), ref: client.ObjectKeyFromObject(u), packed: pack(raw)})
	}
	return slices.Clip(out)
}
