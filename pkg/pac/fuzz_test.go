package pac

import (
	"strings"
	"testing"
)

// FuzzRead feeds arbitrary figures, annotated or not, to the reader. An
// error names the CRD; figures it accepts are never negative, and what the
// writer writes from them reads back the same.
func FuzzRead(f *testing.F) {
	f.Add("100m", "128Mi", "1", "256Mi", "3", "2Gi", "2", uint16(0x1ff))
	f.Add("-1", "1e400", "", "0.5", "-3", "1Pi", "x", uint16(0xffff))
	f.Add("1", "", "", "", "99999999999", "-2Gi", "0", uint16(1))
	const crd = "things.example.com"
	f.Fuzz(func(t *testing.T, cpu, mem, cpuLimit, memLimit, replicas, storage, pvcs string, mask uint16) {
		cm := ConfigMapName(crd)
		data := map[string]string{}
		ann := map[string]string{}
		for i, kv := range [][2]string{{CPURequests, cpu}, {MemRequests, mem}, {CPULimits, cpuLimit}, {MemLimits, memLimit},
			{Replicas, replicas}, {StorageRequests, storage}, {PVCsPerReplica, pvcs}} {
			if mask&(1<<i) == 0 {
				continue
			}
			data[kv[0]] = kv[1]
			ann[Prefix+kv[0]] = cm
		}
		if mask&(1<<8) != 0 { // an annotation naming a ConfigMap that is not shipped
			ann[Prefix+Usage] = "missing"
		}
		got, ok, err := Read(crd, ann, map[string]map[string]string{cm: data})
		if err != nil {
			if !strings.Contains(err.Error(), crd) {
				t.Fatalf("error does not name the CRD: %v", err)
			}
			return
		}
		if !ok {
			return
		}
		for name, q := range got.Requests {
			if q.Sign() < 0 {
				t.Fatalf("accepted negative request %s=%s", name, q.String())
			}
		}
		for name, q := range got.Limits {
			if q.Sign() < 0 {
				t.Fatalf("accepted negative limit %s=%s", name, q.String())
			}
		}
		if got.Replicas < 0 || got.PVCsPerReplica < 0 || (got.Storage != nil && got.Storage.Sign() < 0) {
			t.Fatalf("accepted negative figures: %+v", got)
		}
		back, ok, err := Read(crd, got.Annotations(cm, ""), map[string]map[string]string{cm: got.Data()})
		if err != nil || !ok {
			t.Fatalf("written figures do not read back: %v, %v (data %v)", ok, err, got.Data())
		}
		if back.Replicas != max(got.Replicas, 1) || back.PVCsPerReplica != got.PVCsPerReplica ||
			(back.Storage == nil) != (got.Storage == nil) || (got.Storage != nil && back.Storage.Cmp(*got.Storage) != 0) {
			t.Fatalf("round trip changed figures: wrote %+v, read %+v", got, back)
		}
		if diff := quantityDiff(got, back); diff != "" {
			t.Fatalf("round trip: %s", diff)
		}
	})
}
