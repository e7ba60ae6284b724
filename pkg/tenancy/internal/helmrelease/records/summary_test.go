package records

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

// TestRecordSummary: a summary is the release with its chart's metadata
// only, whichever way the record was written (ours in two gzip members,
// Helm's in one, an old Helm's uncompressed), and its metadata is the
// caller's own to change.
func TestRecordSummary(t *testing.T) {
	ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "op", Version: "1.2.3", Keywords: []string{"kv"}},
		Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte("kind: ConfigMap\n")}},
		Values:    map[string]any{"replicas": float64(1)}}
	withChart := &release.Release{Name: "op", Namespace: "ns", Version: 3, Chart: ch, Manifest: "---\nkind: ConfigMap\n",
		Config: map[string]any{"a": "b"}, Info: &release.Info{Status: release.StatusDeployed, Description: "Install complete"}}
	noChart := &release.Release{Name: "op", Namespace: "ns", Version: 1, Info: &release.Info{Status: release.StatusPendingInstall}}
	helms := func(rel *release.Release, compress bool) []byte {
		b, err := json.Marshal(rel)
		if err != nil {
			t.Fatal(err)
		}
		if compress {
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			_, _ = w.Write(b)
			_ = w.Close()
			b = buf.Bytes()
		}
		return []byte(base64.StdEncoding.EncodeToString(b))
	}
	ours := func(rel *release.Release) []byte {
		b, err := EncodeRecord(rel)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		rel  *release.Release
		data []byte
	}{
		{"ours", withChart, ours(withChart)},
		{"ours, no chart", noChart, ours(noChart)},
		{"Helm's", withChart, helms(withChart, true)},
		{"an old Helm's, uncompressed", withChart, helms(withChart, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := *tc.rel
			if want.Chart != nil {
				md := *want.Chart.Metadata
				want.Chart = &chart.Chart{Metadata: &md}
			}
			for range 2 { // the second read of ours comes from chartMetadatas
				got, err := DecodeRecordSummary(tc.data)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, &want) {
					t.Fatalf("summary %+v (chart %+v), want %+v (chart %+v)", got, got.Chart, &want, want.Chart)
				}
				if got.Chart != nil {
					got.Chart.Metadata.Version = "changed by the caller"
				}
			}
		})
	}
	// A record in our two members whose chart member goes on after the
	// chart (not ours: a hand-made one) says what it says read whole.
	gz := func(s string) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write([]byte(s))
		_ = w.Close()
		return buf.Bytes()
	}
	crafted := append(gz(`{"name":"x","version":1,"chart":`), gz(`{"metadata":{"name":"c","version":"1.0.0"}},"name":"y"}`)...)
	data := []byte(base64.StdEncoding.EncodeToString(crafted))
	whole, err := DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeRecordSummary(data); err != nil || got.Name != whole.Name || got.Chart.Metadata.Version != "1.0.0" {
		t.Errorf("summary of a record with fields after its chart: %+v, %v; read whole it is named %q", got, err, whole.Name)
	}
	if _, err := DecodeRecordSummary([]byte(base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 0x08, 0}))); err == nil {
		t.Error("a truncated gzip record read without an error")
	}
}
