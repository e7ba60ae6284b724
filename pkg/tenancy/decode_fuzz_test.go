package tenancy

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
)

// gzipOf is b gzipped, for seeds.
func gzipOf(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// FuzzRecord: a release record's data, whatever its bytes, decodes or
// fails with an error naming the record, and never inflates past
// maxInflated.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(`{"name":"kv","version":1}`))
	f.Add(gzipOf([]byte(`{"name":"kv","version":1,"chart":{"metadata":{"name":"kv"}}}`)))
	f.Add(append(gzipOf([]byte(`{"name":"kv","chart":`)), gzipOf([]byte(`{"metadata":{"name":"kv","version":"1.0.0"}}}`))...))
	f.Add(gzipOf(bytes.Repeat([]byte{0}, 1<<16)))
	f.Add([]byte{0x1f, 0x8b, 0x08, 0})
	d := &records.Driver{}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if out, err := records.Gunzip(raw); err == nil && len(out) > records.MaxInflated {
			t.Fatalf("gunzip returned %d bytes, past maxInflated", len(out))
		}
		data := []byte(base64.StdEncoding.EncodeToString(raw))
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "opctl-system", Name: "sh.helm.release.v1.kv.v1"},
			Data: map[string][]byte{"release": data}}
		if _, err := records.DecodeRecord(data); err != nil {
			if _, err := d.Decode(sec); err == nil || !strings.Contains(err.Error(), "release record opctl-system/sh.helm.release.v1.kv.v1") {
				t.Fatalf("decoding an unreadable record: %v, want an error naming it", err)
			}
		}
		_, _ = records.DecodeRecordSummary(data) // must not panic
	})
}

// FuzzBundleDocs: a bundle's manifests, whatever their bytes, parse into
// at most maxBundleDocs objects or fail with an error naming the bundle.
func FuzzBundleDocs(f *testing.F) {
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", "{\"kind\":\"Role\"}")
	f.Add("a: 1\n---\nb: 2\n---\n", "")
	f.Add("a: &x [*x]\n", "- [[[[[[]]]]]]")
	f.Add(strings.Repeat("a: 1\n---\n", registryv1.MaxBundleDocs+1), "")
	f.Fuzz(func(t *testing.T, a, b string) {
		objs, err := registryv1.ReadDocs("fuzzed.v1", []string{a, b})
		if err != nil {
			if !strings.Contains(err.Error(), "bundle fuzzed.v1") {
				t.Fatalf("readDocs error %q does not name the bundle", err)
			}
			return
		}
		if len(objs) > registryv1.MaxBundleDocs {
			t.Fatalf("readDocs returned %d objects, past maxBundleDocs", len(objs))
		}
	})
}
