package guard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
)

// SkewError is a CRD change refused because it would break tenants that
// use the CRD as it is.
type SkewError struct {
	CRD    string
	Reason string
}

func (e *SkewError) Error() string { return fmt.Sprintf("CRD %s: %s", e.CRD, e.Reason) }

// CRDDecision is what to do with a chart's CRD given the live one.
type CRDDecision int

const (
	CrdApply CRDDecision = iota // new, or a compatible newer definition
	CrdKeep                     // identical, or older and covered by the live one
)

// CompareCRD decides between applying want over live, keeping live, or
// refusing (*SkewError), from their schemas alone (diffCRD, schemaDiff):
// a change may not stop serving a served version, drop a version of
// status.storedVersions, remove fields from a version tenants' objects
// are stored (served or not) or served in, or narrow what such a version
// keeps and accepts (x-kubernetes-preserve-unknown-fields or
// additionalProperties dropped, a type, nullable, enum, required field or
// bound narrowed, a pattern or format added, a default stored objects
// would read), nor move storage with
// conversion None to a version that does not hold what the old one
// stored. want is kept when live serves it: live declares every field of
// it and keeps and accepts all that it does in every version (an older
// definition, or one only stricter: keeping live changes nothing stored).
// Validation only the stored objects can judge is StoredObjectsFit's.
//
// Nothing on live but its spec and status decides: its labels and
// annotations may be a tenant's (OLM writes a bundle's CRD as the bundle
// has it). The decision is memoized by live's uid and resourceVersion and
// want's hash (compareMemo), so a CRD that did not change is compared
// once.
func CompareCRD(live, want *apiextensionsv1.CustomResourceDefinition) (CRDDecision, error) {
	if live == nil {
		return CrdApply, nil
	}
	key := compareKey(live.UID, live.ResourceVersion, want)
	if v, ok := compareMemo.get(key); ok {
		return v.decision, v.err
	}
	d, err := compareCRD(live, want)
	compareMemo.put(key, comparison{decision: d, err: err})
	return d, err
}

func compareCRD(live, want *apiextensionsv1.CustomResourceDefinition) (CRDDecision, error) {
	if covers(live, want) {
		return CrdKeep, nil
	}
	changes, err := diffCRD(live, want)
	if err != nil {
		return 0, err
	}
	if err := skewOf(live, want, changes); err != nil {
		return 0, err
	}
	return CrdApply, nil
}

// comparison is a memoized decision of CompareCRD.
type comparison struct {
	decision CRDDecision
	err      error
}

// crdMemo holds comparisons by key, at most maxCompareMemo: a full memo
// is emptied, which costs a comparison per CRD.
type crdMemo struct {
	mu sync.Mutex
	m  map[string]comparison
}

const maxCompareMemo = 4096

func (c *crdMemo) get(key string) (comparison, bool) {
	if key == "" {
		return comparison{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *crdMemo) put(key string, v comparison) {
	if key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCompareMemo {
		c.m = map[string]comparison{}
	}
	c.m[key] = v
}

// compareMemo memoizes CompareCRD by the live CRD as the API server holds
// it (uid and resourceVersion: any write changes the latter) and the
// wanted spec.
var compareMemo crdMemo

// compareKey is the memo key of comparing the live CRD uid at
// resourceVersion rv with want; "" (not memoized) for a CRD the API
// server did not serve (no uid or resourceVersion).
func compareKey(uid types.UID, rv string, want *apiextensionsv1.CustomResourceDefinition) string {
	if uid == "" || rv == "" {
		return ""
	}
	return string(uid) + "@" + rv + "|" + CRDHash(want)
}

// keptAt reports whether CompareCRD kept the live CRD uid at rv for want,
// without reading the live spec.
func keptAt(uid types.UID, rv string, want *apiextensionsv1.CustomResourceDefinition) bool {
	v, ok := compareMemo.get(compareKey(uid, rv, want))
	return ok && v.err == nil && v.decision == CrdKeep
}

// ServedFields lists "<version>:<field path>" of every served version.
func ServedFields(crd *apiextensionsv1.CustomResourceDefinition) map[string]bool {
	fields := map[string]bool{}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		fields[v.Name+":"] = true
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			walkSchema(v.Name+":", v.Schema.OpenAPIV3Schema, fields)
		}
	}
	return fields
}

