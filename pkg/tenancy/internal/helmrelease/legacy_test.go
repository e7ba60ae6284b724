package helmrelease

import (
	"context"
	"slices"
	"testing"

	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/metadata"
	metadatafake "k8s.io/client-go/metadata/fake"
)

func testRelease(name, ns string, version int, status release.Status, manifest string) *release.Release {
	return &release.Release{Name: name, Namespace: ns, Version: version, Manifest: manifest,
		Info:  &release.Info{Status: status},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "0.1.0"}},
	}
}

func testHelm(t *testing.T) (*HelmClient, *fake.Clientset) {
	cs := fake.NewClientset()
	return &HelmClient{actor: func(string) (kubernetes.Interface, metadata.Interface, error) { return cs, nil, nil }, Records: records.NewStore(cs.CoreV1().Secrets("opctl-system"), "opctl-system"), migrated: map[string]bool{}, log: t.Logf}, cs
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
		if s.Labels[records.LabelRecordTenant] == "" || s.Labels["owner"] != "helm" {
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
		Labels: map[string]string{records.LabelRecordTenant: "b", records.LabelRecordNamespace: "ns-a", "owner": "helm", "name": "kv"}}}
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

// Records in a release namespace are the tenant's: dropLegacy deletes
// those named and labelled as the release's Helm records without reading
// them (a list of names, no get), once per release and process, and
// leaves every other Secret. handBack writes the stored records back over
// whatever the namespace holds, never reading it.
func TestLegacyRecordsDroppedUnread(t *testing.T) {
	h, cs := testHelm(t)
	ctx := context.Background()
	record := func(name, rel string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns-a", UID: types.UID(name), Labels: map[string]string{"owner": "helm", "name": rel}}}
	}
	scheme := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(scheme)
	meta := metadatafake.NewSimpleMetadataClient(scheme,
		record("sh.helm.release.v1.kv.v1", "kv"), record("sh.helm.release.v1.kv.v12", "kv"),
		record("sh.helm.release.v1.kv.v2-mine", "kv"), record("sh.helm.release.v1.other.v1", "other"))
	h.actor = func(string) (kubernetes.Interface, metadata.Interface, error) { return cs, meta, nil }
	// The API server's table of names (TestLegacyRecordsListedByName
	// lists one), from the fake's metadata.
	h.legacyNames = func(ctx context.Context, _ kubernetes.Interface, namespace, name, _ string) ([]string, string, error) {
		list, err := meta.Resource(records.SecretsResource).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
		if err != nil {
			return nil, "", err
		}
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		return names, "", nil
	}
	dropped, err := h.dropLegacy(ctx, "a", "ns-a", "kv")
	if err != nil || !slices.Equal(dropped, []string{"sh.helm.release.v1.kv.v1", "sh.helm.release.v1.kv.v12"}) {
		t.Fatalf("dropLegacy: %v, %v", dropped, err)
	}
	left, err := meta.Resource(records.SecretsResource).Namespace("ns-a").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range left.Items {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	if want := []string{"sh.helm.release.v1.kv.v2-mine", "sh.helm.release.v1.other.v1"}; !slices.Equal(names, want) {
		t.Errorf("Secrets left %v, want %v", names, want)
	}
	for _, a := range meta.Actions() {
		if a.GetVerb() == "get" {
			t.Errorf("dropLegacy read a record: %v", a)
		}
	}
	// Once per process.
	meta.ClearActions()
	if dropped, err := h.dropLegacy(ctx, "a", "ns-a", "kv"); err != nil || len(dropped) != 0 || len(meta.Actions()) != 0 {
		t.Errorf("second dropLegacy: %v, %v, actions %v", dropped, err, meta.Actions())
	}

	// Handing back: the stored revisions overwrite a Secret of the same
	// key in the release namespace, and leave storage.
	stored := storage.Init(h.storage("a", "ns-a"))
	for v, st := range []release.Status{release.StatusSuperseded, release.StatusDeployed} {
		if err := stored.Create(testRelease("kv", "ns-a", v+1, st, "rev")); err != nil {
			t.Fatal(err)
		}
	}
	if err := storage.Init(legacy(t, h, "ns-a")).Create(testRelease("kv", "ns-a", 2, release.StatusDeployed, "forged")); err != nil {
		t.Fatal(err)
	}
	back, err := h.handBack("a", "ns-a", "kv")
	if err != nil || !slices.Equal(back, []int{1, 2}) {
		t.Fatalf("handBack moved %v, %v", back, err)
	}
	if h, _ := stored.History("kv"); len(h) != 0 {
		t.Errorf("%d records left in storage after handing back", len(h))
	}
	if rel, err := storage.Init(legacy(t, h, "ns-a")).Get("kv", 2); err != nil || rel.Manifest != "rev" {
		t.Errorf("revision 2 handed back: %v, %v", rel, err)
	}
}

func legacy(t *testing.T, h *HelmClient, ns string) driver.Driver {
	d, err := h.legacy("a", ns)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
