package tenancy_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcatalog"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
	"opctl.dev/opctl/internal/testregistry"
	"opctl.dev/opctl/pkg/packaging"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// publishVersion packages project at version and publishes it with
// `opctl publish` (bundle image, catalog image, catalog directory) to
// reg/ops.
func publishVersion(t *testing.T, reg *testregistry.Registry, project, catalog, version string, extra ...string) {
	t.Helper()
	publishEdited(t, reg, project, catalog, version, nil, extra...)
}

// publishEdited is publishVersion with edit applied to the packaged CSV.
func publishEdited(t *testing.T, reg *testregistry.Registry, project, catalog, version string, edit func(csv map[string]any), extra ...string) {
	t.Helper()
	out := t.TempDir()
	if _, err := packaging.Package(context.Background(), project, packaging.PackageOptions{
		Out: out, Load: packaging.Options{Version: version, Image: "opctl/kvstore-operator:" + version},
	}); err != nil {
		t.Fatalf("packaging %s: %v", version, err)
	}
	if edit != nil {
		f := filepath.Join(out, "bundle", olmPackage, "manifests", olmPackage+".clusterserviceversion.yaml")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		csv := map[string]any{}
		if err := yaml.Unmarshal(b, &csv); err != nil {
			t.Fatal(err)
		}
		edit(csv)
		if b, err = yaml.Marshal(csv); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"publish", out, "--registry", reg.Host + "/ops", "--catalog", catalog}, extra...)
	if b, err := exec.Command(opctlBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("opctl publish %s: %v\n%s", version, err, b)
	}
}

// serveFBC serves the catalog in dir over HTTP as OLM v1's ClusterCatalog
// does (/api/v1/all, a stream of JSON objects), read anew on every
// request, without olm.bundle.object properties: bundles must be read
// from their images.
func serveFBC(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/all" {
			http.NotFound(w, r)
			return
		}
		cfg, err := declcfg.LoadFS(r.Context(), os.DirFS(dir))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for i := range cfg.Bundles {
			b := &cfg.Bundles[i]
			b.Objects, b.CsvJSON = nil, ""
			b.Properties = slices.DeleteFunc(b.Properties, func(p property.Property) bool { return p.Type == property.TypeBundleObject })
		}
		_ = declcfg.WriteJSON(*cfg, w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1/all"
}

func bundleTenant(name string, src tenancyv1.BundleSource, version string) *tenancyv1.Tenant {
	tn := newTenant(name, []string{name}, "", 0, "owner-"+name)
	tn.Spec.Operators = []tenancyv1.OperatorSpec{{Name: "kv", Bundle: &src, Version: version, Instances: 2}}
	return tn
}

// bundleAt is ready() plus the bundle at version, deployed at revision
// (0: any), its image by digest.
func bundleAt(version string, revision int) func(*tenancyv1.Tenant) error {
	return func(tn *tenancyv1.Tenant) error {
		if err := ready(tn); err != nil {
			return err
		}
		op := tn.Status.Operators[0]
		b := op.Bundle
		if b == nil || b.Version != version || op.ChartVersion != version || b.Bundle != olmPackage+".v"+version || (revision > 0 && op.Revision != revision) {
			return fmt.Errorf("operator %s, want bundle %s at revision %d", dump(op), version, revision)
		}
		if !strings.Contains(b.Image, "@sha256:") {
			return fmt.Errorf("bundle image %q, want a digest", b.Image)
		}
		return nil
	}
}