func walkSchema(prefix string, s *apiextensionsv1.JSONSchemaProps, out map[string]bool) {
	for name, p := range s.Properties {
		path := prefix + "." + name
		out[path] = true
		walkSchema(path, &p, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkSchema(prefix+"[]", s.Items.Schema, out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(prefix+"{}", s.AdditionalProperties.Schema, out)
	}
}

func Subset(a, b map[string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// CRDHash is the sha256 of crd's spec, as JSON. It is memoized by the
// CRD object: a CRD must not change once hashed.
func CRDHash(crd *apiextensionsv1.CustomResourceDefinition) string {
	key := weak.Make(crd)
	if h, ok := crdHashes.Load(key); ok {
		return h.(string)
	}
	b, _ := json.Marshal(crd.Spec)
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	if _, loaded := crdHashes.LoadOrStore(key, h); !loaded {
		// The entry goes with the CRD: the InstallPlan check decodes
		// fresh CRDs every time, which would otherwise add an entry each.
		goruntime.AddCleanup(crd, func(k weak.Pointer[apiextensionsv1.CustomResourceDefinition]) { crdHashes.Delete(k) }, key)
	}
	return h
}

// crdHashes memoizes CRDHash by CRD: a chart's analysed CRDs are compared
// on every reconcile and never changed. The keys do not keep a CRD alive,
// and a cleanup deletes a CRD's entry once it is collected.
var crdHashes sync.Map // weak.Pointer[CustomResourceDefinition] -> string

// EnsureCRDs applies the CRDs that need it, after checking them all:
// either every CRD is acceptable or none is applied. A CRD is refused
// when CompareCRD refuses it, or when the objects stored under it do not
// fit (StoredObjectsFit). A new CRD is created, which fails if another
// installer created it since; a change is applied with server-side apply
// at the resourceVersion compared, which fails (a conflict, retried) if
// the CRD changed since. stored lists the objects StoredObjectsFit
// checks (nil: c). It returns the names it applied.
func EnsureCRDs(ctx context.Context, c client.Client, served ServedFunc, fieldManager string, crds []*apiextensionsv1.CustomResourceDefinition, stored client.Reader) ([]string, error) {
	if stored == nil {
		stored = c
	}
	type change struct {
		live, want *apiextensionsv1.CustomResourceDefinition
	}
	var apply []change
	for _, want := range crds {
		// A CRD kept for want at its resourceVersion before needs nothing:
		// the cached metadata tells it without copying its schema. Never
		// an annotation of the CRD's: OLM writes a bundle's CRD as the
		// bundle has it, so anything on it but its spec may be a tenant's.
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := c.Get(ctx, client.ObjectKey{Name: want.Name}, m); err == nil && keptAt(m.UID, m.ResourceVersion, want) {
			continue
		}
		live := &apiextensionsv1.CustomResourceDefinition{}
		err := c.Get(ctx, client.ObjectKey{Name: want.Name}, live)
		switch {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return nil, fmt.Errorf("reading CRD %s: %w", want.Name, err)
		}
		if live == nil {
			if err := Shadows(served, want); err != nil {
				return nil, err
			}
		}
		d, err := CompareCRD(live, want)
		if err != nil {
			return nil, err
		}
		if d != CrdApply {
			continue
		}
		if live != nil && live.Labels[tenancyv1.LabelSharedCRD] != "true" {
			// Another installer's CRD (the Tenant CRD, the monitoring
			// stack's, an operator the platform installed itself): an
			// operator of a tenant does not get to change it.
			return nil, operatorkit.Terminal(tenancyv1.ReasonCRDNotShared, fmt.Errorf("CRD %s exists and was not installed by the tenancy controller (no %s label): "+
				"the controller does not change it for a tenant; remove the CRD from the operator or have the platform team upgrade it", want.Name, tenancyv1.LabelSharedCRD))
		}
		if err := StoredObjectsFit(ctx, stored, live, want); err != nil {
			return nil, err
		}
		apply = append(apply, change{live: live, want: want})
	}
	var applied []string
	for _, a := range apply {
		obj := &apiextensionsv1.CustomResourceDefinition{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
			ObjectMeta: metav1.ObjectMeta{Name: a.want.Name, Labels: map[string]string{tenancyv1.LabelSharedCRD: "true"}, Annotations: map[string]string{}},
			Spec:       a.want.Spec,
		}
		for k, v := range a.want.Annotations {
			// The controller's domains are its own: a CRD's author does
			// not get to write what looks like the controller's.
			if k != ResourcePolicy && !ReservedKey(k) {
				obj.Annotations[k] = v
			}
		}
		if a.live != nil {
			// The precondition: the CRD as compared, or a conflict.
			obj.ResourceVersion = a.live.ResourceVersion
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		unstructured.RemoveNestedField(u, "status")
		if a.live == nil {
			// An apply would create it, or change one created since the read.
			if err := c.Create(ctx, &unstructured.Unstructured{Object: u}, client.FieldOwner(fieldManager)); err != nil {
				return nil, fmt.Errorf("creating CRD %s: %w", a.want.Name, err)
			}
		} else if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u}), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("applying CRD %s: %w", a.want.Name, err)
		}
		applied = append(applied, a.want.Name)
	}
	return applied, nil
}

// ServedFunc reports whether the API server serves resource of
// group/version, read afresh (not from a cache that may still hold a CRD
// deleted since).
type ServedFunc func(group, version, resource string) (bool, error)

// Shadows refuses a new CRD in a group Kubernetes reserves (*.k8s.io,
// *.kubernetes.io: the built-in APIs), or for a resource the API server
// already serves (an aggregated API). A tenant's operator that shipped
// one would make that resource its "own kind", which its owners may
// write (actor.go).
func Shadows(served ServedFunc, crd *apiextensionsv1.CustomResourceDefinition) error {
	g := crd.Spec.Group
	if why := reservedGroup(g); why != "" {
		return groupRefused(crd, why)
	}
	if served == nil {
		return nil
	}
	for _, v := range crd.Spec.Versions {
		ok, err := served(g, v.Name, crd.Spec.Names.Plural)
		if err != nil {
			return err
		}
		if ok {
			return operatorkit.Terminal(tenancyv1.ReasonCRDNotShared, fmt.Errorf("CRD %s names %s/%s %s, which the API server already serves: a tenant's operator may not define it", crd.Name, g, v.Name, crd.Spec.Names.Plural))
		}
	}
	return nil
}

// ServedBy reads dc's discovery for group/version, uncached.
func ServedBy(dc discovery.DiscoveryInterface, group, version, resource string) (bool, error) {
	if dc == nil {
		return false, nil // a Controller of the unit tests
	}
	list, err := dc.ServerResourcesForGroupVersion(group + "/" + version)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the API server's discovery for %s/%s: %w", group, version, err)
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

// IsShared reports whether a live CRD's labels make it the tenants': the
// controller's shared-CRD label, or OLM's marks of a CRD it installs for
// a Subscription of the controller's in a tenant namespace (olm.managed
// and operators.coreos.com/<package>.<namespace>, or the
// installed-alongside annotation naming <namespace>/<CSV>). OLM replaces
// a CRD's labels when it installs it, the controller's among them, and
// only the controller subscribes in tenant namespaces (the
// tenant-olm-objects guardrail). A mark left by a Subscription the
// controller did not make (OLM run in a namespace before it was adopted)
// shares nothing.
func IsShared(ctx context.Context, reader client.Reader, crd metav1.Object) (bool, error) {
	labels := crd.GetLabels()
	if labels[tenancyv1.LabelSharedCRD] == "true" {
		return true, nil
	}
	if labels["olm.managed"] != "true" {
		return false, nil
	}
	for _, m := range olmMarks(crd) {
		n := &metav1.PartialObjectMetadata{}
		n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
		if err := reader.Get(ctx, client.ObjectKey{Name: m.namespace}, n); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return false, fmt.Errorf("reading namespace %s: %w", m.namespace, err)
		}
		if n.Labels[tenancyv1.LabelTenant] == "" {
			continue
		}
		subs := &operatorsv1alpha1.SubscriptionList{}
		if err := reader.List(ctx, subs, client.InNamespace(m.namespace), client.HasLabels{tenancyv1.LabelTenant}); meta.IsNoMatchError(err) {
			continue
		} else if err != nil {
			return false, fmt.Errorf("reading the Subscriptions of namespace %s: %w", m.namespace, err)
		}
		if slices.ContainsFunc(subs.Items, m.madeBy) {
			return true, nil
		}
	}
	return false, nil
}

// olmMark is one of OLM's marks on a CRD: the namespace it installed the
// CRD for, and the package or the CSV it installed it with.
type olmMark struct{ namespace, pkg, csv string }

// olmMarks are the operator labels OLM's Operator controller adds and the
// installed-alongside annotations it writes with the CRD itself (which
// drops the controller's label until shareCRDs restores it).
func olmMarks(crd metav1.Object) []olmMark {
	var marks []olmMark
	for k := range crd.GetLabels() {
		if rest, ok := strings.CutPrefix(k, "operators.coreos.com/"); ok {
			if i := strings.LastIndex(rest, "."); i > 0 {
				marks = append(marks, olmMark{namespace: rest[i+1:], pkg: rest[:i]})
			}
		}
	}
	for k, v := range crd.GetAnnotations() {
		if strings.HasPrefix(k, "operatorframework.io/installed-alongside-") {
			if ns, csv, ok := strings.Cut(v, "/"); ok {
				marks = append(marks, olmMark{namespace: ns, csv: csv})
			}
		}
	}
	return marks
}

// madeBy reports whether sub, a Subscription of the controller's, is the
// one the mark names: of its package, or installing its CSV.
func (m olmMark) madeBy(sub operatorsv1alpha1.Subscription) bool {
	if m.pkg != "" {
		return sub.Spec != nil && sub.Spec.Package == m.pkg
	}
	return sub.Status.CurrentCSV == m.csv || sub.Status.InstalledCSV == m.csv
}

// CRDSkew returns the skew guard's refusal of crds against the live CRDs,
// applying nothing: CompareCRD's, then StoredObjectsFit's (OLM replaces a
// CRD with the bundle's, whatever CompareCRD would keep). stored lists
// the objects StoredObjectsFit checks (nil: c).
func CRDSkew(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition, stored client.Reader) error {
	if stored == nil {
		stored = c
	}
	for _, want := range crds {
		live := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: want.Name}, live); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return fmt.Errorf("reading CRD %s: %w", want.Name, err)
		}
		if _, err := CompareCRD(live, want); err != nil {
			return err
		}
		if err := StoredObjectsFit(ctx, stored, live, want); err != nil {
			return err
		}
	}
	return nil
}

// AbsentCRDs are the CRDs of want that do not exist.
func AbsentCRDs(ctx context.Context, reader client.Reader, want []*apiextensionsv1.CustomResourceDefinition) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range want {
		err := reader.Get(ctx, client.ObjectKey{Name: crd.Name}, &apiextensionsv1.CustomResourceDefinition{})
		if apierrors.IsNotFound(err) {
			out = append(out, crd)
		} else if err != nil {
			return nil, fmt.Errorf("reading CRD %s: %w", crd.Name, err)
		}
	}
	return out, nil
}
