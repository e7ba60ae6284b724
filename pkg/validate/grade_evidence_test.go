package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const crdSpec = "          spec:\n            description: Spec is the desired state.\n            properties:\n"

// namesOnly is the Level 2 sample bundle with the words of Levels 3 to 5 and none
// of the things: a spec.backup field, an autoscaling string, and a CSV
// that lists ServiceMonitors and PrometheusRules it does not ship.
func namesOnly(t *testing.T) string {
	dir := copyDir(t, level2Bundle)
	m := filepath.Join(dir, "manifests")
	editFile(t, filepath.Join(m, "kv.opctl.dev_kvstores.yaml"), crdSpec, crdSpec+
		"              backup:\n                description: Backup schedule.\n                type: string\n"+
		"              autoscaling:\n                description: Autoscaling, on or off.\n                type: string\n")
	editFile(t, filepath.Join(m, "sample-operator.clusterserviceversion.yaml"), "      - kind: PodDisruptionBudget\n",
		"      - kind: ServiceMonitor\n        name: \"\"\n        version: v1\n      - kind: PrometheusRule\n        name: \"\"\n        version: v1\n      - kind: PodDisruptionBudget\n")
	return dir
}

// withEvidence is the Level 2 sample bundle with what Levels 3 to 5 need: a
// Backup CRD, a restore field, a ServiceMonitor, a PrometheusRule on the
// operand's metrics, the scale subresource and a tuning field.
func withEvidence(t *testing.T) string {
	dir := copyDir(t, level2Bundle)
	m := filepath.Join(dir, "manifests")
	crd := filepath.Join(m, "kv.opctl.dev_kvstores.yaml")
	b, err := os.ReadFile(crd)
	if err != nil {
		t.Fatal(err)
	}
	backup := strings.NewReplacer("kvstores", "kvbackups", "KVStore", "KVBackup", "kvstore", "kvbackup").Replace(string(b))
	write(t, filepath.Join(m, "kv.opctl.dev_kvbackups.yaml"), backup)
	editFile(t, crd, crdSpec, crdSpec+
		"              restoreFrom:\n                description: KVBackup to restore from.\n                type: string\n"+
		"              tuning:\n                description: Tuning of the store.\n                properties:\n                  maxmemoryPercent:\n                    description: Share of the memory limit.\n                    type: integer\n                type: object\n")
	editFile(t, crd, "    subresources:\n      status: {}", "    subresources:\n      scale:\n        specReplicasPath: .spec.replicas\n        statusReplicasPath: .status.readyReplicas\n      status: {}")
	write(t, filepath.Join(m, "kvstore-operand_monitoring.coreos.com_v1_servicemonitor.yaml"), `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: kvstore-operand
spec:
  endpoints:
  - port: exporter
  selector:
    matchLabels:
      app.kubernetes.io/name: kvstore
`)
	write(t, filepath.Join(m, "kvstore-alerts_monitoring.coreos.com_v1_prometheusrule.yaml"), `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: kvstore-alerts
spec:
  groups:
  - name: kvstore
    rules:
    - alert: KVStoreOperatorErrors
      expr: rate(controller_runtime_reconcile_errors_total{controller="kvstore"}[5m]) > 0
    - alert: KVStoreMemoryNearLimit
      expr: max by (namespace, service_name) (redis_memory_used_bytes / redis_memory_max_bytes) > 0.9
`)
	return dir
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The grade needs evidence of behaviour where a bundle can show it: the
// names alone do not reach Level 3, the things reach Level 5.
func TestGradeNeedsEvidence(t *testing.T) {
	tests := []struct {
		name  string
		dir   string
		level int
		met   []string
		miss  []string
	}{
		{"names only", namesOnly(t), 2, nil,
			[]string{"L3-backup", "L3-restore", "L4-metrics", "L4-alerts", "L4-operand-metrics", "L5-autoscaling", "L5-tuning"}},
		{"with evidence", withEvidence(t), 5,
			[]string{"L3-backup", "L3-restore", "L4-metrics", "L4-alerts", "L4-operand-metrics", "L5-autoscaling", "L5-tuning"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ValidateBundle(tt.dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Grade.Level != tt.level {
				t.Errorf("level %d, want %d: %+v", r.Grade.Level, tt.level, r.Grade.Criteria)
			}
			for _, id := range tt.met {
				if c := criterion(r.Grade, id); c.Status != Met || len(c.Evidence) == 0 {
					t.Errorf("%s = %s (%v), want met with evidence", id, c.Status, c.Evidence)
				}
			}
			for _, id := range tt.miss {
				if c := criterion(r.Grade, id); c.Status != Missing {
					t.Errorf("%s = %s (%v), want missing", id, c.Status, c.Evidence)
				}
			}
		})
	}
	r, err := ValidateBundle(withEvidence(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := criterion(r.Grade, "L4-operand-metrics").Evidence[0]; !strings.Contains(e, "KVStoreMemoryNearLimit uses redis_memory_used_bytes") {
		t.Errorf("operand metrics evidence %q", e)
	}
}

func TestOperandMetric(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`rate(controller_runtime_reconcile_errors_total[5m]) > 0`, ""},
		{`sum by (namespace_name) (workqueue_depth{name="kv_store"}) > 10`, ""},
		{`absent_over_time(redis_up{job="kv"}[5m])`, "redis_up"},
		{`histogram_quantile(0.99, sum by (le) (rate(kv_request_duration_seconds_bucket[5m])))`, "kv_request_duration_seconds_bucket"},
		{`up == 0`, ""},
	}
	for _, tt := range tests {
		if got := operandMetric(tt.expr); got != tt.want {
			t.Errorf("operandMetric(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}
