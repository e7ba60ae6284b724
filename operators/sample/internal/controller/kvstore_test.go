package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

func TestInstallReady(t *testing.T) {
	_, k := runningStore(t, "kv-install", "cache", 3)
	ns := k.Namespace
	assertKstatus(t, k, "Current")
	if k.Status.Phase != lifecycle.Running {
		t.Errorf("phase %s, want Running", k.Status.Phase)
	}
	if want := "cache." + ns + ".svc:6379"; k.Status.Endpoint != want || k.Status.SecretName != "cache-auth" {
		t.Errorf("endpoint %q secret %q, want %q cache-auth", k.Status.Endpoint, k.Status.SecretName, want)
	}
	for _, o := range []struct {
		name string
		obj  client.Object
	}{
		{"cache", &corev1.ServiceAccount{}}, {"cache-config", &corev1.ConfigMap{}}, {"cache-auth", &corev1.Secret{}},
		{"cache-headless", &corev1.Service{}}, {"cache", &corev1.Service{}}, {"cache", &policyv1.PodDisruptionBudget{}},
	} {
		get(t, ns, o.name, o.obj)
		if refs := o.obj.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "KVStore" || !ptr.Deref(refs[0].Controller, false) {
			t.Errorf("%T %s owner references %v, want the KVStore as controller", o.obj, o.name, refs)
		}
	}
	secret := &corev1.Secret{}
	get(t, ns, "cache-auth", secret)
	if len(secret.Data["password"]) < 24 {
		t.Errorf("password too short: %d bytes", len(secret.Data["password"]))
	}
	s := statefulSet(t, k)
	pod := s.Spec.Template.Spec
	sc := pod.Containers[0].SecurityContext
	if !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(pod.SecurityContext.RunAsNonRoot, false) {
		t.Errorf("container securityContext not restricted: %+v", sc)
	}
	if pod.Containers[0].ReadinessProbe == nil || pod.Containers[0].LivenessProbe == nil || pod.Affinity.PodAntiAffinity == nil {
		t.Errorf("probes or anti-affinity missing")
	}
	if img := pod.Containers[0].Image; img != "valkey/valkey:"+kvv1.DefaultVersion {
		t.Errorf("image %s", img)
	}
}

func TestSteadyStateMakesNoWrites(t *testing.T) {
	c, k := runningStore(t, "kv-steady", "steady", 2)
	ns := k.Namespace
	time.Sleep(2 * time.Second) // let the install's watch events settle
	const n = 50
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "steady"}}
	w := c.WritesDuring(t, agent, ns, func() {
		for range n {
			if _, err := reconciler.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Logf("steady state: %d reconciles of an unchanged KVStore made %d write requests (API server audit log)", n, len(w))
	if len(w) != 0 {
		t.Errorf("steady-state writes: %s", testcluster.Describe(w))
	}
}

func TestConfigChangeTouchesOnlyWhatItAffects(t *testing.T) {
	c, k := runningStore(t, "kv-config", "cfg", 2)
	ns := k.Namespace
	secret := &corev1.Secret{}
	get(t, ns, "cfg-auth", secret)
	before := statefulSet(t, k).Spec.Template.Annotations["kv.opctl.dev/config-sha256"]
	time.Sleep(time.Second)
	writes := c.WritesDuring(t, agent, ns, func() {
		testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Config["maxmemory"] = "128mb" })
		waitKV(t, k, "KVStore Ready after config change", func(k *kvv1.KVStore) error {
			if statefulSet(t, k).Spec.Template.Annotations["kv.opctl.dev/config-sha256"] == before {
				return fmt.Errorf("pod template still carries the old config checksum")
			}
			return readyWith(2, kvv1.DefaultVersion)(k)
		})
	})
	cm := &corev1.ConfigMap{}
	get(t, ns, "cfg-config", cm)
	if !strings.Contains(cm.Data["valkey.conf"], "maxmemory 128mb") {
		t.Errorf("config not rendered:\n%s", cm.Data["valkey.conf"])
	}
	after := &corev1.Secret{}
	get(t, ns, "cfg-auth", after)
	if string(after.Data["password"]) != string(secret.Data["password"]) {
		t.Errorf("the password changed")
	}
	for _, w := range writes {
		switch {
		case w.ObjectRef.Resource == "configmaps", w.ObjectRef.Resource == "statefulsets", w.ObjectRef.Resource == "kvstores", w.ObjectRef.Resource == "events":
		case w.ObjectRef.Resource == "pods" && w.Verb == "patch": // the restarted pods get their role label
		default:
			t.Errorf("a config change wrote an unaffected object: %s", testcluster.Describe([]testcluster.AuditEvent{w}))
		}
	}
}

func TestScaling(t *testing.T) {
	_, k := runningStore(t, "kv-scale", "scale", 1)
	testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Replicas = ptr.To[int32](3) })
	waitKV(t, k, "scaled to 3", readyWith(3, kvv1.DefaultVersion))
	assertKstatus(t, k, "Current")
	testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Replicas = ptr.To[int32](2) })
	waitKV(t, k, "scaled to 2", readyWith(2, kvv1.DefaultVersion))
	if n := len(podImages(t, k)); n > 3 {
		t.Errorf("%d pods after scaling down", n)
	}
}

