package records

import (
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestGzippedRelease: a record written in two gzip members reads back
// whole, through our decoder and through Helm's own Secret driver, and
// the same release gives the same bytes.
func TestGzippedRelease(t *testing.T) {
	ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "op", Version: "1.2.3"},
		Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte("kind: ConfigMap\n")}},
		Values:    map[string]any{"replicas": float64(1)}}
	for _, tc := range []struct {
		name string
		rel  *release.Release
	}{
		{"release", &release.Release{Name: "op", Namespace: "ns", Version: 3, Chart: ch, Manifest: "---\nkind: ConfigMap\n",
			Config: map[string]any{"a": "b"}, Info: &release.Info{Status: release.StatusDeployed, Description: "Install complete"}}},
		{"no chart", &release.Release{Name: "op", Namespace: "ns", Version: 1, Info: &release.Info{Status: release.StatusPendingInstall}}},
		{"a chart only", &release.Release{Chart: ch}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := EncodeRecord(tc.rel)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := EncodeRecord(tc.rel)
			if string(again) != string(data) {
				t.Error("the same release encoded twice differs")
			}
			got, err := DecodeRecord(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.rel) {
				t.Errorf("decoded %+v, want %+v", got, tc.rel)
			}
			if tc.rel.Chart != nil {
				sum, err := DecodeRecordSummary(data)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(sum.Chart.Metadata, ch.Metadata) || sum.Chart.Templates != nil {
					t.Errorf("summary chart %+v, want the metadata only", sum.Chart)
				}
			}
			// Helm's Secret driver reads what we write.
			if tc.rel.Name == "" {
				return
			}
			cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.op.v1", Namespace: "ns",
				Labels: map[string]string{"owner": "helm", "name": "op"}}, Type: "helm.sh/release.v1", Data: map[string][]byte{"release": data}})
			helmRel, err := driver.NewSecrets(cs.CoreV1().Secrets("ns")).Get("sh.helm.release.v1.op.v1")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(helmRel.Chart, tc.rel.Chart) || helmRel.Manifest != tc.rel.Manifest {
				t.Errorf("Helm's driver read chart %+v, manifest %q", helmRel.Chart, helmRel.Manifest)
			}
		})
	}
}

// TestChartMember: a chart's member is made once and inflates to the
// chart's JSON and the record's closing brace; the cache keeps at most
// its max.
func TestChartMember(t *testing.T) {
	a1, _ := chartMember([]byte(`{"a":1}`), recordCompression)
	a2, _ := chartMember([]byte(`{"a":1}`), recordCompression)
	if &a1[0] != &a2[0] {
		t.Error("the same chart was compressed twice")
	}
	if b, err := Gunzip(a1); err != nil || string(b) != `{"a":1}}` {
		t.Errorf("member inflates to %q, %v", b, err)
	}
	f := NewFIFO[int, int](2)
	made := 0
	for _, k := range []int{1, 2, 1, 3, 1} {
		_, _ = f.Get(k, func() (int, error) { made++; return k, nil })
	}
	if len(f.byKey) != 2 || len(f.order) != 2 || made != 4 {
		t.Errorf("fifo holds %d (%d in order) after making %d, want 2, 2, 4", len(f.byKey), len(f.order), made)
	}
}
