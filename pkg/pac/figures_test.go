package pac

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// What the writer writes, the reader reads back, in the same units.
func TestRoundTrip(t *testing.T) {
	storage := resource.MustParse("2Gi")
	cases := []Figures{
		{Replicas: 1, Requests: corev1.ResourceList{"cpu": resource.MustParse("100m")}, Limits: corev1.ResourceList{}},
		{Usage: "make one", Replicas: 3,
			Requests: corev1.ResourceList{"cpu": resource.MustParse("250m"), "memory": resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("256Mi")},
			Storage:  &storage, PVCsPerReplica: 2, PDBMaxUnavailable: "1", SecurityContext: `{"runAsNonRoot":true}`, ServiceAccount: "kv"},
	}
	for _, want := range cases {
		cm := ConfigMapName("things.example.com")
		ann := want.Annotations(cm, "StatefulSet, Service")
		if ann[Prefix+Composition] != "StatefulSet, Service" || ann[Prefix+CPURequests] != cm {
			t.Errorf("annotations %v", ann)
		}
		got, ok, err := Read("things.example.com", ann, map[string]map[string]string{cm: want.Data()})
		if err != nil || !ok {
			t.Fatalf("Read: %v, %v", ok, err)
		}
		if got.Replicas != want.Replicas || got.Usage != want.Usage || got.PVCsPerReplica != want.PVCsPerReplica ||
			got.ServiceAccount != want.ServiceAccount || got.SecurityContext != want.SecurityContext || got.PDBMaxUnavailable != want.PDBMaxUnavailable {
			t.Errorf("read %+v, wrote %+v", got, want)
		}
		if diff := quantityDiff(want, got); diff != "" {
			t.Error(diff)
		}
		if (want.Storage == nil) != (got.Storage == nil) || (want.Storage != nil && want.Storage.Cmp(*got.Storage) != 0) {
			t.Errorf("storage: read %v, wrote %v", got.Storage, want.Storage)
		}
	}
}

func TestReadErrors(t *testing.T) {
	ann := map[string]string{Prefix + CPURequests: "cm"}
	cases := []struct {
		name string
		cms  map[string]map[string]string
		want string
	}{
		{"missing ConfigMap", nil, "names ConfigMap cm, which is not shipped"},
		{"bad quantity", map[string]map[string]string{"cm": {CPURequests: "lots"}}, "cpu-requests \"lots\": not a quantity"},
		{"bad replicas", map[string]map[string]string{"cm": {CPURequests: "1", Replicas: "-2"}}, "replicas \"-2\" is not a count"},
		{"bad storage", map[string]map[string]string{"cm": {CPURequests: "1", StorageRequests: "big"}}, "storage-requests \"big\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Read("things.example.com", ann, tc.cms)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "things.example.com") {
				t.Errorf("error %v, want one naming the CRD and %q", err, tc.want)
			}
		})
	}
	if _, ok, err := Read("x", nil, nil); ok || err != nil {
		t.Errorf("a CRD without annotations: %v, %v", ok, err)
	}
}

// Figures whose text would take apimachinery minutes to parse are refused
// at once.
func TestReadBoundsExponents(t *testing.T) {
	cm := ConfigMapName("things.example.com")
	for _, v := range []string{"1e-99999999", "1e99999999", "1E+400", "1e-0000001", strings.Repeat("1", 65)} {
		_, _, err := Read("things.example.com", map[string]string{Prefix + CPURequests: cm}, map[string]map[string]string{cm: {CPURequests: v}})
		if err == nil || !strings.Contains(err.Error(), "not a plain quantity") {
			t.Errorf("%.20s: %v", v, err)
		}
	}
	for _, v := range []string{"1000E", "2000E"} { // written back as "1" and "2"
		_, _, err := Read("things.example.com", map[string]string{Prefix + CPURequests: cm}, map[string]map[string]string{cm: {CPURequests: v}})
		if err == nil || !strings.Contains(err.Error(), "canonical form") {
			t.Errorf("%s: %v", v, err)
		}
	}
	if _, ok, err := Read("things.example.com", map[string]string{Prefix + CPURequests: cm}, map[string]map[string]string{cm: {CPURequests: "1e3"}}); err != nil || !ok {
		t.Errorf("1e3: %v %v", ok, err)
	}
}

// quantityDiff says which request or limit of wrote read back different.
func quantityDiff(wrote, read Figures) string {
	for _, side := range []struct {
		what        string
		wrote, read corev1.ResourceList
	}{{"requests", wrote.Requests, read.Requests}, {"limits", wrote.Limits, read.Limits}} {
		for name, q := range side.wrote {
			if r := side.read[name]; r.Cmp(q) != 0 {
				return fmt.Sprintf("%s %s: wrote %s, read %s", side.what, name, q.String(), r.String())
			}
		}
	}
	return ""
}
