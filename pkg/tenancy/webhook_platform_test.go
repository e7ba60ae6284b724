package tenancy_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcatalog"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// seenRequest is what a tenant's webhook server was sent.
type seenRequest struct {
	user     string
	groups   []string
	resource string
	op       string
	name     string
}

// tenantWebhook is a tenant's admission webhook server, run by the test
// on loopback: it records every request, and rewrites the InstallPlan
// status updates the controller makes, adding a CRD step.
type tenantWebhook struct {
	mu        sync.Mutex
	seen      []seenRequest
	rewriteAs string // the user whose InstallPlan status writes it rewrites
	evil      string // the CRD it adds
}

func (w *tenantWebhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(http.MaxBytesReader(rw, r.Body, 8<<20)).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "bad review", http.StatusBadRequest)
		return
	}
	req := review.Request
	res := req.Resource.Resource
	if req.SubResource != "" {
		res += "/" + req.SubResource
	}
	w.mu.Lock()
	w.seen = append(w.seen, seenRequest{user: req.UserInfo.Username, groups: req.UserInfo.Groups, resource: res, op: string(req.Operation), name: req.Name})
	w.mu.Unlock()
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if res == "installplans/status" && req.UserInfo.Username == w.rewriteAs {
		if patch := w.addCRDStep(req.Object.Raw); patch != nil {
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = patch, &pt
		}
	}
	review.Response, review.Request = resp, nil
	_ = json.NewEncoder(rw).Encode(&review)
}

// addCRDStep is a JSON patch that appends a CRD step to an InstallPlan's
// plan, as OLM writes its steps, for OLM to apply with its own rights.
func (w *tenantWebhook) addCRDStep(raw []byte) []byte {
	var ip struct {
		Status struct {
			Plan []struct {
				Resolving string `json:"resolving"`
				Resource  struct {
					SourceName      string `json:"sourceName"`
					SourceNamespace string `json:"sourceNamespace"`
				} `json:"resource"`
			} `json:"plan"`
		} `json:"status"`
	}
	if json.Unmarshal(raw, &ip) != nil || len(ip.Status.Plan) == 0 {
		return nil
	}
	plural, group, _ := strings.Cut(w.evil, ".")
	crd, _ := json.Marshal(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": w.evil},
		"spec": map[string]any{"group": group, "scope": "Namespaced", "names": map[string]any{"plural": plural, "kind": "Evil"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}}}})
	first := ip.Status.Plan[0]
	step := map[string]any{"resolving": first.Resolving, "status": "Unknown", "resource": map[string]any{
		"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition", "name": w.evil, "manifest": string(crd),
		"sourceName": first.Resource.SourceName, "sourceNamespace": first.Resource.SourceNamespace}}
	patch, _ := json.Marshal([]any{map[string]any{"op": "add", "path": "/status/plan/-", "value": step}})
	return patch
}

func (w *tenantWebhook) requests() []seenRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

