package registryv1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// BundleRender is what renderBundle needs: the tenant, the release and
// the bundle's objects.
type BundleRender struct {
	Tenant, Release string
	Namespaces      []string
	Objects         []*unstructured.Unstructured
	// ClusterScoped reports a kind's scope; unknown kinds are namespaced.
	ClusterScoped func(schema.GroupVersionKind) bool
	// ClusterResource reports whether group/resource is cluster-scoped
	// or unknown (nil: every resource but the bundle's CRDs is).
	ClusterResource func(group, resource string) bool
	// Certs returns the webhook certificates of the named Deployments.
	Certs func(deployments []string) (*WebhookCerts, error)
}

// RenderedBundle is a bundle made into the objects of one release.
type RenderedBundle struct {
	csv *operatorsv1alpha1.ClusterServiceVersion
	// Objects are the release's objects, in order.
	Objects []*unstructured.Unstructured
	// Analysis holds the CRDs (applied through the shared-CRD path, not
	// the release) and the quota input.
	Analysis *quota.Analysis

	once     sync.Once
	manifest []byte
	digest   string
	err      error
}

// Manifest is the release's objects as one YAML stream, in order, written
// when first asked for (opctl validate judges the objects alone).
func (r *RenderedBundle) Manifest() ([]byte, error) {
	r.write()
	return r.manifest, r.err
}

// Digest is the sha256 of the manifest: a change of any rendered input
// (bundle, namespaces, tenant) is an upgrade.
func (r *RenderedBundle) Digest() (string, error) {
	r.write()
	return r.digest, r.err
}

func (r *RenderedBundle) write() {
	r.once.Do(func() {
		var manifest strings.Builder
		for _, o := range r.Objects {
			b, err := yaml.Marshal(o.Object)
			if err != nil {
				r.err = err
				return
			}
			manifest.WriteString("---\n")
			manifest.Write(b)
		}
		sum := sha256.Sum256([]byte(manifest.String()))
		r.manifest, r.digest = []byte(manifest.String()), hex.EncodeToString(sum[:])
	})
}

// RenderBundle renders a registry+v1 bundle as OLM would install it into
// the tenant's namespaces, the first one being the operator's:
//   - the CSV's deployments, with olm.targetNamespaces on their pods;
//   - a ServiceAccount per account the CSV names (unless the bundle
//     ships it);
//   - permissions as a Role and RoleBinding in each tenant namespace;
//   - clusterPermissions likewise for their namespaced rules, and as a
//     ClusterRole and ClusterRoleBinding named for the tenant and the
//     release for the rest (bundle_rbac.go);
//   - the bundle's other objects, namespaced ones in the operator's
//     namespace and cluster-scoped ones named for the tenant and release.
//
// Every object carries Helm's instance label. The CSV's install modes
// must fit the namespaces; conversion webhooks and owned APIServices are
// refused.
func RenderBundle(in BundleRender) (*RenderedBundle, error) {
	split, err := splitBundle(in.Objects)
	if err != nil {
		return nil, err
	}
	csv, crds, others := split.csv, split.crds, split.others
	if err := InstallModeFits(csv.Name, split.installModes, len(in.Namespaces)); err != nil {
		return nil, err
	}
	if err := ownedAPIServices(csv); err != nil {
		return nil, err
	}
	r := &bundleRenderer{in: in, ns: in.Namespaces[0], renamed: map[string]string{}}
	hooks, err := r.webhooks(csv)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, o := range others {
		if in.ClusterScoped(o.GroupVersionKind()) {
			r.renamed[o.GetKind()+"/"+o.GetName()] = r.clusterName(o.GetName())
		}
	}
	sas := map[string]bool{}
	for _, o := range others {
		if o.GetKind() == "ServiceAccount" {
			sas[o.GetName()] = true
		}
		objs = append(objs, r.carry(o))
	}
	install := csv.Spec.InstallStrategy.StrategySpec
	for _, d := range install.DeploymentSpecs {
		if !sas[d.Spec.Template.Spec.ServiceAccountName] && d.Spec.Template.Spec.ServiceAccountName != "" {
			sas[d.Spec.Template.Spec.ServiceAccountName] = true
			objs = append(objs, r.typed(&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
				ObjectMeta: metav1.ObjectMeta{Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: r.ns}}))
		}
		objs = append(objs, r.deployment(d, hooks))
	}
	objs = append(objs, hooks.objects...)
	objs = append(objs, r.rbacObjects(install, crds)...)
	if r.err != nil {
		return nil, r.err
	}
	a, err := quota.Analyze(append(append([]*unstructured.Unstructured{}, crds...), objs...))
	if err != nil {
		return nil, err
	}
	return &RenderedBundle{csv: csv, Objects: objs, Analysis: a}, nil
}

