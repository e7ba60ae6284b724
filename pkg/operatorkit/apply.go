package operatorkit

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Outcome is what applying one object did.
type Outcome string

// Apply outcomes; they are also the result label of operatorkit_apply_total.
const (
	Created   Outcome = "created"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
	Adopted   Outcome = "adopted"
	Deferred  Outcome = "deferred"
	Failed    Outcome = "failed"
)

// ApplyResult is one applied object: the live object after the apply, or
// the desired one when Outcome is Deferred.
type ApplyResult struct {
	Object  client.Object
	Outcome Outcome
}

// Applier applies desired objects with server-side apply under one field
// manager, writing only when the desired state differs from the live one.
type Applier struct {
	// Client reads (from the cache) and writes.
	Client client.Client
	// Scheme knows every applied type.
	Scheme *runtime.Scheme
	// FieldManager names the server-side apply manager.
	FieldManager string
	// Recorder records an Event for every create, update and adoption.
	Recorder events.EventRecorder
	// LegacyFieldManagers are managers of earlier operator builds (or
	// kubectl client-side apply) whose fields this manager takes over, so
	// that fields it no longer sets are removed.
	LegacyFieldManagers []string
	// MaxCreates bounds the objects created in one Apply; the rest are
	// Deferred to the next reconcile. Zero means no bound.
	MaxCreates int
	// LiveReader, when set, is asked before creating an object the cache
	// does not have: with label-filtered informers, an object that exists
	// without the labels must be adopted (or refused), not overwritten.
	LiveReader client.Reader
	// AggregateEvents records one Event per Apply that lists what was
	// created, updated and adopted, instead of one Event per object: for
	// owners of many objects, where per-object Events double the writes.
	AggregateEvents bool
}

// Apply applies desired, owned by owner. Objects that exist without a
// controller are adopted when adopt is true and are a *ConflictError
// otherwise; objects with another controller are always a conflict.
func (a *Applier) Apply(ctx context.Context, owner Object, desired []client.Object, adopt bool) ([]ApplyResult, error) {
	results := make([]ApplyResult, 0, len(desired))
	creates := 0
	defer a.recordAll(owner, &results)
	newNamespaces := map[string]bool{}
	for _, obj := range desired {
		res, err := a.applyOne(ctx, owner, obj, adopt, &creates, newNamespaces)
		kind := kindOf(a.Scheme, obj)
		if err != nil {
			applyTotal.WithLabelValues(kind, string(Failed)).Inc()
			return results, err
		}
		applyTotal.WithLabelValues(kind, string(res.Outcome)).Inc()
		results = append(results, res)
	}
	return results, nil
}

// recordAll records the aggregated Event of one Apply.
func (a *Applier) recordAll(owner Object, results *[]ApplyResult) {
	if a.Recorder == nil || !a.AggregateEvents {
		return
	}
	byOutcome := map[Outcome][]string{}
	for _, r := range *results {
		if r.Outcome == Created || r.Outcome == Updated || r.Outcome == Adopted {
			byOutcome[r.Outcome] = append(byOutcome[r.Outcome], kindOf(a.Scheme, r.Object)+" "+r.Object.GetName())
		}
	}
	for _, o := range []Outcome{Created, Updated, Adopted} {
		if objs := byOutcome[o]; len(objs) > 0 {
			a.Recorder.Eventf(owner, nil, "Normal", string(o), string(o), "%s %s", o, strings.Join(objs, ", "))
		}
	}
}

// newLive makes the object a live read goes into: of obj's type, or
// unstructured for an unstructured obj, whose kind (another project's
// CRD, say) the scheme need not know.
func newLive(scheme *runtime.Scheme, obj client.Object, gvk schema.GroupVersionKind) (client.Object, error) {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	live, err := scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", gvk.Kind, err)
	}
	return live.(client.Object), nil
}

// applyOne applies one object. newNamespaces are the namespaces this
// Apply created: nothing can exist in them yet, so no live read is needed.
func (a *Applier) applyOne(ctx context.Context, owner Object, obj client.Object, adopt bool, creates *int, newNamespaces map[string]bool) (ApplyResult, error) {
	gvk, err := apiutil.GVKForObject(obj, a.Scheme)
	if err != nil {
		return ApplyResult{}, fmt.Errorf("applying %T: %w", obj, err)
	}
	if obj.GetNamespace() == "" && owner.GetNamespace() != "" {
		obj.SetNamespace(owner.GetNamespace())
	}
	if err := controllerutil.SetControllerReference(owner, obj, a.Scheme); err != nil {
		return ApplyResult{}, fmt.Errorf("setting owner of %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	desired, hash, paths, err := toApply(obj, gvk.GroupVersion().String(), gvk.Kind)
	if err != nil {
		return ApplyResult{}, err
	}
	key := client.ObjectKeyFromObject(obj)
	liveObj, err := newLive(a.Scheme, obj, gvk)
	if err != nil {
		return ApplyResult{}, err
	}
	outcome := Updated
	err = a.Client.Get(ctx, key, liveObj)
	if apierrors.IsNotFound(err) && a.LiveReader != nil && !newNamespaces[obj.GetNamespace()] {
		// A label-filtered cache does not see objects we do not own yet.
		err = a.LiveReader.Get(ctx, key, liveObj)
	}
	switch {
	case apierrors.IsNotFound(err):
		if a.MaxCreates > 0 && *creates >= a.MaxCreates {
			return ApplyResult{Object: obj, Outcome: Deferred}, nil
		}
		*creates++
		outcome = Created
	case err != nil:
		return ApplyResult{}, fmt.Errorf("reading %s %s: %w", gvk.Kind, key, err)
	default:
		if outcome, err = a.ownership(owner, liveObj, gvk.Kind, adopt); err != nil {
			return ApplyResult{}, err
		}
		migrated, err := a.migrateManagers(ctx, liveObj)
		if err != nil {
			return ApplyResult{}, err
		}
		if outcome == Updated && !migrated {
			same, err := matches(desired, hash, paths, liveObj)
			if err != nil {
				return ApplyResult{}, err
			}
			if same {
				return ApplyResult{Object: liveObj, Outcome: Unchanged}, nil
			}
		}
	}
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired),
		client.FieldOwner(a.FieldManager), client.ForceOwnership); err != nil {
		return ApplyResult{}, fmt.Errorf("applying %s %s: %w", gvk.Kind, key, err)
	}
	a.record(owner, desired, outcome, gvk.Kind)
	if outcome == Created && gvk.Kind == "Namespace" && gvk.Group == "" {
		newNamespaces[obj.GetName()] = true
	}
	return ApplyResult{Object: desired, Outcome: outcome}, nil
}