func TestUpgradeSucceeds(t *testing.T) {
	_, k := runningStore(t, "kv-upgrade", "up", 3)
	testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Version = "8.1.4" })
	waitKV(t, k, "upgraded to 8.1.4", readyWith(3, "8.1.4"))
	assertKstatus(t, k, "Current")
	for pod, img := range podImages(t, k) {
		if img != "valkey/valkey:8.1.4 Ready" {
			t.Errorf("pod %s runs %s after the upgrade", pod, img)
		}
	}
	if k.Status.TargetVersion != "" || k.Status.FailedVersion != "" || k.Status.UpgradeStartTime != nil {
		t.Errorf("upgrade bookkeeping left behind: %+v", k.Status)
	}
}

func TestUpgradeRollsBack(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	const broken = "8.1.99"
	remove, err := c.AddStage(ctx, testcluster.NeverReadyStage("kv-never-ready-8-1-99", "valkey/valkey:"+broken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove(context.Background()) })
	ns := c.Namespace(t, "kv-rollback", restricted)
	k := newKVStore(ns, "rb", 3)
	k.Spec.Upgrade.ProgressDeadlineSeconds = 5
	create(t, k)
	waitKV(t, k, "KVStore Ready", readyWith(3, kvv1.DefaultVersion))
	testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Version = broken })
	waitKV(t, k, "upgrade in progress", conditionIs("Progressing", metav1.ConditionTrue, "Upgrading"))
	assertKstatus(t, k, "InProgress")
	waitKV(t, k, "rolled back", func(k *kvv1.KVStore) error {
		if err := conditionIs("Degraded", metav1.ConditionTrue, "UpgradeFailed")(k); err != nil {
			return err
		}
		return conditionIs("Stalled", metav1.ConditionTrue, "UpgradeFailed")(k)
	})
	if k.Status.CurrentVersion != kvv1.DefaultVersion || k.Status.FailedVersion != broken {
		t.Errorf("currentVersion %q failedVersion %q, want %s and %s", k.Status.CurrentVersion, k.Status.FailedVersion, kvv1.DefaultVersion, broken)
	}
	if err := conditionIs("Ready", metav1.ConditionFalse, "UpgradeFailed")(k); err != nil {
		t.Error(err)
	}
	assertKstatus(t, k, "Failed")
	if k.Status.Phase != lifecycle.Running {
		t.Errorf("phase %s after a rollback, want Running (serving the old version)", k.Status.Phase)
	}
	images := podImages(t, k)
	if len(images) != 3 {
		t.Errorf("pods %v, want 3", images)
	}
	for pod, img := range images {
		if img != "valkey/valkey:"+kvv1.DefaultVersion+" Ready" {
			t.Errorf("pod %s runs %s after the rollback", pod, img)
		}
	}
	// A good version after the failure upgrades and clears it.
	testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Version = "8.1.4" })
	waitKV(t, k, "upgraded after a failure", readyWith(3, "8.1.4"))
	if k.Status.FailedVersion != "" {
		t.Errorf("failedVersion %q kept after a successful upgrade", k.Status.FailedVersion)
	}
	assertKstatus(t, k, "Current")
}

func TestUnsupportedVersionTouchesNothing(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "kv-unsupported", restricted)
	fresh := newKVStore(ns, "old", 1)
	fresh.Spec.Version = "6.2.0"
	create(t, fresh)
	waitKV(t, fresh, "refused", conditionIs("Stalled", metav1.ConditionTrue, "UnsupportedVersion"))
	if msg := testcluster.HasCondition(fresh.Status.Conditions, "Degraded", metav1.ConditionTrue, "UnsupportedVersion"); msg != nil {
		t.Error(msg)
	}
	assertKstatus(t, fresh, "Failed")
	if fresh.Status.Phase != lifecycle.Failed {
		t.Errorf("phase %q for a KVStore that never started, want Failed", fresh.Status.Phase)
	}
	s := &appsv1.StatefulSetList{}
	if err := kube.List(context.Background(), s, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 0 {
		t.Errorf("an unsupported version created a StatefulSet")
	}

	running := newKVStore(ns, "running", 1)
	create(t, running)
	waitKV(t, running, "KVStore Ready", readyWith(1, kvv1.DefaultVersion))
	rv := statefulSet(t, running).ResourceVersion
	testcluster.UpdateObject(t, kube, running, func(k *kvv1.KVStore) { k.Spec.Version = "9.1.0" })
	waitKV(t, running, "refused", conditionIs("Stalled", metav1.ConditionTrue, "UnsupportedVersion"))
	if d := testcluster.HasCondition(running.Status.Conditions, "Degraded", metav1.ConditionTrue, ""); d != nil {
		t.Error(d)
	}
	if got := statefulSet(t, running).ResourceVersion; got != rv {
		t.Errorf("the StatefulSet was written after an unsupported version was requested")
	}
	if running.Status.CurrentVersion != kvv1.DefaultVersion || running.Status.Phase != lifecycle.Running {
		t.Errorf("currentVersion %q phase %q, want %s still Running", running.Status.CurrentVersion, running.Status.Phase, kvv1.DefaultVersion)
	}
}

func TestDriftIsCorrected(t *testing.T) {
	_, k := runningStore(t, "kv-drift", "drift", 2)
	s := statefulSet(t, k)
	testcluster.UpdateObject(t, kube, s, func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](5) })
	testcluster.WaitObject(t, kube, s, wait, "replicas restored", func(s *appsv1.StatefulSet) error {
		if *s.Spec.Replicas != 2 {
			return fmt.Errorf("replicas %d", *s.Spec.Replicas)
		}
		return nil
	})
	waitKV(t, k, "KVStore Ready", readyWith(2, kvv1.DefaultVersion))
}
