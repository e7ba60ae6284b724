package registryv1

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"opctl.dev/opctl/pkg/operatorkit"
)

// sampleBundle reads the sample operator's bundle as the catalog carries
// it.
func sampleBundle(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := ReadDocs("sample", sampleDocs(t))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// sampleDocs are the files of the sample operator's bundle.
func sampleDocs(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("../../../../bundle/sample-operator/manifests/*.yaml")
	if err != nil || len(files) == 0 {
		tb.Fatalf("the sample bundle: %v", err)
	}
	var docs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	return docs
}

func clusterKinds(gvk schema.GroupVersionKind) bool {
	return strings.HasPrefix(gvk.Kind, "Cluster") || gvk.Kind == "CustomResourceDefinition"
}

func TestRenderBundle(t *testing.T) {
	// A binding the bundle ships, to its own role, for an account it
	// names in another namespace.
	binding := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "kvstore-editors"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kvstore-editor-role"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "kvstore-controller-manager", "namespace": "system"}}}}
	in := BundleRender{Tenant: "team-a", Release: "kv", Namespaces: []string{"team-a"}, Objects: append(sampleBundle(t), binding), ClusterScoped: clusterKinds}
	r, err := RenderBundle(in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := RenderBundle(in)
	if err != nil || manifestOf(t, again) != manifestOf(t, r) || renderedDigest(t, again) != renderedDigest(t, r) {
		t.Fatalf("a second render differs (%v)", err)
	}
	got := map[string]*unstructured.Unstructured{}
	for _, d := range guard.ManifestDocs(manifestOf(t, r)) {
		if d.Err != nil {
			t.Fatal(d.Err)
		}
		u := d.Obj
		got[u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()] = u
		if l := u.GetLabels(); l["app.kubernetes.io/instance"] != "kv" || l["app.kubernetes.io/managed-by"] != "Helm" {
			t.Errorf("%s %s has labels %v, want Helm's instance labels", u.GetKind(), u.GetName(), l)
		}
	}
	for _, want := range []string{
		"Deployment team-a/kvstore-controller-manager",
		"ServiceAccount team-a/kvstore-controller-manager",
		"Role team-a/kv-kvstore-controller-manager-0",
		"RoleBinding team-a/kv-kvstore-controller-manager-0",
		"ClusterRole /opctl.team-a.kv.kvstore-controller-manager-0",
		"ClusterRoleBinding /opctl.team-a.kv.kvstore-controller-manager-0",
		"ClusterRole /opctl.team-a.kv.kvstore-editor-role",
		"Service team-a/kvstore-controller-manager-metrics",
		"ConfigMap team-a/kvstores.kv.opctl.dev-platform-as-code",
	} {
		if got[want] == nil {
			t.Errorf("the render has no %s; it has %v", want, keys(got))
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "CustomResourceDefinition") || strings.HasPrefix(k, "ClusterServiceVersion") {
			t.Errorf("the release carries %s; CRDs go through the shared-CRD path and the CSV is not installed", k)
		}
	}
	if dep := got["Deployment team-a/kvstore-controller-manager"]; dep != nil {
		if a := dep.GetAnnotations(); a != nil {
			t.Errorf("annotations on the Deployment itself: %v", a)
		}
		if v, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "metadata", "annotations", "olm.targetNamespaces"); v != "team-a" {
			t.Errorf("olm.targetNamespaces = %q, want team-a", v)
		}
	}
	if crb := got["ClusterRoleBinding /opctl.team-a.kv.kvstore-controller-manager-0"]; crb != nil {
		subj, _, _ := unstructured.NestedSlice(crb.Object, "subjects")
		if len(subj) != 1 || subj[0].(map[string]any)["namespace"] != "team-a" {
			t.Errorf("ClusterRoleBinding subjects %v, want the operator's ServiceAccount in team-a", subj)
		}
	}
	if crb := got["ClusterRoleBinding /opctl.team-a.kv.kvstore-editors"]; crb == nil {
		t.Errorf("the bundle's ClusterRoleBinding is not named for the tenant")
	} else if ref, sub := nestedString(crb, "roleRef", "name"), fmt.Sprint(crb.Object["subjects"]); ref != "opctl.team-a.kv.kvstore-editor-role" || !strings.Contains(sub, "namespace:team-a") {
		t.Errorf("the bundle's ClusterRoleBinding binds %s to %s, want the tenant's role and account", ref, sub)
	}
	if len(r.Analysis.CRDs) != 2 || r.Analysis.CRDs[0].Name != "kvbackups.kv.opctl.dev" || r.Analysis.CRDs[1].Name != "kvstores.kv.opctl.dev" {
		t.Errorf("analysis CRDs %v", r.Analysis.CRDs)
	}
	if len(r.Analysis.Workloads) != 1 || len(r.Analysis.Operands) != 2 {
		t.Errorf("quota input: %d workloads, %d operands; want the manager and the KVBackup and KVStore figures", len(r.Analysis.Workloads), len(r.Analysis.Operands))
	}

	// Another tenant's render names its cluster-scoped objects apart.
	in.Tenant = "team-b"
	other, err := RenderBundle(in)
	if err != nil || !strings.Contains(manifestOf(t, other), "opctl.team-b.kv.") || renderedDigest(t, other) == renderedDigest(t, r) {
		t.Errorf("team-b's render does not name its cluster roles for team-b (%v)", err)
	}
}

// noMultiNamespace marks the CSV of objs without MultiNamespace, as a
// manager that reads one watch namespace is packaged.
func noMultiNamespace(objs []*unstructured.Unstructured) {
	for _, u := range objs {
		if u.GetKind() != "ClusterServiceVersion" {
			continue
		}
		modes, _, _ := unstructured.NestedSlice(u.Object, "spec", "installModes")
		for _, m := range modes {
			if mm, ok := m.(map[string]any); ok && mm["type"] == "MultiNamespace" {
				mm["supported"] = false
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, modes, "spec", "installModes")
	}
}

func TestRenderBundleRefusals(t *testing.T) {
	objs := sampleBundle(t)
	noMultiNamespace(objs)
	_, err := RenderBundle(BundleRender{Tenant: "t", Release: "kv", Namespaces: []string{"a", "b"}, Objects: objs, ClusterScoped: clusterKinds})
	if !operatorkit.IsTerminal(err) || !strings.Contains(err.Error(), "MultiNamespace install mode that 2 namespaces need") {
		t.Errorf("two namespaces for a bundle without MultiNamespace: %v, want a Terminal install-mode error", err)
	}
	withWebhook(objs, "ConversionWebhook")
	_, err = RenderBundle(BundleRender{Tenant: "t", Release: "kv", Namespaces: []string{"a"}, Objects: objs, ClusterScoped: clusterKinds})
	if !operatorkit.IsTerminal(err) || !strings.Contains(err.Error(), "every tenant shares") {
		t.Errorf("a bundle with a conversion webhook: %v, want a Terminal error", err)
	}
	objs = sampleBundle(t)
	for _, u := range objs {
		if u.GetKind() == "ClusterServiceVersion" {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"group": "metrics.kv.opctl.dev", "version": "v1alpha1", "name": "metrics.kv.opctl.dev",
				"deploymentName": "kvstore-controller-manager", "containerPort": int64(6443)}}, "spec", "apiservicedefinitions", "owned")
		}
	}
	_, err = RenderBundle(BundleRender{Tenant: "t", Release: "kv", Namespaces: []string{"a"}, Objects: objs, ClusterScoped: clusterKinds})
	if !operatorkit.IsTerminal(err) || !strings.Contains(err.Error(), "APIService v1alpha1.metrics.kv.opctl.dev, which is cluster-scoped") {
		t.Errorf("a bundle owning an APIService: %v, want a Terminal refusal naming it", err)
	}
}