// servingCert is a CA and a certificate it signed for dnsName.
func servingCert(t *testing.T, dnsName string) (caPEM []byte, cert tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tenant webhook CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// hookChart is a tenant chart of one mutating webhook on OLM's objects
// and the kinds the controller writes in a tenant namespace, served by
// the Service hook of the release's namespace, and the Deployment that
// would serve it.
const hookChart = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: watch
webhooks:
- name: watch.tenant.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  timeoutSeconds: 5
  clientConfig:
    caBundle: {{ .Values.caBundle }}
    service: {name: hook, namespace: {{ .Release.Namespace }}, port: {{ .Values.port }}, path: /mutate}
  rules:
  - {apiGroups: [operators.coreos.com], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [installplans, installplans/status, clusterserviceversions, subscriptions, operatorgroups]}
  - {apiGroups: [""], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [configmaps, serviceaccounts, secrets, services]}
  - {apiGroups: [rbac.authorization.k8s.io], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [roles, rolebindings]}
  - {apiGroups: [apps], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [deployments]}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hook
  labels: {app.kubernetes.io/instance: {{ .Release.Name }}}
spec:
  replicas: 1
  selector: {matchLabels: {app: hook}}
  template:
    metadata: {labels: {app: hook}}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: hook
        image: example.com/tenant/hook:1
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`

// The red team's critical: a tenant with an OLM operator ran a chart
// whose webhook matched installplans/status; it rewrote the InstallPlan
// status the controller wrote after its checks, the controller approved
// the rewritten plan, and OLM applied a CRD step nobody checked with its
// own rights. A tenant's webhook sees only the tenant's own requests:
// none of the controller's, its actor's, OLM's or kube-system's, and the
// controller approves exactly what it checked.
func TestTenantWebhooksSeeNoPlatformWrites(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	c.StartOLM(t)
	addr := testcatalog.Serve(t, publishSampleCatalog(t, "0.1.0"))
	startController(t, tenancy.Options{})

	name := "hookwatch-" + suffix()
	owner := "owner-" + name
	hook := &tenantWebhook{rewriteAs: controllerUser, evil: "evils.attack" + suffix() + ".example.com"}
	caPEM, cert := servingCert(t, "hook."+name+".svc")
	srv := httptest.NewUnstartedServer(hook)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	values, _ := json.Marshal(map[string]any{"port": p, "caBundle": base64.StdEncoding.EncodeToString(caPEM)})

	tn := newTenant(name, []string{name}, "", 0, owner)
	tn.Spec.Operators = []tenancyv1.OperatorSpec{
		{Name: "hook", Chart: &tenancyv1.ChartSource{Path: writeChart(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: hook\nversion: 0.1.0\n", "templates/hook.yaml": hookChart})},
			Values: &apiextensionsv1.JSON{Raw: values}},
		{Name: "kv", OLM: &tenancyv1.OLMSource{Catalog: tenancyv1.OLMCatalog{Address: addr}, Package: olmPackage, Channel: "stable"}, Instances: 1},
	}
	createTenant(t, tn)
	// On a cluster the chart's own Service routes to the webhook's pod;
	// here the API server reaches the test's server through a Service of
	// that name that resolves to loopback, made by admin.
	testcluster.WaitObject(t, cl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, time.Minute, "tenant namespace", func(*corev1.Namespace) error { return nil })
	if _, err := c.Client.CoreV1().Services(name).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitTenant(t, name, 4*time.Minute, "both operators Ready, the OLM one Succeeded", func(tn *tenancyv1.Tenant) error {
		if err := ready(tn); err != nil {
			return err
		}
		for _, op := range tn.Status.Operators {
			if op.Name == "kv" && (op.OLM == nil || op.OLM.Phase != "Succeeded") {
				return fmt.Errorf("operator kv %s, want its CSV Succeeded", dump(op))
			}
		}
		return nil
	})

	// The webhook works: the owner's own write reaches it.
	if _, err := kubernetes.NewForConfigOrDie(c.As(owner)).CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owners"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, 30*time.Second, "the owner's write seen by the tenant's webhook", func(context.Context) error {
		for _, r := range hook.requests() {
			if r.user == owner && r.resource == "configmaps" && r.name == "owners" {
				return nil
			}
		}
		return fmt.Errorf("the webhook saw %d requests, none the owner's ConfigMap", len(hook.requests()))
	})

	platform := func(r seenRequest) bool {
		tenantSA := strings.HasPrefix(r.user, "system:serviceaccount:"+name+":") && r.user != "system:serviceaccount:"+name+":"+tenancy.OperatorGroupName
		return slices.Contains(r.groups, "system:masters") || (strings.HasPrefix(r.user, "system:") && !tenantSA)
	}
	var leaked []string
	for _, r := range hook.requests() {
		if platform(r) {
			leaked = append(leaked, fmt.Sprintf("%s %s %s by %s", r.op, r.resource, r.name, r.user))
		}
	}
	if len(leaked) > 0 {
		t.Errorf("the tenant's webhook saw %d platform writes:\n%s", len(leaked), strings.Join(leaked, "\n"))
	}
	if err := cl.Get(ctx, client.ObjectKey{Name: hook.evil}, &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
		t.Errorf("CRD %s, added to the InstallPlan by the tenant's webhook: %v, want none", hook.evil, err)
	}
}

// TestWebhookNarrowingReconciled: a release's webhook configuration
// without the narrowing NarrowWebhooks gives (one an older controller
// rendered, simulated here by removing its matchConditions as admin) is
// narrowed again on the next reconcile of the Ready release, by a
// controller started afresh, though the release is not upgraded: drift
// correction checks the release's webhook configurations (red team 3).
func TestWebhookNarrowingReconciled(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	stop := startController(t, tenancy.Options{})
	name := "hookmig-" + suffix()
	caPEM, _ := servingCert(t, "hook."+name+".svc")
	values, _ := json.Marshal(map[string]any{"port": 4443, "caBundle": base64.StdEncoding.EncodeToString(caPEM)})
	tn := newTenant(name, []string{name}, "", 0, "owner-"+name)
	tn.Spec.Operators = []tenancyv1.OperatorSpec{{Name: "hook", Chart: &tenancyv1.ChartSource{Path: writeChart(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: hook\nversion: 0.1.0\n", "templates/hook.yaml": hookChart})},
		Values: &apiextensionsv1.JSON{Raw: values}}}
	createTenant(t, tn)
	waitTenant(t, name, 3*time.Minute, "Tenant Ready", ready)

	find := func() *admissionregistrationv1.MutatingWebhookConfiguration {
		list, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{LabelSelector: tenancyv1.LabelTenant + "=" + name})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("the release's MutatingWebhookConfiguration: %v, %d found", err, len(list.Items))
		}
		return &list.Items[0]
	}
	conds := func(m *admissionregistrationv1.MutatingWebhookConfiguration) []string {
		var out []string
		for _, c := range m.Webhooks[0].MatchConditions {
			out = append(out, c.Name)
		}
		return out
	}
	m := find()
	t.Logf("as installed: %s matchConditions %v", m.Name, conds(m))
	// A configuration as a pre-fix controller rendered it.
	patch := []byte(`[{"op":"remove","path":"/webhooks/0/matchConditions"}]`)
	if _, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, m.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller upgraded: a new process, and a reconcile of the Tenant.
	stop()
	startController(t, tenancy.Options{})
	live := &tenancyv1.Tenant{}
	if err := cl.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
		t.Fatal(err)
	}
	p := client.MergeFrom(live.DeepCopy())
	if live.Annotations == nil {
		live.Annotations = map[string]string{}
	}
	live.Annotations["test.opctl.dev/poke"] = fmt.Sprint(time.Now().Unix())
	if err := cl.Patch(ctx, live, p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(45 * time.Second)
	for m = find(); !slices.Contains(conds(m), guard.TenantRequestsCondition) && time.Now().Before(deadline); m = find() {
		time.Sleep(time.Second)
	}
	waitTenant(t, name, time.Minute, "Tenant Ready", ready)
	t.Logf("after a controller restart and a reconcile: matchConditions %v", conds(m))
	if !slices.Contains(conds(m), guard.TenantRequestsCondition) {
		t.Errorf("the release's webhook stays without %s: a webhook configuration rendered before the narrowing keeps seeing platform writes", guard.TenantRequestsCondition)
	}
	if sel := m.Webhooks[0].NamespaceSelector; sel == nil || len(sel.MatchExpressions) == 0 {
		t.Errorf("the release's webhook has no namespaceSelector: %v", sel)
	}
}

// TestWebhookRollbackNarrowed: a tenant forces a failed upgrade to bring
// back a revision whose stored manifest has its webhook configuration
// without the narrowing (as an older controller rendered it, simulated by
// editing the record): the rollback applies it narrowed all the same
// (red team 3: a rollback re-applied a stored manifest as it was).
func TestWebhookRollbackNarrowed(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "hookrb-" + suffix()
	caPEM, _ := servingCert(t, "hook."+name+".svc")
	values, _ := json.Marshal(map[string]any{"port": 4443, "caBundle": base64.StdEncoding.EncodeToString(caPEM)})
	chart := func(version, extra string) string {
		return writeChart(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: hook\nversion: " + version + "\n", "templates/hook.yaml": hookChart + extra})
	}
	tn := newTenant(name, []string{name}, "", 0, "owner-"+name)
	tn.Spec.Operators = []tenancyv1.OperatorSpec{{Name: "hook", Chart: &tenancyv1.ChartSource{Path: chart("0.1.0", "")}, Values: &apiextensionsv1.JSON{Raw: values}}}
	createTenant(t, tn)
	waitTenant(t, name, 3*time.Minute, "Tenant Ready", ready)

	// Revision 1 as a controller before the narrowing stored it.
	key := fmt.Sprintf("sh.helm.release.v1.%s.%s.%s.v%d", name, name, "hook", 1)
	editRecord(t, tenancy.DefaultStorageNamespace, key, func(rel *release.Release) {
		var out strings.Builder
		for _, doc := range guard.SplitManifest(rel.Manifest) {
			u := guard.ParseDoc(doc).Obj
			if u == nil {
				continue
			}
			if guard.IsWebhookConfiguration(u.GroupVersionKind()) {
				for _, h := range u.Object["webhooks"].([]any) {
					hook := h.(map[string]any)
					delete(hook, "matchConditions")
					delete(hook, "namespaceSelector")
					delete(hook, "objectSelector")
				}
			}
			b, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			out.WriteString("---\n" + string(b))
		}
		rel.Manifest = out.String()
	})
	// Every version of the configuration from now on is narrowed: the
	// rollback applies it so, not only a later reconcile.
	w, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Watch(ctx, metav1.ListOptions{LabelSelector: tenancyv1.LabelTenant + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var unnarrowed []string
	go func() {
		for e := range w.ResultChan() {
			m, ok := e.Object.(*admissionregistrationv1.MutatingWebhookConfiguration)
			if !ok || e.Type == "DELETED" {
				continue
			}
			for _, h := range m.Webhooks {
				if !slices.ContainsFunc(h.MatchConditions, func(c admissionregistrationv1.MatchCondition) bool { return c.Name == guard.TenantRequestsCondition }) {
					mu.Lock()
					unnarrowed = append(unnarrowed, m.ResourceVersion)
					mu.Unlock()
				}
			}
		}
	}()
	defer w.Stop()
	// An upgrade the API server refuses (a ConfigMap key it does not
	// accept) is rolled back to revision 1.
	live := &tenancyv1.Tenant{}
	if err := cl.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
		t.Fatal(err)
	}
	p := client.MergeFrom(live.DeepCopy())
	live.Spec.Operators[0].Chart.Path = chart("0.2.0", "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: refused}\ndata: {\"not a key\": x}\n")
	if err := cl.Patch(ctx, live, p); err != nil {
		t.Fatal(err)
	}
	waitTenant(t, name, 2*time.Minute, "0.2.0 rolled back", func(tn *tenancyv1.Tenant) error {
		if op := tn.Status.Operators[0]; op.FailedVersion != "0.2.0" || op.Revision < 3 {
			return fmt.Errorf("operator %s", dump(op))
		}
		return nil
	})
	if m := storedRelease(t, name, name, "hook", 3).Manifest; strings.Contains(m, guard.TenantRequestsCondition) {
		t.Fatalf("revision 3, the rollback to revision 1, has the narrowing in its manifest: the test did not roll back to an older controller's")
	}
	list, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{LabelSelector: tenancyv1.LabelTenant + "=" + name})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("the release's MutatingWebhookConfiguration: %v, %d found", err, len(list.Items))
	}
	time.Sleep(time.Second) // the watch's last events
	mu.Lock()
	if len(unnarrowed) > 0 {
		t.Errorf("the rollback applied the webhook configuration without %s (resourceVersions %v)", guard.TenantRequestsCondition, unnarrowed)
	}
	mu.Unlock()
	hook := list.Items[0].Webhooks[0]
	if !slices.ContainsFunc(hook.MatchConditions, func(c admissionregistrationv1.MatchCondition) bool { return c.Name == guard.TenantRequestsCondition }) ||
		hook.NamespaceSelector == nil || len(hook.NamespaceSelector.MatchExpressions) == 0 || hook.ObjectSelector == nil || len(hook.ObjectSelector.MatchExpressions) == 0 {
		t.Errorf("after the rollback the release's webhook is not narrowed: %s", dump(hook))
	}
}