// CSV is the bundle's ClusterServiceVersion.
func (r *RenderedBundle) CSV() *operatorsv1alpha1.ClusterServiceVersion { return r.csv }

// InstallModeFits checks that a CSV's install modes allow the operator in
// the tenant's first namespace to watch all of the tenant's namespaces.
func InstallModeFits(csv string, modes map[operatorsv1alpha1.InstallModeType]bool, namespaces int) error {
	if namespaces > 1 && !modes[operatorsv1alpha1.InstallModeTypeMultiNamespace] {
		return operatorkit.Terminal("InstallModeNotSupported", fmt.Errorf("%s does not support the MultiNamespace install mode that %d namespaces need; give the tenant one namespace", csv, namespaces))
	}
	if namespaces == 1 && !modes[operatorsv1alpha1.InstallModeTypeOwnNamespace] {
		return operatorkit.Terminal("InstallModeNotSupported", fmt.Errorf("%s does not support the OwnNamespace install mode", csv))
	}
	return nil
}

// bundleRenderer holds what the objects of one render share.
type bundleRenderer struct {
	in      BundleRender
	ns      string
	renamed map[string]string // "Kind/name" of cluster-scoped objects
	err     error
}

// clusterName qualifies a cluster-scoped name by the tenant and the
// release, so that every tenant's install has its own. The prefix is a
// DNS subdomain, which every kind's names allow.
func (r *bundleRenderer) clusterName(name string) string {
	return "opctl." + r.in.Tenant + "." + r.in.Release + "." + name
}

// labelled sets Helm's instance labels, which the release path reads.
func (r *bundleRenderer) labelled(u *unstructured.Unstructured) *unstructured.Unstructured {
	guard.SetLabels(u, map[string]string{guard.HelmManagedBy: "Helm", "app.kubernetes.io/instance": r.in.Release})
	return u
}

// carry places one of the bundle's own objects.
func (r *bundleRenderer) carry(o *unstructured.Unstructured) *unstructured.Unstructured {
	u := o.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "status")
	u.SetResourceVersion("")
	u.SetUID("")
	if name, ok := r.renamed[u.GetKind()+"/"+u.GetName()]; ok {
		u.SetName(name)
		u.SetNamespace("")
	} else {
		u.SetNamespace(r.ns)
	}
	if u.GetKind() == "ClusterRoleBinding" || u.GetKind() == "RoleBinding" {
		if name, ok := r.renamed["ClusterRole/"+nestedString(u, "roleRef", "name")]; ok {
			_ = unstructured.SetNestedField(u.Object, name, "roleRef", "name")
		}
		// The bundle's ServiceAccounts are the tenant's install's: a
		// binding never grants to another namespace's account.
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for _, s := range subjects {
			if sub, ok := s.(map[string]any); ok && sub["kind"] == "ServiceAccount" {
				sub["namespace"] = r.ns
			}
		}
		if subjects != nil {
			_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
		}
	}
	return r.labelled(u)
}

// deployment makes a Deployment of the install strategy, with its webhook
// certificate mounted where OLM mounts it.
func (r *bundleRenderer) deployment(d operatorsv1alpha1.StrategyDeploymentSpec, hooks *renderedWebhooks) *unstructured.Unstructured {
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: r.ns, Labels: d.Label}, Spec: *d.Spec.DeepCopy()}
	tmpl := &dep.Spec.Template
	if tmpl.Annotations == nil {
		tmpl.Annotations = map[string]string{}
	}
	tmpl.Annotations["olm.targetNamespaces"] = strings.Join(r.in.Namespaces, ",")
	tmpl.Annotations["olm.operatorNamespace"] = r.ns
	if hooks.served[d.Name] {
		mountWebhookCert(&tmpl.Spec, d.Name)
	}
	return r.typed(dep)
}

// typed converts a typed object, labelled.
func (r *bundleRenderer) typed(o runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil && r.err == nil {
		r.err = err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return r.labelled(u)
}

func nestedString(u *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, fields...)
	return s
}
