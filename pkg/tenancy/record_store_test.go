package tenancy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	releaserecords "opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// requestCounter counts the requests a client makes, by method, and LIST
// apart from GET.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
	rt http.RoundTripper
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	verb := r.Method
	if verb == http.MethodGet && strings.HasSuffix(r.URL.Path, "/secrets") {
		verb = "LIST"
	}
	c.mu.Lock()
	c.n[verb]++
	c.mu.Unlock()
	return c.rt.RoundTrip(r)
}

func (c *requestCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func recordOf(name, ns string, version int, status release.Status) *release.Release {
	return &release.Release{Name: name, Namespace: ns, Version: version, Manifest: "kind: ConfigMap\n",
		Info:  &release.Info{Status: status},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "sample", Version: "0.1.0"}},
	}
}

// The records' index answers a reconcile's read of the latest revisions
// with GETs of those records, never a LIST, and never hides a write of
// this process; a write over a record changed by someone else fails
// instead of overwriting it; Helm's own driver reads the records.
func TestReleaseRecordIndex(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counter := &requestCounter{n: map[string]int{}}
	records := rest.CopyConfig(cluster.Config)
	records.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.rt = rt; return counter })
	store, err := tenancy.NewRecordStore(records, cluster.Config, tenancy.DefaultStorageNamespace)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = store.Start(ctx) }()
	tenant, ns := "ri-"+suffix(), "ri-ns"
	d := store.Driver(tenant, ns)
	key := func(v int) string { return fmt.Sprintf("sh.helm.release.v1.kv.v%d", v) }

	// Read-your-writes, at once: no wait for the index.
	if err := d.Create(key(1), recordOf("kv", ns, 1, release.StatusPendingInstall)); err != nil {
		t.Fatal(err)
	}
	if err := d.Update(key(1), recordOf("kv", ns, 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	cur, deployed, err := tenancy.Latest(d, "kv")
	if err != nil || cur == nil || deployed == nil || cur.Info.Status != release.StatusDeployed {
		t.Fatalf("right after the writes: current %v, deployed %v, %v; want revision 1 deployed", cur, deployed, err)
	}

	// Once the index shows the writes: GETs only.
	deadline := time.Now().Add(30 * time.Second)
	for !store.Indexed(tenant, ns) {
		if time.Now().After(deadline) {
			t.Fatal("the index did not show this process's writes within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	counter.take()
	for range 10 {
		cur, _, err := tenancy.Latest(d, "kv")
		if err != nil || cur == nil || cur.Version != 1 || cur.Manifest != "kind: ConfigMap\n" || cur.Chart.Metadata.Version != "0.1.0" {
			t.Fatalf("indexed read: %+v, %v", cur, err)
		}
	}
	if n := counter.take(); n["LIST"] != 0 || n[http.MethodGet] != 10 {
		t.Errorf("10 indexed reads made %v requests, want 10 GETs and no LIST", n)
	}

	// A record changed by someone else since this process read it is not
	// overwritten.
	name := "sh.helm.release.v1." + tenant + "." + ns + ".kv.v1"
	secrets := cluster.Client.CoreV1().Secrets(tenancy.DefaultStorageNamespace)
	sec, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Labels["edited"] = "elsewhere"
	if _, err := secrets.Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = d.Update(key(1), recordOf("kv", ns, 1, release.StatusSuperseded))
	if !apierrors.IsConflict(err) {
		t.Errorf("update over a record changed elsewhere: %v, want a conflict", err)
	}
	if sec, err := secrets.Get(ctx, name, metav1.GetOptions{}); err != nil || sec.Labels["edited"] != "elsewhere" || sec.Labels["status"] != "deployed" {
		t.Errorf("the record changed elsewhere was overwritten: %v, %v", sec.Labels, err)
	}

	// Helm's own Secrets driver reads the record as it is.
	rel, err := driver.NewSecrets(secrets).Get(name)
	if err != nil || rel.Name != "kv" || rel.Version != 1 || rel.Info.Status != release.StatusDeployed || rel.Manifest != "kind: ConfigMap\n" {
		t.Errorf("Helm's driver read %+v, %v", rel, err)
	}

	// A record named for this tenant but labelled for another is never
	// read, from the index or by name.
	forged := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1." + tenant + "." + ns + ".kv.v2",
		Labels: map[string]string{releaserecords.LabelRecordTenant: "other", releaserecords.LabelRecordNamespace: ns, "owner": "helm", "name": "kv", "version": "2", "status": "deployed"}},
		Type: "helm.sh/release.v1", Data: sec.Data}
	if _, err := secrets.Create(ctx, forged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = secrets.Delete(context.Background(), forged.Name, metav1.DeleteOptions{}) }()
	time.Sleep(time.Second) // the index sees the forged record
	if cur, _, err := tenancy.Latest(d, "kv"); err != nil || cur == nil || cur.Version != 1 {
		t.Errorf("with a forged revision 2 of another tenant: latest %v, %v; want revision 1", cur, err)
	}
	if _, err := d.Get(key(2)); err == nil || errors.Is(err, driver.ErrReleaseNotFound) {
		t.Errorf("reading the forged record by name: %v, want a refusal", err)
	}

	// A delete is seen at once too.
	if _, err := d.Delete(key(1)); err != nil {
		t.Fatal(err)
	}
	if cur, _, err := tenancy.Latest(d, "kv"); err != nil || cur != nil {
		t.Errorf("right after the delete: latest %v, %v; want none", cur, err)
	}
}
