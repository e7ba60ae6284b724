package records

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// TestRecordsOverlayUnshownWrites: with an index that has not shown this
// process's writes (here, one that never will), reads of the release see
// every create, update and delete of this process, and none of them
// LISTs the storage namespace; another tenant's reads do not see them.
func TestRecordsOverlayUnshownWrites(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cs := stampedClientset()
	store := NewStore(cs.CoreV1().Secrets("store"), "store")
	store.WithIndex(metadatafake.NewSimpleMetadataClient(scheme))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = store.Start(ctx) }()
	if !cache.WaitForCacheSync(ctx.Done(), store.index.HasSynced) {
		t.Fatal("index did not sync")
	}
	d := &Driver{Store: store, Tenant: "t", Namespace: "ns", Log: t.Logf}
	rel := func(v int, s release.Status) *release.Release {
		return &release.Release{Name: "kv", Namespace: "ns", Version: v, Info: &release.Info{Status: s},
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "sample", Version: "0.1.0"}}}
	}
	key := func(v int) string { return fmt.Sprintf("%skv.v%d", HelmKeyPrefix, v) }
	for _, step := range []func() error{
		func() error { return d.Create(key(1), rel(1, release.StatusPendingInstall)) },
		func() error { return d.Update(key(1), rel(1, release.StatusDeployed)) },
		func() error { return d.Create(key(2), rel(2, release.StatusPendingUpgrade)) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	cs.ClearActions()

	cur, deployed, ok := d.latest("kv")
	if !ok || cur == nil || deployed == nil || cur.Version != 2 || cur.Info.Status != release.StatusPendingUpgrade || deployed.Version != 1 {
		t.Fatalf("latest: %v, %v, ok %v; want revision 2 pending-upgrade and revision 1 deployed", cur, deployed, ok)
	}
	if hist, err := d.Query(map[string]string{"name": "kv", "owner": "helm"}); err != nil || len(hist) != 2 {
		t.Fatalf("history: %d records, %v; want 2", len(hist), err)
	}
	if _, err := d.Delete(key(2)); err != nil {
		t.Fatal(err)
	}
	if hist, err := d.Query(map[string]string{"name": "kv", "owner": "helm"}); err != nil || len(hist) != 1 || hist[0].Version != 1 {
		t.Fatalf("history after deleting revision 2: %v, %v; want revision 1", hist, err)
	}
	other := &Driver{Store: store, Tenant: "u", Namespace: "ns", Log: t.Logf}
	if hist, err := other.Query(map[string]string{"name": "kv", "owner": "helm"}); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Errorf("another tenant's history: %v, %v; want none", hist, err)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "list" {
			t.Errorf("a read listed the records: %v", a)
		}
	}
	if store.Indexed("t", "ns") {
		t.Error("indexed reports the unshown writes as shown")
	}
}

// stampedClientset is a fake clientset that gives the Secrets it creates
// and updates a resourceVersion, as the API server always does (the fake
// keeps none).
func stampedClientset() *fake.Clientset {
	cs := fake.NewClientset()
	rv := 0
	stamp := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(interface{ GetObject() runtime.Object }); ok {
			rv++
			o.GetObject().(*corev1.Secret).ResourceVersion = strconv.Itoa(rv)
		}
		return false, nil, nil
	}
	cs.PrependReactor("create", "secrets", stamp)
	cs.PrependReactor("update", "secrets", stamp)
	return cs
}