// ownership decides between a normal update and an adoption, or refuses.
func (a *Applier) ownership(owner Object, live client.Object, kind string, adopt bool) (Outcome, error) {
	ref := metav1.GetControllerOf(live)
	switch {
	case ref != nil && ref.UID == owner.GetUID():
		return Updated, nil
	case ref != nil:
		return "", &ConflictError{Kind: kind, Namespace: live.GetNamespace(), Name: live.GetName(),
			Why: fmt.Sprintf("is controlled by %s %s; delete or rename it", ref.Kind, ref.Name)}
	case !adopt:
		return "", &ConflictError{Kind: kind, Namespace: live.GetNamespace(), Name: live.GetName(),
			Why: "has no controller; allow adoption in the spec to take it over, or delete it"}
	}
	return Adopted, nil
}

// migrateManagers hands the fields of legacy managers to this manager with
// one patch of metadata.managedFields.
func (a *Applier) migrateManagers(ctx context.Context, live client.Object) (bool, error) {
	if len(a.LegacyFieldManagers) == 0 {
		return false, nil
	}
	legacy := sets.New(a.LegacyFieldManagers...)
	found := false
	for _, mf := range live.GetManagedFields() {
		if legacy.Has(mf.Manager) {
			found = true
		}
	}
	if !found {
		return false, nil
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, legacy, a.FieldManager)
	if err != nil {
		return false, fmt.Errorf("migrating field managers of %s: %w", live.GetName(), err)
	}
	if patch == nil {
		return false, nil
	}
	if err := a.Client.Patch(ctx, live, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return false, fmt.Errorf("migrating field managers of %s: %w", live.GetName(), err)
	}
	return true, nil
}

func (a *Applier) record(owner Object, obj client.Object, outcome Outcome, kind string) {
	if a.Recorder == nil || a.AggregateEvents {
		return
	}
	reason := map[Outcome]string{Created: "Created", Updated: "Updated", Adopted: "Adopted"}[outcome]
	a.Recorder.Eventf(owner, obj, "Normal", reason, string(outcome),
		"%s %s %s", reason, kind, obj.GetName())
}

// toApply converts obj into the unstructured form sent to the server, with
// the hash of its canonical JSON set as an annotation. When obj carries
// the HashFieldsAnnotation, the hash covers its identity and those paths
// only, which are returned; the annotation itself is not sent.
func toApply(obj client.Object, apiVersion, kind string) (*unstructured.Unstructured, string, []string, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, "", nil, fmt.Errorf("converting %s %s: %w", kind, obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	delete(u.Object, "status")
	for _, f := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	ann := u.GetAnnotations()
	delete(ann, HashAnnotation)
	var paths []string
	if p := ann[HashFieldsAnnotation]; p != "" {
		paths = strings.Split(p, ",")
	}
	delete(ann, HashFieldsAnnotation)
	u.SetAnnotations(ann)
	norm, err := normalize(u.Object)
	if err != nil {
		return nil, "", nil, fmt.Errorf("normalizing %s %s: %w", kind, obj.GetName(), err)
	}
	hash, err := desiredHash(restrict(norm.(map[string]any), paths))
	if err != nil {
		return nil, "", nil, err
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[HashAnnotation] = hash
	u.SetAnnotations(ann)
	return u, hash, paths, nil
}

// restrict returns the part of obj at paths (dotted) plus its identity,
// or obj itself when paths is empty.
func restrict(obj map[string]any, paths []string) map[string]any {
	if len(paths) == 0 {
		return obj
	}
	out := map[string]any{}
	for _, p := range append([]string{"apiVersion", "kind", "metadata.name", "metadata.namespace"}, paths...) {
		fields := strings.Split(p, ".")
		v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
		if ok {
			_ = unstructured.SetNestedField(out, v, fields...)
		}
	}
	return out
}

// matches reports whether live already carries desired: the same hash and
// every desired field (of paths, when given) unchanged (no drift).
func matches(desired *unstructured.Unstructured, hash string, paths []string, live client.Object) (bool, error) {
	if live.GetAnnotations()[HashAnnotation] != hash {
		return false, nil
	}
	d := desired.DeepCopy()
	dn, err := normalize(d.Object)
	if err != nil {
		return false, err
	}
	dm := restrict(dn.(map[string]any), paths)
	delete(dm, "apiVersion")
	delete(dm, "kind")
	ln, err := normalize(live)
	if err != nil {
		return false, err
	}
	return subset(dm, ln), nil
}

func kindOf(s *runtime.Scheme, obj client.Object) string {
	gvk, err := apiutil.GVKForObject(obj, s)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}