// withWebhook gives the sample's CSV one webhook of type typ.
func withWebhook(objs []*unstructured.Unstructured, typ string) {
	for _, u := range objs {
		if u.GetKind() == "ClusterServiceVersion" {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": typ, "generateName": "vkvstore.kv.opctl.dev",
				"deploymentName": "kvstore-controller-manager", "admissionReviewVersions": []any{"v1"}, "sideEffects": "None", "containerPort": int64(9443),
				"webhookPath": "/validate", "conversionCRDs": []any{"kvstores.kv.opctl.dev"},
				"rules": []any{map[string]any{"apiGroups": []any{"*"}, "apiVersions": []any{"*"}, "resources": []any{"*"}, "operations": []any{"CREATE"}, "scope": "*"}}}},
				"spec", "webhookdefinitions")
		}
	}
}

// TestRenderBundleWebhooks: an admission webhook gets a Service, a TLS
// Secret the CA trusts, the certificate mounted where OLM mounts it, and
// a configuration that only sees namespaced objects of the tenant.
func TestRenderBundleWebhooks(t *testing.T) {
	objs := sampleBundle(t)
	withWebhook(objs, "ValidatingAdmissionWebhook")
	// As kubebuilder scaffolds it: the manager already mounts a Secret
	// (that cert-manager would make) where the certificate goes.
	for _, u := range objs {
		if u.GetKind() == "ClusterServiceVersion" {
			deps, _, _ := unstructured.NestedSlice(u.Object, "spec", "install", "spec", "deployments")
			pod := deps[0].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			pod["volumes"] = []any{map[string]any{"name": "webhook-certs", "secret": map[string]any{"secretName": "webhook-server-cert"}}}
			c := pod["containers"].([]any)[0].(map[string]any)
			c["volumeMounts"] = []any{map[string]any{"name": "webhook-certs", "mountPath": "/tmp/k8s-webhook-server/serving-certs", "readOnly": true}}
			_ = unstructured.SetNestedSlice(u.Object, deps, "spec", "install", "spec", "deployments")
		}
	}
	noMultiNamespace(objs)
	_, err := RenderBundle(BundleRender{Tenant: "team-a", Release: "kv", Namespaces: []string{"team-a", "team-a-2"}, Objects: objs, ClusterScoped: clusterKinds,
		Certs: func(deployments []string) (*WebhookCerts, error) {
			return IssueWebhookCerts(time.Now(), "team-a", deployments)
		}})
	if err == nil || !strings.Contains(err.Error(), "MultiNamespace") {
		t.Fatalf("two namespaces: %v", err)
	}
	certsAskedFor := []string{}
	r, err := RenderBundle(BundleRender{Tenant: "team-a", Release: "kv", Namespaces: []string{"team-a"}, Objects: objs, ClusterScoped: clusterKinds,
		Certs: func(deployments []string) (*WebhookCerts, error) {
			certsAskedFor = deployments
			return IssueWebhookCerts(time.Now(), "team-a", deployments)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(certsAskedFor) != 1 || certsAskedFor[0] != "kvstore-controller-manager" {
		t.Errorf("certificates asked for %v, want the webhook's Deployment", certsAskedFor)
	}
	docs := map[string]*unstructured.Unstructured{}
	for _, d := range guard.ManifestDocs(manifestOf(t, r)) {
		docs[d.Obj.GetKind()+" "+d.Obj.GetName()] = d.Obj
	}
	svc, secret := docs["Service kvstore-controller-manager-service"], docs["Secret kvstore-controller-manager-service-cert"]
	vwc := docs["ValidatingWebhookConfiguration opctl.team-a.kv.vkvstore.kv.opctl.dev"]
	if svc == nil || secret == nil || vwc == nil {
		t.Fatalf("render has %v", keys(docs))
	}
	if port, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports"); len(port) != 1 || fmt.Sprint(port[0].(map[string]any)["port"]) != "9443" {
		t.Errorf("Service ports %v, want 9443", port)
	}
	hook := vwc.Object["webhooks"].([]any)[0].(map[string]any)
	ns := hook["namespaceSelector"].(map[string]any)["matchExpressions"].([]any)[0].(map[string]any)
	if ns["key"] != "kubernetes.io/metadata.name" || fmt.Sprint(ns["values"]) != "[team-a]" {
		t.Errorf("namespaceSelector %v, want the tenant's namespaces", ns)
	}
	if obj := fmt.Sprint(hook["objectSelector"]); !strings.Contains(obj, tenancyv1.LabelTenant+" operator:DoesNotExist") {
		t.Errorf("objectSelector %s, want the platform's objects left out", obj)
	}
	if scope := hook["rules"].([]any)[0].(map[string]any)["scope"]; scope != "Namespaced" {
		t.Errorf("rule scope %v, want Namespaced", scope)
	}
	cc := hook["clientConfig"].(map[string]any)
	svcRef := cc["service"].(map[string]any)
	if svcRef["name"] != "kvstore-controller-manager-service" || svcRef["namespace"] != "team-a" || svcRef["path"] != "/validate" {
		t.Errorf("clientConfig %v", svcRef)
	}
	caBundle, _ := base64.StdEncoding.DecodeString(cc["caBundle"].(string))
	tlsCrt, _ := base64.StdEncoding.DecodeString(secret.Object["data"].(map[string]any)["tls.crt"].(string))
	ca, err := parseCert(caBundle)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := parseCert(tlsCrt)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "kvstore-controller-manager-service.team-a.svc"}); err != nil {
		t.Errorf("the serving certificate does not verify against the caBundle for the Service: %v", err)
	}
	pod := docs["Deployment kvstore-controller-manager"].Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	got := fmt.Sprint(pod["containers"].([]any)[0].(map[string]any)["volumeMounts"])
	if strings.Count(got, "/tmp/k8s-webhook-server/serving-certs") != 1 || !strings.Contains(got, "name:webhook-cert]") || !strings.Contains(got, "/apiserver.local.config/certificates") {
		t.Errorf("manager volume mounts %s, want the controller's certificate at each path, once", got)
	}
	if vols := fmt.Sprint(pod["volumes"]); strings.Contains(vols, "webhook-server-cert") {
		t.Errorf("volumes %s still hold the replaced Secret", vols)
	}
}