// TestBundleTenants installs the sample operator's registry+v1 bundles,
// published by opctl publish to a real registry, for tenants on a
// cluster with no OLM: from the catalog image (Automatic, following the
// channel and rolling back a failing 0.3.0), from an HTTP catalog without
// bundle objects (Manual, held at 0.1.0) and from an operator-registry
// gRPC address; then it refuses what cannot work.
func TestBundleTenants(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	neverReady(t, c, "opctl/kvstore-operator:0.3.0")
	reg := testregistry.Start(t)
	catalog := t.TempDir()
	publishVersion(t, reg, sampleProject, catalog, "0.1.0")
	startController(t, tenancy.Options{UpgradeTimeout: 8 * time.Second, CatalogPollInterval: 2 * time.Second, PlainHTTPRegistries: true})

	id := suffix()
	img, web, rpc := "bundle-img-"+id, "bundle-web-"+id, "bundle-rpc-"+id
	image := tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{Image: reg.Host + "/ops/sample-operator-catalog:latest"}, Package: olmPackage, Channel: "stable"}
	createTenant(t, bundleTenant(img, image, ""))
	manual := tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{URL: serveFBC(t, catalog)}, Package: olmPackage, Channel: "stable", Approval: "Manual"}
	orphan := bundleTenant(web, manual, "0.1.0")
	orphan.Spec.DeletionPolicy = "Orphan"
	createTenant(t, orphan)
	waitTenant(t, img, 2*time.Minute, "image-catalog tenant on 0.1.0", bundleAt("0.1.0", 1))
	waitTenant(t, web, 2*time.Minute, "HTTP-catalog tenant on 0.1.0", bundleAt("0.1.0", 1))

	// 0.2.0 is pushed: the Automatic tenant follows the channel; the
	// Manual one stays and lists it as pending.
	publishVersion(t, reg, sampleProject, catalog, "0.2.0")
	waitTenant(t, img, 2*time.Minute, "image-catalog tenant upgraded to 0.2.0", bundleAt("0.2.0", 2))
	waitTenant(t, web, time.Minute, "HTTP-catalog tenant held at 0.1.0 with 0.2.0 pending", func(tn *tenancyv1.Tenant) error {
		if err := bundleAt("0.1.0", 1)(tn); err != nil {
			return err
		}
		if p := tn.Status.Operators[0].Bundle.Pending; !slices.Equal(p, []string{"0.2.0"}) {
			return fmt.Errorf("pending %v, want [0.2.0]", p)
		}
		return nil
	})
	createTenant(t, bundleTenant(rpc, tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{Address: testcatalog.Serve(t, catalog)},
		Package: olmPackage, Channel: "stable"}, "0.1.0"))
	waitTenant(t, rpc, 2*time.Minute, "gRPC-catalog tenant pinned at 0.1.0", bundleAt("0.1.0", 1))

	dc := dynamic.NewForConfigOrDie(c.Config)
	checkCatalogTenants(t, c, dc, checkBundleInstall, img, web, rpc)

	t.Run("a failing upgrade rolls back", func(t *testing.T) {
		publishVersion(t, reg, sampleProject, catalog, "0.3.0")
		tn := waitTenant(t, img, 3*time.Minute, "0.3.0 rolled back to 0.2.0", func(tn *tenancyv1.Tenant) error {
			if op := tn.Status.Operators[0]; op.FailedVersion != "0.3.0" || op.ChartVersion != "0.2.0" || op.Reason != tenancyv1.ReasonUpgradeFailed {
				return fmt.Errorf("operator %s", dump(op))
			}
			return nil
		})
		if op := tn.Status.Operators[0]; op.Bundle.Version != "0.2.0" {
			t.Errorf("bundle status %s after the rollback, want 0.2.0", dump(op.Bundle))
		}
		dep := &appsv1.Deployment{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: img, Name: olmDeploy}, dep); err != nil || dep.Spec.Template.Spec.Containers[0].Image != "opctl/kvstore-operator:0.2.0" {
			t.Errorf("after the rollback the operator Deployment runs %v (%v)", dep.Spec.Template.Spec.Containers, err)
		}
		waitTenant(t, web, time.Minute, "0.3.0 pending for the Manual tenant", func(tn *tenancyv1.Tenant) error {
			if p := tn.Status.Operators[0].Bundle.Pending; !slices.Equal(p, []string{"0.2.0", "0.3.0"}) {
				return fmt.Errorf("pending %v", p)
			}
			return nil
		})
	})

	t.Run("install modes", func(t *testing.T) {
		// The sample's manager splits its watch list, so opctl package
		// marks its bundle MultiNamespace: a tenant of two namespaces
		// gets one instance watching both (InstallModeFits refuses a bundle
		// that does not: TestInstallModeFits).
		two := "bundle-two-" + id
		tn := newTenant(two, []string{two, two + "-b"}, "", 0, "owner-"+two)
		tn.Spec.Operators = []tenancyv1.OperatorSpec{{Name: "kv", Bundle: &image, Version: "0.1.0"}}
		createTenant(t, tn)
		waitTenant(t, two, 2*time.Minute, "two-namespace tenant on 0.1.0", bundleAt("0.1.0", 1))
	})

	t.Run("a catalog ConfigMap in a tenant namespace", func(t *testing.T) {
		cm := catalogConfigMap(t, img, "theirs", catalog)
		name := "bundle-cm-" + id
		createTenant(t, bundleTenant(name, tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{ConfigMap: &tenancyv1.ConfigMapReference{Namespace: cm.Namespace, Name: cm.Name}},
			Package: olmPackage, Channel: "stable"}, ""))
		bundleRefused(t, name, "CatalogRefused", "tenant namespace")
	})

	t.Run("skew guard", func(t *testing.T) {
		// Catalogs (platform ConfigMaps) whose bundle's CRD would take from
		// the shared CRD a field of its storage version, or a version
		// objects are stored in: refused, and the CRD stays as it is.
		platform := "bundle-catalogs-" + id
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: platform}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: platform}}) })
		for i, tc := range []struct {
			name, version, want string
			edit                func(string) string
		}{
			{"a field of the storage version dropped", "0.4.0", "adoptExisting", renameAdoptExisting},
			{"a stored version no longer served", "0.5.0", "stops serving version v1alpha1", moveToV1beta1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir, crdFile := testproject.UnderGroup(t, sampleProject, "kv.opctl.dev")
				testproject.Edit(t, crdFile, tc.edit)
				bad := t.TempDir()
				publishVersion(t, reg, dir, bad, tc.version, "--image-less")
				cm := catalogConfigMap(t, platform, fmt.Sprintf("skewed-%d", i), bad)
				skewed := fmt.Sprintf("bundle-skew%d-%s", i, id)
				createTenant(t, bundleTenant(skewed, tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{ConfigMap: &tenancyv1.ConfigMapReference{Namespace: cm.Namespace, Name: cm.Name}},
					Package: olmPackage, Channel: "stable"}, ""))
				waitCondition(t, skewed, "Ready", tenancyv1.ReasonCRDSkew, tc.want)
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := cl.Get(ctx, client.ObjectKey{Name: "kvstores.kv.opctl.dev"}, crd); err != nil {
					t.Fatal(err)
				}
				if v := crd.Spec.Versions[0]; !v.Served {
					t.Errorf("the shared CRD stopped serving %s", v.Name)
				}
				if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["adoptExisting"]; !ok {
					t.Errorf("the shared CRD lost spec.adoptExisting")
				}
				if err := cl.Get(ctx, client.ObjectKey{Namespace: skewed, Name: olmDeploy}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
					t.Errorf("the skewed tenant's operator was installed: %v", err)
				}
			})
		}
	})

	t.Run("deletion", func(t *testing.T) {
		deleteTenants(t, dc, img, img, web)
		// Delete: the tenant's cluster-scoped RBAC went with its release.
		if err := cl.Get(ctx, client.ObjectKey{Name: "opctl." + img + ".kv." + olmSA + "-0"}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
			t.Errorf("the deleted tenant's ClusterRole: %v, want it gone", err)
		}
		// Orphan: the operator keeps running, its namespace is no longer
		// the tenant's, and its release records are back in it for the
		// owners' helm CLI.
		dep := &appsv1.Deployment{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: web, Name: olmDeploy}, dep); err != nil || dep.Status.AvailableReplicas < 1 {
			t.Errorf("orphaned Deployment %+v: %v", dep.Status, err)
		}
		ns := &corev1.Namespace{}
		if err := cl.Get(ctx, client.ObjectKey{Name: web}, ns); err != nil || ns.Labels[tenancyv1.LabelTenant] != "" {
			t.Errorf("orphaned namespace %v: %v", ns.Labels, err)
		}
		var records corev1.SecretList
		if err := cl.List(ctx, &records, client.InNamespace(web), client.MatchingLabels{"owner": "helm", "name": "kv"}); err != nil || len(records.Items) == 0 {
			t.Errorf("release records in %s after Orphan: %d (%v), want them handed back", web, len(records.Items), err)
		}
		if err := cl.Get(ctx, client.ObjectKey{Name: "opctl." + web + ".kv." + olmSA + "-0"}, &rbacv1.ClusterRole{}); err != nil {
			t.Errorf("the orphaned tenant's ClusterRole: %v, want it kept", err)
		}
		_ = cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: web}})
	})
}

