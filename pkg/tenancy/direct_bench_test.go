package tenancy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
)

// warmTenant provisions one tenant with a controller of its own, then
// stops the controller: the shared CRD is installed, and the tenant can be
// a template.
func warmTenant(b *testing.B, chart, id string, owners ...string) string {
	proc := benchController(b, freeAddr(b))
	warm := "warm-" + id
	createTenant(b, newTenant(warm, []string{warm}, chart, 1, owners...))
	waitTenant(b, warm, 2*time.Minute, "warm-up tenant Ready", ready)
	_ = proc.Process.Kill()
	_, _ = proc.Process.Wait()
	return warm
}

// BenchmarkTenancyDirect is the reference BenchmarkTenancyProvision is
// held against: what this machine takes to make the same objects with no
// controller at all. A tenant provisioned by the controller is the
// template; the controller then stops, and -tenants namespaces get copies
// of that tenant's objects (namespace, quota, limits, NetworkPolicies,
// owner RoleBinding and the release manifest of the sample chart) from a
// tight client loop on -workers goroutines: no Helm release records, no
// reconciles, status or events. As the controller does, each namespace's
// chart objects wait until its quota is counted. It prints the wall time
// until every Deployment is rolled out and the writes it took. Run it on a
// control plane of its own: make bench-tenancy runs it after the controller.
func BenchmarkTenancyDirect(b *testing.B) {
	c := testcluster.Require(b, cluster)
	ctx := context.Background()
	n := *benchTenants
	id := suffix()

	warm := warmTenant(b, sampleChart(b, "", "0.1.0"), id, "owner-warm-"+id)
	tpl := newDirectTemplate(b, c, warm)

	quotas := informer(b, c, &corev1.ResourceQuota{}, cache.ByObject{})
	deploys := informer(b, c, &appsv1.Deployment{}, cache.ByObject{})
	prefix := "d" + id
	w := openWindow(b, c)
	start := w.start
	if err := parallel(*benchWorkers, n, func(i int) error {
		return tpl.provision(ctx, fmt.Sprintf("%s-%04d", prefix, i), quotas)
	}); err != nil {
		b.Fatal(err)
	}
	created := time.Since(start)
	toReady := waitAll(b, start, n, "Deployments rolled out", func() (int, string) {
		var list appsv1.DeploymentList
		if err := deploys.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
			b.Fatal(err)
		}
		done := 0
		for i := range list.Items {
			if strings.HasPrefix(list.Items[i].Namespace, prefix) && tenancy.RolledOut(&list.Items[i]) {
				done++
			}
		}
		return done, strconv.Itoa(n - done)
	})
	total, cpu := w.close(b, c, toReady, n)
	rate, rates := w.floorRate(b, c)
	floor := total / rate
	fmt.Printf("\ndirect reference: the objects of %d tenants created by a client loop, no controller\n", n)
	fmt.Printf("  wall time to all Deployments rolled out: %.1f s (objects created after %.1f s)\n", toReady.Seconds(), created.Seconds())
	fmt.Printf("  API writes (all):                        %.0f (%.1f per tenant)\n", total, total/float64(n))
	fmt.Printf("  reference, raw write probe:              %s -> physical floor %.1f s; direct loop at %.1fx the floor\n", rates, floor, toReady.Seconds()/floor)
	fmt.Printf("  CPU while provisioning:                  %s\n", cpu)
	fmt.Printf("  API requests per tenant:                 %s\n", w.requests)
	b.ReportMetric(toReady.Seconds(), "s-to-all-ready")
	b.ReportMetric(total, "writes-total")
	b.ReportMetric(toReady.Seconds()/floor, "x-floor")
	b.ReportMetric(0, "ns/op")
}

// directTemplate is one tenant's objects as JSON, in creation order, with
// the template namespace's name to replace.
type directTemplate struct {
	from    string
	setup   [][]byte // namespace, quota, limits, NetworkPolicies, RoleBindings
	release [][]byte // the release manifest, in Helm's install order
	client  client.Client
	decoder runtime.Decoder
}

func newDirectTemplate(b *testing.B, c *testcluster.Cluster, ns string) *directTemplate {
	b.Helper()
	ctx := context.Background()
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = -1, 0
	cl, err := client.New(cfg, client.Options{Scheme: tenancy.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	t := &directTemplate{from: ns, client: cl, decoder: serializer.NewCodecFactory(tenancy.Scheme()).UniversalDeserializer()}
	nsObj := &corev1.Namespace{}
	if err := cl.Get(ctx, client.ObjectKey{Name: ns}, nsObj); err != nil {
		b.Fatal(err)
	}
	objs := []client.Object{nsObj}
	for _, l := range []client.ObjectList{&corev1.ResourceQuotaList{}, &corev1.LimitRangeList{}, &networkingv1.NetworkPolicyList{}, &rbacv1.RoleBindingList{}} {
		if err := cl.List(ctx, l, client.InNamespace(ns), client.HasLabels{tenancyv1.LabelTenant}); err != nil {
			b.Fatal(err)
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range items {
			// The release's own objects carry the tenant label too; they
			// come from its manifest below.
			if _, ok := o.(client.Object).GetAnnotations()["meta.helm.sh/release-name"]; ok {
				continue
			}
			objs = append(objs, o.(client.Object))
		}
	}
	for _, o := range objs {
		t.setup = append(t.setup, templateJSON(b, o))
	}
	rel := storedRelease(b, nsObj.Labels[tenancyv1.LabelTenant], ns, "kv", 1)
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(rel.Manifest, -1) {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			b.Fatal(err)
		}
		if s := strings.TrimSpace(string(j)); s != "" && s != "null" {
			t.release = append(t.release, j)
		}
	}
	return t
}

// templateJSON is o as it was asked for: no server fields, no status, no
// owner.
func templateJSON(b *testing.B, o client.Object) []byte {
	b.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		b.Fatal(err)
	}
	gvk, err := cl.GroupVersionKindFor(o)
	if err != nil {
		b.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: u}
	obj.SetGroupVersionKind(gvk)
	for _, f := range [][]string{{"status"}, {"metadata", "uid"}, {"metadata", "resourceVersion"}, {"metadata", "creationTimestamp"},
		{"metadata", "managedFields"}, {"metadata", "ownerReferences"}, {"metadata", "generation"}} {
		unstructured.RemoveNestedField(obj.Object, f...)
	}
	j, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	return j
}

// provision creates the template's objects in namespace ns, the release's
// once ns's quota is counted. Objects are decoded into their Go types, so
// they go over the wire as protobuf: the cheapest requests there are;
// kinds the scheme lacks go as JSON.
func (t *directTemplate) provision(ctx context.Context, ns string, quotas cache.Cache) error {
	create := func(docs [][]byte) error {
		for _, d := range docs {
			raw := bytes.ReplaceAll(d, []byte(t.from), []byte(ns))
			var obj client.Object
			if o, _, err := t.decoder.Decode(raw, nil, nil); err == nil {
				obj = o.(client.Object)
			} else if runtime.IsNotRegisteredError(err) {
				// Kinds of other projects' CRDs (ServiceMonitor), as JSON.
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON(raw); err != nil {
					return err
				}
				obj = u
			} else {
				return err
			}
			if err := t.client.Create(ctx, obj); err != nil {
				return fmt.Errorf("%T %s/%s: %w", obj, ns, obj.GetName(), err)
			}
		}
		return nil
	}
	if err := create(t.setup); err != nil {
		return err
	}
	for {
		q := &corev1.ResourceQuota{}
		if err := quotas.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenancy.QuotaName}, q); err == nil && tenancy.QuotaCounted(q) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return create(t.release)
}
