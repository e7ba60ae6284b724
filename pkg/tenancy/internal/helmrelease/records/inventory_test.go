package records

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/tools/cache"
)

// Releases lists every release of a tenant wherever it is recorded, and
// only that tenant's, both from a LIST (no index) and from an index that
// does not show this process's writes yet (here, one that never will):
// a release deleted by this process is gone from the answer at once.
func TestReleasesInventory(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("indexed=%v", indexed), func(t *testing.T) {
			cs := stampedClientset()
			store := NewStore(cs.CoreV1().Secrets("store"), "store")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if indexed {
				scheme := runtime.NewScheme()
				if err := metav1.AddMetaToScheme(scheme); err != nil {
					t.Fatal(err)
				}
				store.WithIndex(metadatafake.NewSimpleMetadataClient(scheme))
				go func() { _ = store.Start(ctx) }()
				if !cache.WaitForCacheSync(ctx.Done(), store.index.HasSynced) {
					t.Fatal("index did not sync")
				}
			}
			write := func(tenant, ns, name string, v int) {
				t.Helper()
				d := &Driver{Store: store, Tenant: tenant, Namespace: ns, Log: t.Logf}
				rel := &release.Release{Name: name, Namespace: ns, Version: v, Info: &release.Info{Status: release.StatusDeployed},
					Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "0.1.0"}}}
				if err := d.Create(fmt.Sprintf("%s%s.v%d", HelmKeyPrefix, name, v), rel); err != nil {
					t.Fatal(err)
				}
			}
			write("t", "b", "kv", 1)
			write("t", "b", "kv", 2)
			write("t", "a", "kv", 1)
			write("t", "a", "dropped", 1)
			write("t", "gone", "op", 1)
			write("u", "a", "other", 1)
			d := &Driver{Store: store, Tenant: "t", Namespace: "gone", Log: t.Logf}
			if _, err := d.Delete(HelmKeyPrefix + "op.v1"); err != nil {
				t.Fatal(err)
			}
			got, err := store.Releases(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			want := []Recorded{{"a", "dropped"}, {"a", "kv"}, {"b", "kv"}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Releases(t) = %v, want %v", got, want)
			}
			if got, _ := store.Releases(ctx, "nobody"); len(got) != 0 {
				t.Errorf("Releases(nobody) = %v, want none", got)
			}
		})
	}
}
