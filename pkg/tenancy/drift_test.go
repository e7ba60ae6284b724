package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Release objects changed or deleted by someone other than the controller
// (here a cluster admin, whom the guardrails let through) come back from
// the release manifest; the restores are counted and reported; the steady
// state after them makes no writes.
func TestDriftCorrection(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "drift-" + suffix()
	createTenant(t, newTenant(name, []string{name}, sampleChart(t, "", "0.1.0"), 1))
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	before := driftCount(t)

	const deploy, role, binding = operatorSA, "kv-sample-operator-manager", "kv-sample-operator-manager"
	if _, err := c.Client.AppsV1().Deployments(name).Patch(ctx, deploy, types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().Roles(name).Patch(ctx, role, types.JSONPatchType, []byte(`[{"op":"replace","path":"/rules","value":[]}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.RbacV1().RoleBindings(name).Delete(ctx, binding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.CoreV1().ServiceAccounts(name).Delete(ctx, operatorSA, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	testcluster.Eventually(t, time.Minute, "release objects restored", func(ctx context.Context) error {
		d, err := c.Client.AppsV1().Deployments(name).Get(ctx, deploy, metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
			return fmt.Errorf("Deployment %v: %v", d.Spec.Replicas, err)
		}
		r, err := c.Client.RbacV1().Roles(name).Get(ctx, role, metav1.GetOptions{})
		if err != nil || len(r.Rules) == 0 {
			return fmt.Errorf("Role rules %v: %v", rulesOf(r), err)
		}
		if _, err := c.Client.RbacV1().RoleBindings(name).Get(ctx, binding, metav1.GetOptions{}); err != nil {
			return err
		}
		_, err = c.Client.CoreV1().ServiceAccounts(name).Get(ctx, operatorSA, metav1.GetOptions{})
		return err
	})
	t.Logf("restored in %s", time.Since(start).Round(100*time.Millisecond))
	// Counted once each restore's write returned, which can follow the
	// object's reappearance by a moment.
	testcluster.Eventually(t, 10*time.Second, "4 drift corrections counted", func(context.Context) error {
		if got := driftCount(t) - before; got < 4 {
			return fmt.Errorf("%v drift corrections counted, want at least 4", got)
		}
		return nil
	})
	events, err := c.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=DriftCorrected"})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no DriftCorrected event: %v", err)
	}
	waitTenant(t, name, time.Minute, "Tenant Ready again", ready)
	t.Run("steady state makes no writes", func(t *testing.T) {
		checkNoSteadyStateWrites(t, c, []string{name})
	})
}

func rulesOf(r *rbacv1.Role) []rbacv1.PolicyRule {
	if r == nil {
		return nil
	}
	return r.Rules
}

// driftCount is the controller's drift corrections in this process.
func driftCount(t *testing.T) float64 {
	t.Helper()
	return counter(t, "opctl_tenancy_drift_corrections_total", "", "")
}

// driftChart holds a release object of each kind no informer follows, an
// HPA scaling its Deployment, and a ConfigMap key its operator manages.
const driftChart = `apiVersion: v2
name: drifting
version: 0.1.0
`

var driftTemplates = map[string]string{
	"templates/objects.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: strict
  ca.crt: placeholder
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 1
  serviceName: web
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: db
        image: busybox
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/managed-by: {{ .Release.Service }}
    app.kubernetes.io/instance: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: web
        image: busybox
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: spare
spec:
  replicas: 0
  selector:
    matchLabels: {app: spare}
  template:
    metadata:
      labels: {app: spare}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: spare
        image: busybox
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: {{ .Values.maxReplicas | default 5 }}
`,
}

// writeDriftChart writes driftChart and its templates, returning its path.
func writeDriftChart(t *testing.T) string {
	files := map[string]string{"Chart.yaml": driftChart}
	maps.Copy(files, driftTemplates)
	return writeChart(t, files)
}

// TestDriftEveryKind: drift correction covers every object of a release
// (issue "holds under abuse", item 5): a drifted StatefulSet, ConfigMap,
// Service and PDB come back within the drift interval, while what an
// ignore rule names (a ConfigMap key the operator manages) and the
// replicas an HPA of the release scales are left alone; the steady state
// after them makes no writes.
func TestDriftEveryKind(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{DriftInterval: 2 * time.Second})
	name := "drift-kinds-" + suffix()
	tn := newTenant(name, []string{name}, writeDriftChart(t), 1)
	tn.Spec.Operators[0].DriftIgnore = []tenancyv1.DriftIgnoreRule{{Paths: []string{"/data/ca.crt"}, Target: &tenancyv1.DriftTarget{Kind: "ConfigMap"}}}
	createTenant(t, tn)
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	before := driftCount(t)

	patch := func(what string, do func() error) {
		t.Helper()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	merge := func(s string) []byte { return []byte(s) }
	patch("ConfigMap", func() error {
		_, err := c.Client.CoreV1().ConfigMaps(name).Patch(ctx, "settings", types.MergePatchType, merge(`{"data":{"mode":"open","ca.crt":"issued by the operator"}}`), metav1.PatchOptions{})
		return err
	})
	patch("Service", func() error {
		_, err := c.Client.CoreV1().Services(name).Patch(ctx, "web", types.MergePatchType, merge(`{"spec":{"selector":{"app":"elsewhere"}}}`), metav1.PatchOptions{})
		return err
	})
	patch("PDB", func() error {
		return c.Client.PolicyV1().PodDisruptionBudgets(name).Delete(ctx, "web", metav1.DeleteOptions{})
	})
	patch("StatefulSet", func() error {
		_, err := c.Client.AppsV1().StatefulSets(name).Patch(ctx, "db", types.MergePatchType, merge(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
		return err
	})
	patch("Deployment the HPA scales", func() error {
		_, err := c.Client.AppsV1().Deployments(name).Patch(ctx, "web", types.MergePatchType, merge(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
		return err
	})
	testcluster.Eventually(t, time.Minute, "the release's objects restored", func(ctx context.Context) error {
		cm, err := c.Client.CoreV1().ConfigMaps(name).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil || cm.Data["mode"] != "strict" {
			return fmt.Errorf("ConfigMap data %v: %v", cm.Data, err)
		}
		svc, err := c.Client.CoreV1().Services(name).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || svc.Spec.Selector["app"] != "web" {
			return fmt.Errorf("Service selector %v: %v", svc.Spec.Selector, err)
		}
		if _, err := c.Client.PolicyV1().PodDisruptionBudgets(name).Get(ctx, "web", metav1.GetOptions{}); err != nil {
			return err
		}
		sts, err := c.Client.AppsV1().StatefulSets(name).Get(ctx, "db", metav1.GetOptions{})
		if err != nil || sts.Spec.Replicas == nil || *sts.Spec.Replicas != 1 {
			return fmt.Errorf("StatefulSet replicas: %v", err)
		}
		return nil
	})
	cm, err := c.Client.CoreV1().ConfigMaps(name).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || cm.Data["ca.crt"] != "issued by the operator" {
		t.Errorf("ConfigMap ca.crt %q (%v), want the operator's value: an ignore rule names it", cm.Data["ca.crt"], err)
	}
	d, err := c.Client.AppsV1().Deployments(name).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("the HPA-scaled Deployment's replicas %v (%v), want 3: the HPA's, left alone", d.Spec.Replicas, err)
	}
	testcluster.Eventually(t, 10*time.Second, "4 drift corrections counted", func(context.Context) error {
		if got := driftCount(t) - before; got < 4 {
			return fmt.Errorf("%v drift corrections counted, want at least 4", got)
		}
		return nil
	})
	waitTenant(t, name, time.Minute, "Tenant Ready again", ready)
	t.Run("steady state makes no writes", func(t *testing.T) {
		checkNoSteadyStateWrites(t, c, []string{name})
	})
}

// TestReleaseObjectsGuarded: the owner can change or delete none of its
// release's objects, of any kind the release holds (guardrail
// tenant-managed-objects), so drift correction is for the rest of the
// cluster's writers and the subresources no label rule sees.
func TestReleaseObjectsGuarded(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "guarded-" + suffix()
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{name}, writeDriftChart(t), 1, owner))
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	as := kubernetes.NewForConfigOrDie(c.As(owner))
	for what, del := range map[string]func() error{
		"PodDisruptionBudget web": func() error {
			return as.PolicyV1().PodDisruptionBudgets(name).Delete(ctx, "web", metav1.DeleteOptions{})
		},
		"HorizontalPodAutoscaler web": func() error {
			return as.AutoscalingV2().HorizontalPodAutoscalers(name).Delete(ctx, "web", metav1.DeleteOptions{})
		},
		"StatefulSet db":   func() error { return as.AppsV1().StatefulSets(name).Delete(ctx, "db", metav1.DeleteOptions{}) },
		"ReplicaSet spare": func() error { return as.AppsV1().ReplicaSets(name).Delete(ctx, "spare", metav1.DeleteOptions{}) },
		"ResourceClaimTemplate gpu": func() error {
			return as.ResourceV1().ResourceClaimTemplates(name).Delete(ctx, "gpu", metav1.DeleteOptions{})
		},
		"ConfigMap settings": func() error { return as.CoreV1().ConfigMaps(name).Delete(ctx, "settings", metav1.DeleteOptions{}) },
		"Service web":        func() error { return as.CoreV1().Services(name).Delete(ctx, "web", metav1.DeleteOptions{}) },
	} {
		if err := del(); err == nil || !strings.Contains(err.Error(), "managed by the opctl tenancy controller") {
			t.Errorf("the owner deleting its release's %s: %v, want the guardrail's refusal", what, err)
		}
	}
	// Every workload of the release is guarded from scaling too
	// (tenant-release-scale), while the release's own autoscaler, which
	// the tenant's actor applies, still upgrades.
	testcluster.Eventually(t, time.Minute, "the release's workloads listed", func(ctx context.Context) error {
		ns, err := c.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got, want := ns.Annotations[tenancy.AnnotationReleaseWorkloads], "deployments/web,replicasets/spare,statefulsets/db"; got != want {
			return fmt.Errorf("%s is %q, want %q", tenancy.AnnotationReleaseWorkloads, got, want)
		}
		return nil
	})
	scale, err := as.AppsV1().StatefulSets(name).GetScale(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 5
	if _, err := as.AppsV1().StatefulSets(name).UpdateScale(ctx, "db", scale, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "statefulsets/db is a workload of an operator release") {
		t.Errorf("the owner scaling its release's StatefulSet: %v, want tenant-release-scale's refusal", err)
	}
	testcluster.UpdateObject(t, cl, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(tn *tenancyv1.Tenant) {
		tn.Spec.Operators[0].Values = &apiextensionsv1.JSON{Raw: []byte(`{"maxReplicas": 6}`)}
	})
	waitTenant(t, name, 2*time.Minute, "upgraded to revision 2 and Ready", func(tn *tenancyv1.Tenant) error {
		if len(tn.Status.Operators) == 0 || tn.Status.Operators[0].Revision != 2 {
			return fmt.Errorf("operators %+v", tn.Status.Operators)
		}
		return ready(tn)
	})
	hpa, err := c.Client.AutoscalingV2().HorizontalPodAutoscalers(name).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || hpa.Spec.MaxReplicas != 6 {
		t.Errorf("the release's HPA after the upgrade: %v, maxReplicas %d, want 6", err, hpa.Spec.MaxReplicas)
	}
}
