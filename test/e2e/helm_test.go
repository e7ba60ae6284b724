package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
)

var restricted = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}

// installSampleCRDs installs the sample's CRDs as a platform team does
// for tenants: labelled shared. The tenancy package's tests run on the
// same control plane at the same time and use these CRDs; its controller
// refuses an operator whose CRD exists unshared (CRDNotShared), which a
// CRD recreated here unlabelled, after that controller deleted it as
// unused, would be.
func installSampleCRDs(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	if err := c.InstallCRDs(ctx, "../../operators/sample/config/crd/bases"); err != nil {
		t.Fatal(err)
	}
	ext := apiextensionsclient.NewForConfigOrDie(c.Config)
	patch := []byte(`{"metadata":{"labels":{"` + tenancyv1.LabelSharedCRD + `":"true"}}}`)
	for _, name := range []string{"kvstores.kv.opctl.dev", "kvbackups.kv.opctl.dev"} {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("labelling CRD %s shared: %v", name, err)
		}
	}
}

// packageChart runs the opctl binary on project and loads the chart.
func packageChart(t *testing.T, project string, args ...string) *chart.Chart {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(opctlBin, append([]string{"package", project, "--out", out, "--chart-only"}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("opctl package: %v\n%s", err, b)
	}
	entries, err := os.ReadDir(filepath.Join(out, "charts"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("charts/: %v %v", entries, err)
	}
	c, err := loader.Load(filepath.Join(out, "charts", entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// helmConfig is a Helm SDK configuration for releases in namespace.
func helmConfig(t *testing.T, namespace string) *action.Configuration {
	t.Helper()
	settings := cli.New()
	settings.KubeConfig = cluster.Kubeconfig
	cfg := new(action.Configuration)
	if err := cfg.Init(settings.RESTClientGetter(), namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func helmInstall(t *testing.T, c *chart.Chart, namespace string, wait bool, values map[string]any) {
	t.Helper()
	install := action.NewInstall(helmConfig(t, namespace))
	install.ReleaseName, install.Namespace = "kv", namespace
	install.Wait, install.Timeout = wait, 2*time.Minute
	if _, err := install.RunWithContext(context.Background(), c, values); err != nil {
		t.Fatalf("helm install into %s: %v", namespace, err)
	}
}

var kvstores = schema.GroupVersionResource{Group: "kv.opctl.dev", Version: "v1alpha1", Resource: "kvstores"}

func kvstore(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kv.opctl.dev/v1alpha1", "kind": "KVStore",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"replicas": int64(1)},
	}}
}

// The sample's chart installs into two namespaces with rbac.scope
// namespace; each release's operator, running as its release's
// ServiceAccount, serves its own namespace and is denied the other.
func TestChartInstallsIntoTwoNamespaces(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ch := packageChart(t, "../../operators/sample")
	// The CRDs are cluster-wide: the platform installs them once, and every
	// tenant release runs with crds.install=false.
	installSampleCRDs(t, c)
	nss := []string{c.Namespace(t, "tenant-a", restricted), c.Namespace(t, "tenant-b", restricted)}
	const sa = "kv-sample-operator-controller-manager"
	dc := dynamic.NewForConfigOrDie(c.Config)
	for _, ns := range nss {
		helmInstall(t, ch, ns, true, map[string]any{"crds": map[string]any{"install": false}})
	}
	off, err := c.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss {
		testcluster.StartOperator(t, managerBin, c.ServiceAccountKubeconfig(t, ns, sa), nil,
			"--watch-namespaces", ns, "--leader-elect", "--leader-election-namespace", ns)
		if _, err := dc.Resource(kvstores).Namespace(ns).Create(ctx, kvstore("cache"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range nss {
		testcluster.WaitReady(t, dc, kvstores, ns, "cache", 90*time.Second)
	}
	// Each namespace was written by its own release's operator only.
	for i, ns := range nss {
		own, other := "system:serviceaccount:"+ns+":"+sa, "system:serviceaccount:"+nss[1-i]+":"+sa
		writes, err := c.AuditWritesSince(off, func(e testcluster.AuditEvent) bool { return e.ObjectRef.Namespace == ns })
		if err != nil {
			t.Fatal(err)
		}
		mine := 0
		for _, w := range writes {
			switch w.User.Username {
			case own:
				mine++
			case other:
				t.Errorf("the operator of %s wrote %s %s in %s", nss[1-i], w.Verb, w.ObjectRef.Resource, ns)
			}
		}
		if mine == 0 {
			t.Errorf("the operator of %s made no writes in its own namespace", ns)
		}
	}
	// RBAC: a release's ServiceAccount is denied the other namespace.
	cfg, err := clientcmd.BuildConfigFromFlags("", c.ServiceAccountKubeconfig(t, nss[0], sa))
	if err != nil {
		t.Fatal(err)
	}
	asA := dynamic.NewForConfigOrDie(cfg)
	if _, err := asA.Resource(kvstores).Namespace(nss[0]).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("tenant-a's operator cannot list KVStores in its namespace: %v", err)
	}
	if _, err := asA.Resource(kvstores).Namespace(nss[1]).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("tenant-a's operator listing KVStores in tenant-b: %v, want Forbidden", err)
	}
}

// helm upgrade to a chart whose CRD gained a field upgrades the CRD, and
// uninstalling keeps it (crds.keep).
func TestHelmUpgradeUpgradesCRD(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	// A copy of the sample under its own API group, so this release owns
	// its CRD on a cluster that other tests share.
	const group = "kvupgrade.opctl.dev"
	project, crdFile := testproject.UnderGroup(t, "../../operators/sample", group)
	ns := c.Namespace(t, "crd-upgrade", restricted)
	helmInstall(t, packageChart(t, project, "--version", "0.1.0"), ns, false, nil)
	crdName := "kvstores." + group
	ext := apiextensionsclient.NewForConfigOrDie(c.Config)
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crdName, metav1.DeleteOptions{})
	})

	testproject.Edit(t, crdFile, func(crd string) string {
		return testproject.AddSpecField(crd, "addedInV2", "AddedInV2 is new in 0.2.0.")
	})
	upgrade := action.NewUpgrade(helmConfig(t, ns))
	upgrade.Namespace = ns
	if _, err := upgrade.RunWithContext(ctx, "kv", packageChart(t, project, "--version", "0.2.0"), nil); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["addedInV2"]; !ok {
		t.Errorf("helm upgrade did not add spec.addedInV2 to the CRD")
	}
	if _, err := action.NewUninstall(helmConfig(t, ns)).Run("kv"); err != nil {
		t.Fatal(err)
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crdName, metav1.GetOptions{}); err != nil {
		t.Errorf("the CRD was deleted on uninstall despite crds.keep: %v", err)
	}
}

// The helm CLI's strict lint accepts the generated chart.
func TestHelmLintStrict(t *testing.T) {
	bin := testcluster.RequireBinDir(t)
	out := t.TempDir()
	if b, err := exec.Command(opctlBin, "package", "../../operators/sample", "--out", out, "--chart-only").CombinedOutput(); err != nil {
		t.Fatalf("opctl package: %v\n%s", err, b)
	}
	b, err := exec.Command(filepath.Join(bin, "helm"), "lint", "--strict", filepath.Join(out, "charts", "sample-operator")).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "0 chart(s) failed") {
		t.Errorf("helm lint --strict: %v\n%s", err, b)
	}
}

// A chart with webhooks installs with a Helm-generated CA: the API server
// takes the webhook configurations with that CA, and helm upgrade keeps
// the certificate (lookup) instead of rotating it.
func TestWebhookChartSelfSigned(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ch := packageChart(t, "../../pkg/packaging/testdata/webhook")
	ns := c.Namespace(t, "hooks", restricted)
	helmInstall(t, ch, ns, false, nil)
	ext := apiextensionsclient.NewForConfigOrDie(c.Config)
	t.Cleanup(func() {
		_, _ = action.NewUninstall(helmConfig(t, ns)).Run("kv")
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), "widgets.hook.example.com", metav1.DeleteOptions{})
	})
	secret, err := c.Client.CoreV1().Secrets(ns).Get(ctx, "kv-hook-operator-webhook-server-cert", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vwc, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "kv-hook-operator-"+ns+"-validating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hook := vwc.Webhooks[0]
	if string(hook.ClientConfig.CABundle) != string(secret.Data["ca.crt"]) {
		t.Errorf("the webhook's caBundle is not the CA in the Secret")
	}
	if svc := hook.ClientConfig.Service; svc == nil || svc.Name != "kv-hook-operator-webhook-service" || svc.Namespace != ns {
		t.Errorf("webhook calls %+v", hook.ClientConfig.Service)
	}
	upgrade := action.NewUpgrade(helmConfig(t, ns))
	upgrade.Namespace = ns
	if _, err := upgrade.RunWithContext(ctx, "kv", ch, nil); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	after, err := c.Client.CoreV1().Secrets(ns).Get(ctx, secret.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(after.Data["tls.crt"]) != string(secret.Data["tls.crt"]) {
		t.Errorf("helm upgrade rotated the serving certificate")
	}
}

// charts/opctl, the tenancy controller's own chart, installs and its
// controller Deployment becomes Ready. The Tenant CRDs are left to the
// platform here (crds.install=false) because other tests share them.
func TestOpctlChartInstalls(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ch, err := loader.Load("../../charts/opctl")
	if err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace(t, "opctl-system", restricted)
	install := action.NewInstall(helmConfig(t, ns))
	install.ReleaseName, install.Namespace = "opctl", ns
	install.Wait, install.Timeout = true, 2*time.Minute
	if _, err := install.RunWithContext(context.Background(), ch, map[string]any{"crds": map[string]any{"install": false}}); err != nil {
		t.Fatalf("helm install charts/opctl: %v", err)
	}
	deps, err := c.Client.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(deps.Items) != 1 || deps.Items[0].Status.ReadyReplicas != 1 {
		t.Fatalf("controller Deployment: %v, %v", deps, err)
	}
	args := strings.Join(deps.Items[0].Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "tenancy run") || !strings.Contains(args, "--shards") {
		t.Errorf("controller args %q", args)
	}
	uninstall := action.NewUninstall(helmConfig(t, ns))
	if _, err := uninstall.Run("opctl"); err != nil {
		t.Errorf("helm uninstall: %v", err)
	}
}

// A chart of an operator that issues its own webhook certificates lints
// strictly and installs: the webhook configurations call the release's
// Service in the release namespace and carry no caBundle, and the chart
// creates no certificate Secret (the operator will).
func TestWebhookChartOperatorCerts(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	const fixture = "../../pkg/packaging/testdata/operatorcerts"
	ch := packageChart(t, fixture)
	if _, ok := ch.Values["certManager"]; ok {
		t.Errorf("values offer certManager, which an operator-managed certificate never uses")
	}
	ns := c.Namespace(t, "ocert", restricted)
	helmInstall(t, ch, ns, false, nil)
	ext := apiextensionsclient.NewForConfigOrDie(c.Config)
	t.Cleanup(func() {
		_, _ = action.NewUninstall(helmConfig(t, ns)).Run("kv")
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), "widgets.ocert.example.com", metav1.DeleteOptions{})
	})
	vwc, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "kv-ocert-operator-"+ns+"-validating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range vwc.Webhooks {
		if len(h.ClientConfig.CABundle) > 0 {
			t.Errorf("webhook %s has a caBundle the chart made up", h.Name)
		}
		if svc := h.ClientConfig.Service; svc == nil || svc.Name != "kv-ocert-operator-webhook-service" || svc.Namespace != ns {
			t.Errorf("webhook %s calls %+v", h.Name, h.ClientConfig.Service)
		}
	}
	if _, err := c.Client.CoreV1().Services(ns).Get(ctx, "kv-ocert-operator-webhook-service", metav1.GetOptions{}); err != nil {
		t.Errorf("webhook Service: %v", err)
	}
	secrets, err := c.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=kubernetes.io/tls"})
	if err != nil || len(secrets.Items) != 0 {
		t.Errorf("TLS Secrets in %s: %d, %v; want none from the chart", ns, len(secrets.Items), err)
	}
	bin := testcluster.RequireBinDir(t)
	out := t.TempDir()
	if b, err := exec.Command(opctlBin, "package", fixture, "--out", out, "--chart-only").CombinedOutput(); err != nil {
		t.Fatalf("opctl package: %v\n%s", err, b)
	}
	if b, err := exec.Command(filepath.Join(bin, "helm"), "lint", "--strict", filepath.Join(out, "charts", "ocert-operator")).CombinedOutput(); err != nil || !strings.Contains(string(b), "0 chart(s) failed") {
		t.Errorf("helm lint --strict: %v\n%s", err, b)
	}
}