// catalogConfigMap puts the catalog in dir into a ConfigMap ns/name.
func catalogConfigMap(t *testing.T, ns, name, dir string) *corev1.ConfigMap {
	t.Helper()
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := declcfg.WriteYAML(*cfg, &buf); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"catalog.yaml": buf.String()}}
	if err := cl.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// bundleRefused waits until tenant name is Degraded for reason with a
// message containing what, and checks that no operator was installed.
func bundleRefused(t *testing.T, name, reason, what string) {
	t.Helper()
	waitCondition(t, name, "Degraded", reason, what)
	var deps appsv1.DeploymentList
	if err := cl.List(context.Background(), &deps, client.InNamespace(name)); err != nil || len(deps.Items) > 0 {
		t.Errorf("tenant %s refused with %s has %d Deployments (%v), want none", name, reason, len(deps.Items), err)
	}
}

// checkBundleInstall checks the rendered install in ns: the operator
// Deployment Ready with olm.targetNamespaces set to ns and WATCH_NAMESPACE
// taken from it, and the CSV's permissions as a Role bound to its
// ServiceAccount.
func checkBundleInstall(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	dep := &appsv1.Deployment{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: olmDeploy}, dep); err != nil {
		t.Fatalf("operator Deployment in %s: %v", ns, err)
	}
	if got := dep.Spec.Template.Annotations["olm.targetNamespaces"]; got != ns || dep.Status.AvailableReplicas < 1 {
		t.Errorf("operator Deployment in %s: olm.targetNamespaces %q, %d available", ns, got, dep.Status.AvailableReplicas)
	}
	found := false
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		found = found || (e.Name == "WATCH_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['olm.targetNamespaces']")
	}
	if !found {
		t.Errorf("the operator in %s does not take WATCH_NAMESPACE from olm.targetNamespaces", ns)
	}
	rb := &rbacv1.RoleBinding{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kv-" + olmSA + "-0"}, rb); err != nil || len(rb.Subjects) != 1 || rb.Subjects[0].Name != olmSA {
		t.Errorf("RoleBinding of the CSV's permissions in %s: %v (%v)", ns, rb.Subjects, err)
	}
}