func TestWebhookCerts(t *testing.T) {
	now := time.Now()
	w, err := IssueWebhookCerts(now, "team-a", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		at          time.Time
		ns          string
		deployments []string
		want        bool
	}{
		{"fresh", now, "team-a", []string{"a", "b"}, true},
		{"before renewal", now.Add(WebhookCertLifetime - webhookCertRenew - time.Hour), "team-a", []string{"a", "b"}, true},
		{"due for renewal", now.Add(WebhookCertLifetime - webhookCertRenew + time.Hour), "team-a", []string{"a", "b"}, false},
		{"another namespace", now, "team-b", []string{"a", "b"}, false},
		{"a new deployment", now, "team-a", []string{"a", "b", "c"}, false},
		{"a deployment fewer", now, "team-a", []string{"a"}, false},
	}
	for _, tt := range tests {
		if got := w.Current(tt.at, tt.ns, tt.deployments); got != tt.want {
			t.Errorf("%s: current = %v, want %v", tt.name, got, tt.want)
		}
	}
	other, _ := IssueWebhookCerts(now, "team-a", []string{"a", "b"})
	w.Serving["b"] = other.Serving["b"]
	if w.Current(now, "team-a", []string{"a", "b"}) {
		t.Errorf("a certificate of another CA counts as current")
	}
}

