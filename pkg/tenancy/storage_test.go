package tenancy

import (
	"context"
	"errors"
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func testRelease(name, ns string, version int, status release.Status, manifest string) *release.Release {
	return &release.Release{Name: name, Namespace: ns, Version: version, Manifest: manifest,
		Info:  &release.Info{Status: status},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "0.1.0"}},
	}
}

func testHelm(t *testing.T) (*helmClient, *fake.Clientset) {
	cs := fake.NewClientset()
	return &helmClient{secrets: cs, records: newRecordStore(cs.CoreV1().Secrets("opctl-system"), "opctl-system"), migrated: map[string]bool{}, log: t.Logf}, cs
}

// Two tenants' releases of the same name live side by side in the storage
// namespace and never see each other.
func TestStorageIsPerTenant(t *testing.T) {
	h, cs := testHelm(t)
	a, b := storage.Init(h.storage("a", "ns-a")), storage.Init(h.storage("b", "ns-b"))
	for v := 1; v <= 2; v++ {
		if err := a.Create(testRelease("kv", "ns-a", v, release.StatusDeployed, "a")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Create(testRelease("kv", "ns-b", 1, release.StatusDeployed, "b")); err != nil {
		t.Fatal(err)
	}
	ha, err := a.History("kv")
	if err != nil || len(ha) != 2 {
		t.Fatalf("tenant a history: %d, %v; want 2", len(ha), err)
	}
	hb, err := b.History("kv")
	if err != nil || len(hb) != 1 || hb[0].Manifest != "b" {
		t.Fatalf("tenant b history: %v, %v; want its own revision", hb, err)
	}
	secrets, err := cs.CoreV1().Secrets("opctl-system").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range secrets.Items {
		names = append(names, s.Name)
		if s.Labels[LabelRecordTenant] == "" || s.Labels["owner"] != "helm" {
			t.Errorf("record %s labels %v", s.Name, s.Labels)
		}
	}
	slices.Sort(names)
	want := []string{"sh.helm.release.v1.a.ns-a.kv.v1", "sh.helm.release.v1.a.ns-a.kv.v2", "sh.helm.release.v1.b.ns-b.kv.v1"}
	if !slices.Equal(names, want) {
		t.Errorf("record names %v, want %v", names, want)
	}
	// A record whose name reads as a's but whose labels say otherwise is
	// not a's.
	forged := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.a.ns-a.kv.v3", Namespace: "opctl-system",
		Labels: map[string]string{LabelRecordTenant: "b", LabelRecordNamespace: "ns-a", "owner": "helm", "name": "kv"}}}
	if _, err := cs.CoreV1().Secrets("opctl-system").Create(context.Background(), forged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get("kv", 3); err == nil {
		t.Error("tenant a read a record labelled for tenant b")
	}
	if ha, _ := a.History("kv"); len(ha) != 2 {
		t.Errorf("tenant a history has %d revisions after a forged one appeared, want 2", len(ha))
	}
	// Deleting through the driver removes only a's record.
	if _, err := a.Delete("kv", 1); err != nil {
		t.Fatal(err)
	}
	if hb, _ := b.History("kv"); len(hb) != 1 {
		t.Errorf("tenant b lost its record when a deleted one")
	}
}

// Records move from the release namespace into the storage namespace
// once, verified and then deleted; a revision a tenant adds later above the
// newest kept one is never taken.
func TestMigrate(t *testing.T) {
	h, cs := testHelm(t)
	ctx := context.Background()
	legacy := storage.Init(h.legacy("ns-a"))
	for v, st := range []release.Status{release.StatusSuperseded, release.StatusSuperseded, release.StatusDeployed} {
		if err := legacy.Create(testRelease("kv", "ns-a", v+1, st, "rev")); err != nil {
			t.Fatal(err)
		}
	}
	moved, err := h.migrate("a", "ns-a", "kv")
	if err != nil || !slices.Equal(moved, []int{1, 2, 3}) {
		t.Fatalf("migrate: moved %v, %v; want [1 2 3]", moved, err)
	}
	left, _ := cs.CoreV1().Secrets("ns-a").List(ctx, metav1.ListOptions{})
	if len(left.Items) != 0 {
		t.Errorf("%d records left in the release namespace", len(left.Items))
	}
	stored := storage.Init(h.storage("a", "ns-a"))
	rel, err := stored.Last("kv")
	if err != nil || rel.Version != 3 || rel.Info.Status != release.StatusDeployed || rel.Manifest != "rev" {
		t.Fatalf("last stored revision %+v, %v", rel, err)
	}
	// Once per process.
	if moved, err := h.migrate("a", "ns-a", "kv"); err != nil || len(moved) != 0 {
		t.Errorf("second migrate moved %v, %v", moved, err)
	}

	// A later process: a forged revision 9 above the kept ones stays where
	// it is; a gap below the newest (a copy cut short) is filled.
	h.migrated = map[string]bool{}
	if err := legacy.Create(testRelease("kv", "ns-a", 9, release.StatusDeployed, "forged")); err != nil {
		t.Fatal(err)
	}
	if _, err := stored.Delete("kv", 2); err != nil {
		t.Fatal(err)
	}
	if err := legacy.Create(testRelease("kv", "ns-a", 2, release.StatusSuperseded, "rev")); err != nil {
		t.Fatal(err)
	}
	moved, err = h.migrate("a", "ns-a", "kv")
	if err != nil || !slices.Equal(moved, []int{2}) {
		t.Fatalf("resumed migrate moved %v, %v; want [2]", moved, err)
	}
	if _, err := stored.Get("kv", 9); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Errorf("forged revision 9 taken into storage: %v", err)
	}
	if _, err := legacy.Get("kv", 9); err != nil {
		t.Errorf("the tenant's own record was deleted: %v", err)
	}

	// Handing back moves everything to the release namespace.
	back, err := h.handBack("a", "ns-a", "kv")
	if err != nil || !slices.Equal(back, []int{1, 2, 3}) {
		t.Fatalf("handBack moved %v, %v", back, err)
	}
	if h, _ := stored.History("kv"); len(h) != 0 {
		t.Errorf("%d records left in storage after handing back", len(h))
	}
}
