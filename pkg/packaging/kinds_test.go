package packaging

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
)

const workloadsDir = "testdata/workloads"

// Every workload is carried per release: images from relatedImages,
// selectors narrowed to the release, references renamed; the bundle
// carries the Deployments and says what it leaves out.
func TestWorkloads(t *testing.T) {
	out, res := packageTo(t, workloadsDir, PackageOptions{})
	rendered := render(t, filepath.Join(out, "charts", "fleet-operator"), "ns", map[string]any{"relatedImages": map[string]any{"statefulset-fleet-cache-redis": "mirror.example.com/redis:7.2"}})
	got := strings.Join(kinds(t, rendered), "\n")
	for _, want := range []string{"CronJob kv-fleet-operator-cleanup ns", "DaemonSet kv-fleet-operator-node-agent ns", "Deployment kv-fleet-operator-dashboard ns",
		"Fleet kv-fleet-operator-ns-default", "HorizontalPodAutoscaler kv-fleet-operator-dashboard ns", "Ingress kv-fleet-operator-dashboard ns",
		"Job kv-fleet-operator-migrate ns", "PodDisruptionBudget kv-fleet-operator-controller-manager ns", "PriorityClass kv-fleet-operator-ns-fleet-critical",
		"StatefulSet kv-fleet-operator-cache ns"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered:\n%s\nwant %s", got, want)
		}
	}
	var sts appsv1.StatefulSet
	renderedObject(t, rendered, "StatefulSet", "cache", &sts)
	if img := sts.Spec.Template.Spec.Containers[0].Image; img != "mirror.example.com/redis:7.2" {
		t.Errorf("StatefulSet image %s, want the relatedImages value", img)
	}
	if sts.Spec.ServiceName != "kv-fleet-operator-cache" || sts.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != "kv" || sts.Spec.Template.Labels["app.kubernetes.io/instance"] != "kv" {
		t.Errorf("StatefulSet not per release: serviceName %s selector %v", sts.Spec.ServiceName, sts.Spec.Selector.MatchLabels)
	}
	var cron batchv1.CronJob
	renderedObject(t, rendered, "CronJob", "cleanup", &cron)
	if img := cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image; img != "example.com/fleet/manager:1.0.0" {
		t.Errorf("CronJob image %s", img)
	}
	var mgr appsv1.Deployment
	renderedObject(t, rendered, "Deployment", "controller-manager", &mgr)
	if pc := mgr.Spec.Template.Spec.PriorityClassName; pc != "kv-fleet-operator-ns-fleet-critical" {
		t.Errorf("manager priorityClassName %q, want the chart's PriorityClass", pc)
	}
	for _, w := range []string{"Fleet fleet-default: cluster-scoped kind Fleet is carried", "StatefulSet fleet-cache: OLM cannot install kind StatefulSet"} {
		if !slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("warnings %q lack %q", res.Warnings, w)
		}
	}
	bundle := filepath.Join(out, "bundle", "fleet-operator")
	for _, e := range validateBundle(t, bundle) {
		t.Error(e)
	}
	csv := readCSV(t, bundle, "fleet-operator")
	var names, sas []string
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		names = append(names, d.Name)
	}
	for _, p := range csv.Spec.InstallStrategy.StrategySpec.Permissions {
		sas = append(sas, p.ServiceAccountName)
	}
	if strings.Join(names, ",") != "fleet-controller-manager,fleet-dashboard" || !slices.Contains(sas, "fleet-dashboard") {
		t.Errorf("CSV deployments %v, permissions for %v", names, sas)
	}
}