func keys(m map[string]*unstructured.Unstructured) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// BenchmarkRenderBundle is the work each reconcile of a bundle operator
// does after reading the catalog: the sample's objects, then its render.
// "parsed each time" is the reference: the objects read anew.
func BenchmarkRenderBundle(b *testing.B) {
	docs := sampleDocs(b)
	render := func(b *testing.B, objs []*unstructured.Unstructured) {
		if _, err := RenderBundle(BundleRender{Tenant: "team-a", Release: "kv", Namespaces: []string{"team-a"}, Objects: objs, ClusterScoped: clusterKinds}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("parsed each time", func(b *testing.B) {
		for b.Loop() {
			objs, err := ReadDocs("sample", docs)
			if err != nil {
				b.Fatal(err)
			}
			render(b, objs)
		}
	})
	b.Run("parsed once", func(b *testing.B) {
		f := NewFBCCatalogs(nil, nil, false, time.Minute)
		for b.Loop() {
			c, err := f.Content(context.Background(), &declcfg.Bundle{Name: "sample", Objects: docs})
			if err != nil {
				b.Fatal(err)
			}
			render(b, c.Objects)
		}
	})
}

// TestClusterPermissionsSplit: the namespaced rules of a CSV's
// clusterPermissions become Roles in the tenant's namespaces only; the
// ClusterRole keeps the cluster-scoped and unknown ones.
func TestClusterPermissionsSplit(t *testing.T) {
	objs := sampleBundle(t)
	for _, u := range objs {
		if u.GetKind() != "ClusterServiceVersion" {
			continue
		}
		perms, _, _ := unstructured.NestedSlice(u.Object, "spec", "install", "spec", "clusterPermissions")
		p := perms[0].(map[string]any)
		p["rules"] = append(p["rules"].([]any),
			map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets", "nodes"}, "verbs": []any{"get", "list"}},
			map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments/scale"}, "verbs": []any{"get", "list"}},
			map[string]any{"apiGroups": []any{"kv.opctl.dev"}, "resources": []any{"kvstores", "kvstores/status"}, "verbs": []any{"update"}},
			map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"get"}},
		)
		_ = unstructured.SetNestedSlice(u.Object, perms, "spec", "install", "spec", "clusterPermissions")
	}
	namespaced := map[string]bool{"/secrets": true, "apps/deployments": true}
	r, err := RenderBundle(BundleRender{Tenant: "team-a", Release: "kv", Namespaces: []string{"team-a"}, Objects: objs, ClusterScoped: clusterKinds,
		ClusterResource: func(group, resource string) bool { return !namespaced[group+"/"+resource] }})
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{}
	for _, d := range guard.ManifestDocs(manifestOf(t, r)) {
		if k := d.Obj.GetKind(); k == "Role" || k == "ClusterRole" {
			b, _ := json.Marshal(d.Obj.Object["rules"])
			rules[k+" "+d.Obj.GetNamespace()+"/"+d.Obj.GetName()] = string(b)
		}
	}
	role, cluster := rules["Role team-a/kv-kvstore-controller-manager-cluster-0"], rules["ClusterRole /opctl.team-a.kv.kvstore-controller-manager-0"]
	for _, want := range []string{`"secrets"`, `"deployments/scale"`, `"kvstores"`, `"kvstores/status"`} {
		if !strings.Contains(role, want) {
			t.Errorf("the tenant Role lacks %s: %s (all: %v)", want, role, rules)
		}
		if strings.Contains(cluster, want) {
			t.Errorf("the ClusterRole grants %s cluster-wide: %s", want, cluster)
		}
	}
	for _, want := range []string{`"nodes"`, `"storageclasses"`, `"*"`} {
		if !strings.Contains(cluster, want) {
			t.Errorf("the ClusterRole lacks %s: %s", want, cluster)
		}
	}
}

// manifestOf and renderedDigest are r's manifest and its digest.
func manifestOf(t *testing.T, r *RenderedBundle) string {
	t.Helper()
	m, err := r.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return string(m)
}

func renderedDigest(t *testing.T, r *RenderedBundle) string {
	t.Helper()
	d, err := r.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