// TestBundleWebhooks installs a bundle with a validating webhook: the
// controller issues its certificate, the API server takes the webhook
// configuration narrowed to the tenant, and certificates due for renewal
// are issued again and rolled out as a release upgrade.
func TestBundleWebhooks(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	reg := testregistry.Start(t)
	catalog := t.TempDir()
	ignore := "Ignore" // no pod network under kwok: nothing can serve it
	publishEdited(t, reg, sampleProject, catalog, "0.1.0", func(csv map[string]any) {
		csv["spec"].(map[string]any)["webhookdefinitions"] = []any{map[string]any{
			"type": "ValidatingAdmissionWebhook", "generateName": "vkvstore.kv.opctl.dev", "deploymentName": olmDeploy,
			"containerPort": 9443, "webhookPath": "/validate-kv-opctl-dev-v1alpha1-kvstore", "failurePolicy": ignore,
			"sideEffects": "None", "admissionReviewVersions": []any{"v1"},
			"rules": []any{map[string]any{"apiGroups": []any{"kv.opctl.dev"}, "apiVersions": []any{"v1alpha1"}, "resources": []any{"kvstores"}, "operations": []any{"CREATE", "UPDATE"}}},
		}}
	})
	startController(t, tenancy.Options{CatalogPollInterval: 2 * time.Second, PlainHTTPRegistries: true})
	name := "bundle-hook-" + suffix()
	createTenant(t, bundleTenant(name, tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{Image: reg.Host + "/ops/sample-operator-catalog:latest"},
		Package: olmPackage, Channel: "stable"}, ""))
	waitTenant(t, name, 2*time.Minute, "tenant on 0.1.0", bundleAt("0.1.0", 1))

	vwcName := "opctl." + name + ".kv.vkvstore.kv.opctl.dev"
	// check reads the live configuration and Secret, checks that the
	// serving certificate verifies against the caBundle for the Service,
	// and returns the caBundle.
	check := func() []byte {
		t.Helper()
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := cl.Get(ctx, client.ObjectKey{Name: vwcName}, vwc); err != nil {
			t.Fatalf("ValidatingWebhookConfiguration %s: %v", vwcName, err)
		}
		hook := vwc.Webhooks[0]
		if sel := hook.NamespaceSelector; sel == nil || len(sel.MatchExpressions) != 1 || !slices.Equal(sel.MatchExpressions[0].Values, []string{name}) {
			t.Errorf("namespaceSelector %v, want the tenant's namespace", sel)
		}
		if sel := hook.ObjectSelector; sel == nil || len(sel.MatchExpressions) != 1 || sel.MatchExpressions[0].Key != tenancyv1.LabelTenant {
			t.Errorf("objectSelector %v, want the platform's objects left out", sel)
		}
		if r := hook.Rules[0]; r.Scope == nil || *r.Scope != admissionregistrationv1.NamespacedScope {
			t.Errorf("rule %+v, want scope Namespaced", r)
		}
		svc := hook.ClientConfig.Service
		if svc == nil || svc.Namespace != name || svc.Name != olmDeploy+"-service" || *svc.Port != 9443 {
			t.Errorf("clientConfig %+v", hook.ClientConfig)
		}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: olmDeploy + "-service"}, &corev1.Service{}); err != nil {
			t.Errorf("webhook Service: %v", err)
		}
		secret := &corev1.Secret{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: olmDeploy + "-service-cert"}, secret); err != nil {
			t.Fatalf("webhook certificate Secret: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(hook.ClientConfig.CABundle) {
			t.Fatalf("caBundle holds no certificate")
		}
		block, _ := pem.Decode(secret.Data["tls.crt"])
		if block == nil {
			t.Fatalf("tls.crt holds no certificate")
		}
		leaf, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: olmDeploy + "-service." + name + ".svc"}); err != nil {
			t.Errorf("the serving certificate does not verify against the caBundle: %v", err)
		}
		if left := time.Until(leaf.NotAfter); left < 300*24*time.Hour {
			t.Errorf("the serving certificate has %v left, want about a year", left)
		}
		return hook.ClientConfig.CABundle
	}
	first := check()
	dep := &appsv1.Deployment{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: olmDeploy}, dep); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(dep.Spec.Template.Spec.Containers[0].VolumeMounts); !strings.Contains(got, "/tmp/k8s-webhook-server/serving-certs") {
		t.Errorf("the manager does not mount its certificate: %s", got)
	}

	// Certificates due for renewal are issued again and rolled out.
	data, err := tenancy.ExpiringWebhookCerts(name, olmDeploy)
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenancy.DefaultStorageNamespace, Name: tenancy.CertsSecretName(name, "kv")}}
	testcluster.UpdateObject(t, cl, stored, func(s *corev1.Secret) { s.Data = data })
	waitTenant(t, name, 2*time.Minute, "renewed certificates rolled out", bundleAt("0.1.0", 2))
	if renewed := check(); bytes.Equal(renewed, first) || bytes.Equal(renewed, data["ca.crt"]) {
		t.Errorf("the caBundle was not renewed")
	}

	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, 2*time.Minute, "the webhook configuration and certificates gone", func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Name: vwcName}, &admissionregistrationv1.ValidatingWebhookConfiguration{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ValidatingWebhookConfiguration: %v", err)
		}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(stored), &corev1.Secret{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("certificates Secret: %v", err)
		}
		return nil
	})
}

// moveToV1beta1 edits the sample CRD to store v1beta1, a copy of
// v1alpha1, and stop serving v1alpha1, whose objects stay stored.
func moveToV1beta1(s string) string {
	i := strings.Index(s, "  - additionalPrinterColumns:")
	item := s[i:]
	beta := strings.Replace(item, "    name: v1alpha1", "    name: v1beta1", 1)
	alpha := strings.Replace(item, "    served: true\n    storage: true", "    served: false\n    storage: false", 1)
	return s[:i] + alpha + beta
}
