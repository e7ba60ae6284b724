package operatorkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

func TestInstallReadyAndZeroWritesAtSteadyState(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "kit-steady", nil)
	createWidget(t, ns, "w", nil)
	w := waitWidget(t, ns, "w", "Widget Ready", readyAndObserved)
	if w.Status.Phase != lifecycle.Running || w.Status.ReadyReplicas != 2 {
		t.Errorf("phase %q readyReplicas %d, want Running and 2", w.Status.Phase, w.Status.ReadyReplicas)
	}
	assertKstatus(t, w, "Current")
	if condition(w, operatorkit.ConditionReconciling) != nil || condition(w, operatorkit.ConditionStalled) != nil {
		t.Errorf("abnormal-true conditions present on a Ready Widget: %+v", w.Status.Conditions)
	}

	// Let the watch events of the install settle, then reconcile N times.
	time.Sleep(2 * time.Second)
	const n = 25
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "w"}}
	writes := c.WritesDuring(t, managerAgent, ns, func() {
		for range n {
			if _, err := reconciler.Reconcile(context.Background(), req); err != nil {
				t.Fatalf("steady-state reconcile: %v", err)
			}
		}
	})
	t.Logf("steady state: %d reconciles of an unchanged Widget made %d write requests (counted in the API server audit log)", n, len(writes))
	if len(writes) != 0 {
		t.Errorf("steady-state writes: %s", testcluster.Describe(writes))
	}
}

func TestDriftIsCorrected(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kit-drift", nil)
	createWidget(t, ns, "w", nil)
	waitWidget(t, ns, "w", "Widget Ready", readyAndObserved)
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: ns, Name: "w-config"}
	if err := kube.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	uid := cm.UID
	cm.Data["message"] = "tampered"
	cm.Labels["added-by-someone"] = "yes"
	if err := kube.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, wait, "ConfigMap restored", func(ctx context.Context) error {
		if err := kube.Get(ctx, key, cm); err != nil {
			return err
		}
		if cm.Data["message"] != "hello" {
			return fmt.Errorf("message = %q", cm.Data["message"])
		}
		return nil
	})
	if cm.UID != uid {
		t.Errorf("ConfigMap was recreated to correct drift")
	}
	if cm.Labels["added-by-someone"] != "yes" {
		t.Errorf("a label another manager added was removed: %v", cm.Labels)
	}
}

func TestSpecChangeRollsOut(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kit-change", nil)
	createWidget(t, ns, "w", nil)
	w := waitWidget(t, ns, "w", "Widget Ready", readyAndObserved)
	cm := &corev1.ConfigMap{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w-config"}, cm); err != nil {
		t.Fatal(err)
	}
	cmVersion := cm.ResourceVersion
	writes := c.WritesDuring(t, managerAgent, ns, func() {
		updateWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.Replicas = 3 })
		w = waitWidget(t, ns, "w", "scaled Widget Ready", func(w *testv1.Widget) error {
			if w.Status.ReadyReplicas != 3 {
				return fmt.Errorf("readyReplicas %d", w.Status.ReadyReplicas)
			}
			return readyAndObserved(w)
		})
	})
	assertKstatus(t, w, "Current")
	if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w-config"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.ResourceVersion != cmVersion {
		t.Errorf("scaling rewrote the unaffected ConfigMap")
	}
	for _, wr := range writes {
		if wr.ObjectRef.Resource == "configmaps" {
			t.Errorf("scaling wrote a ConfigMap: %s", testcluster.Describe([]testcluster.AuditEvent{wr}))
		}
	}
}

func TestAdoption(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	tests := []struct {
		name  string
		adopt bool
	}{{"allowed", true}, {"refused", false}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := c.Namespace(t, "kit-adopt", nil)
			pre := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w-config"}, Data: map[string]string{"message": "old"}}
			if err := kube.Create(ctx, pre); err != nil {
				t.Fatal(err)
			}
			createWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.AdoptExisting = tt.adopt })
			cm := &corev1.ConfigMap{}
			key := client.ObjectKeyFromObject(pre)
			if !tt.adopt {
				w := waitWidget(t, ns, "w", "ownership conflict reported", hasCondition("Degraded", metav1.ConditionTrue, operatorkit.ReasonOwnershipConflict))
				if msg := condition(w, "Degraded").Message; !strings.Contains(msg, "ConfigMap "+ns+"/w-config already exists") || !strings.Contains(msg, "allow adoption") {
					t.Errorf("conflict message does not explain: %q", msg)
				}
				assertKstatus(t, w, "InProgress")
				if err := kube.Get(ctx, key, cm); err != nil {
					t.Fatal(err)
				}
				if cm.Data["message"] != "old" || len(cm.OwnerReferences) != 0 {
					t.Errorf("a ConfigMap that may not be adopted was changed: %+v", cm)
				}
				return
			}
			waitWidget(t, ns, "w", "Widget Ready", readyAndObserved)
			if err := kube.Get(ctx, key, cm); err != nil {
				t.Fatal(err)
			}
			if cm.UID != pre.UID {
				t.Errorf("adoption recreated the ConfigMap")
			}
			if ref := metav1.GetControllerOf(cm); ref == nil || ref.Kind != "Widget" || cm.Data["message"] != "hello" {
				t.Errorf("ConfigMap not adopted: owner %v data %v", ref, cm.Data)
			}
			managed := false
			for _, mf := range cm.ManagedFields {
				if mf.Manager == "operatorkit-widget" && mf.Operation == metav1.ManagedFieldsOperationApply {
					managed = true
				}
			}
			if !managed {
				t.Errorf("adopted ConfigMap has no apply entry for operatorkit-widget: %+v", cm.ManagedFields)
			}
			events := &corev1.EventList{}
			testcluster.Eventually(t, wait, "Adopted event", func(ctx context.Context) error {
				if err := kube.List(ctx, events, client.InNamespace(ns)); err != nil {
					return err
				}
				for _, e := range events.Items {
					if e.Reason == "Adopted" && strings.Contains(e.Message, "w-config") {
						return nil
					}
				}
				return fmt.Errorf("no Adopted event among %d", len(events.Items))
			})
		})
	}
}

func TestDeletionPolicies(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	for _, policy := range []operatorkit.DeletionPolicy{operatorkit.DeletionDelete, operatorkit.DeletionOrphan} {
		t.Run(string(policy), func(t *testing.T) {
			ns := c.Namespace(t, "kit-delete", nil)
			w := createWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.DeletionPolicy = policy })
			waitWidget(t, ns, "w", "Widget Ready", readyAndObserved)
			if err := kube.Delete(ctx, w); err != nil {
				t.Fatal(err)
			}
			testcluster.Eventually(t, wait, "Widget gone", func(ctx context.Context) error {
				if _, err := getWidget(ctx, ns, "w"); !apierrors.IsNotFound(err) {
					return fmt.Errorf("still there (%v)", err)
				}
				return nil
			})
			deploy := &appsv1.Deployment{}
			dkey := client.ObjectKey{Namespace: ns, Name: "w"}
			pods := &corev1.PodList{}
			if policy == operatorkit.DeletionDelete {
				// The finalizer deleted the Deployment; the garbage collector
				// removes its ReplicaSets and pods.
				if err := kube.Get(ctx, dkey, deploy); !apierrors.IsNotFound(err) {
					t.Errorf("Deployment still exists after Delete: %v", err)
				}
				testcluster.Eventually(t, wait, "pods garbage-collected", func(ctx context.Context) error {
					if err := kube.List(ctx, pods, client.InNamespace(ns)); err != nil {
						return err
					}
					if len(pods.Items) > 0 {
						return fmt.Errorf("%d pods left", len(pods.Items))
					}
					return nil
				})
				return
			}
			// Orphan: give the garbage collector time to act on any owner
			// reference left behind, then check the workload still serves.
			time.Sleep(3 * time.Second)
			for _, obj := range []client.Object{deploy, &corev1.ConfigMap{}} {
				name := "w"
				if _, ok := obj.(*corev1.ConfigMap); ok {
					name = "w-config"
				}
				if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
					t.Fatalf("orphaned %T %s: %v", obj, name, err)
				}
				if len(obj.GetOwnerReferences()) != 0 {
					t.Errorf("orphaned %s still has owner references %v", name, obj.GetOwnerReferences())
				}
			}
			if deploy.Status.ReadyReplicas != 2 {
				t.Errorf("orphaned Deployment has %d ready replicas, want 2", deploy.Status.ReadyReplicas)
			}
		})
	}
}

func TestTerminalErrorStallsAndTouchesNothing(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kit-terminal", nil)
	createWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.Invalid = true })
	w := waitWidget(t, ns, "w", "Stalled", hasCondition(operatorkit.ConditionStalled, metav1.ConditionTrue, "InvalidSpec"))
	if err := hasCondition("Degraded", metav1.ConditionTrue, "InvalidSpec")(w); err != nil {
		t.Error(err)
	}
	assertKstatus(t, w, "Failed")
	if w.Status.Phase != lifecycle.Failed {
		t.Errorf("phase %q, want Failed", w.Status.Phase)
	}
	cms := &corev1.ConfigMapList{}
	if err := kube.List(ctx, cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "w-") {
			t.Errorf("an invalid Widget created %s", cm.Name)
		}
	}
	// Fixing the spec recovers it.
	updateWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.Invalid = false })
	w = waitWidget(t, ns, "w", "Running after fix", func(w *testv1.Widget) error {
		if w.Status.Phase != lifecycle.Running {
			return fmt.Errorf("phase %s", w.Status.Phase)
		}
		return readyAndObserved(w)
	})
	if condition(w, operatorkit.ConditionStalled) != nil {
		t.Errorf("Stalled still set after the fix")
	}
	assertKstatus(t, w, "Current")
}

// An error that quotes 256 KB of what a user wrote reaches the conditions
// and Events cut to MaxMessage bytes: the status is still written (the API
// refuses condition messages over 32 KiB) and nothing fills etcd.
func TestLongErrorsAreBounded(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "kit-long", nil)
	createWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.Invalid, w.Spec.Message = true, strings.Repeat("v", 256<<10) })
	w := waitWidget(t, ns, "w", "Stalled", hasCondition(operatorkit.ConditionStalled, metav1.ConditionTrue, "InvalidSpec"))
	for _, cond := range w.Status.Conditions {
		if len(cond.Message) > operatorkit.MaxMessage {
			t.Errorf("condition %s: a message of %d bytes, want at most %d", cond.Type, len(cond.Message), operatorkit.MaxMessage)
		}
	}
	if msg := condition(w, "Degraded").Message; !strings.Contains(msg, "spec.invalid is set") || !strings.HasSuffix(msg, "bytes cut)") {
		t.Errorf("Degraded says %.200q…, want the error's start and how much was cut", msg)
	}
	testcluster.Eventually(t, wait, "the failure's Event", func(ctx context.Context) error {
		events := &corev1.EventList{}
		if err := kube.List(ctx, events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason != "InvalidSpec" {
				continue
			}
			if len(e.Message) > operatorkit.MaxMessage {
				return fmt.Errorf("an Event of %d bytes", len(e.Message))
			}
			return nil
		}
		return fmt.Errorf("no InvalidSpec Event among %d", len(events.Items))
	})
}

func TestTransientErrorsAreRetried(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kit-retry", nil)
	createWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.FailTimes = 3 })
	w := waitWidget(t, ns, "w", "Ready after retries", readyAndObserved)
	if d := condition(w, "Degraded"); d == nil || d.Status != metav1.ConditionFalse {
		t.Errorf("Degraded = %+v after recovery, want False", d)
	}
	events := &corev1.EventList{}
	if err := kube.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	failures := 0
	for _, e := range events.Items {
		if e.Reason == "FlakyDependency" {
			failures += max(1, int(e.Count))
			if s := e.Series; s != nil {
				failures += int(s.Count) - 1
			}
		}
	}
	if failures < 1 {
		t.Errorf("no FlakyDependency warning events recorded for the transient failures")
	}
}

func TestRefusedTransition(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "kit-refuse", nil)
	createWidget(t, ns, "w", nil)
	waitWidget(t, ns, "w", "Widget Ready", readyAndObserved)
	updateWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.RequestPhase = string(lifecycle.Ended) })
	w := waitWidget(t, ns, "w", "transition refused", hasCondition(operatorkit.ConditionLifecycle, metav1.ConditionFalse, operatorkit.ReasonTransitionRefused))
	msg := condition(w, operatorkit.ConditionLifecycle).Message
	if !strings.Contains(msg, "Running → Ended is not allowed") || !strings.Contains(msg, "allows: Servicing, Failed, Stopping") {
		t.Errorf("refusal message = %q", msg)
	}
	if w.Status.Phase != lifecycle.Running {
		t.Errorf("phase = %s after a refused transition, want Running", w.Status.Phase)
	}
}

func TestMaxCreatesBatches(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kit-batch", nil)
	// 2 + 7 objects with MaxCreates 3: at least three reconciles create them.
	writes := c.WritesDuring(t, managerAgent, ns, func() {
		createWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.ExtraConfigMaps = 7 })
		waitWidget(t, ns, "w", "Widget Ready", readyAndObserved)
	})
	cms := &corev1.ConfigMapList{}
	if err := kube.List(ctx, cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	extra := 0
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "w-extra-") {
			extra++
		}
	}
	if extra != 7 {
		t.Errorf("%d extra ConfigMaps, want 7", extra)
	}
	creates := 0
	for _, wr := range writes {
		if wr.Verb == "patch" && wr.ResponseStatus.Code == 201 {
			creates++
		}
	}
	if creates != 9 {
		t.Errorf("%d objects created by apply, want 9", creates)
	}
}

// Deleting a Widget goes through Stopping to Ended, and Ended is written
// before the finalizer goes: a watcher sees both phases before DELETED.
func TestDeletionPhasesAreObservable(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	for _, policy := range []operatorkit.DeletionPolicy{operatorkit.DeletionDelete, operatorkit.DeletionOrphan} {
		t.Run(string(policy), func(t *testing.T) {
			ns := c.Namespace(t, "kit-phases", nil)
			createWidget(t, ns, "w", func(w *testv1.Widget) { w.Spec.DeletionPolicy = policy })
			w := waitWidget(t, ns, "w", "Widget Ready", readyAndObserved)
			gvr := testv1.GroupVersion.WithResource("widgets")
			watcher, err := dynamic.NewForConfigOrDie(c.Config).Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{
				FieldSelector: "metadata.name=w", ResourceVersion: w.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer watcher.Stop()
			if err := kube.Delete(ctx, w); err != nil {
				t.Fatal(err)
			}
			var phases []string
			timeout := time.After(wait)
			for deleted := false; !deleted; {
				select {
				case ev, ok := <-watcher.ResultChan():
					if !ok {
						t.Fatalf("the watch ended early; phases seen %v", phases)
					}
					u, _ := ev.Object.(*unstructured.Unstructured)
					if u == nil {
						continue
					}
					if p, _, _ := unstructured.NestedString(u.Object, "status", "phase"); len(phases) == 0 || phases[len(phases)-1] != p {
						phases = append(phases, p)
					}
					deleted = ev.Type == watch.Deleted
				case <-timeout:
					t.Fatalf("Widget not deleted; phases seen %v", phases)
				}
			}
			if i := slices.Index(phases, "Stopping"); i < 0 || !slices.Contains(phases[i:], "Ended") {
				t.Errorf("phases seen during deletion %v, want Stopping then Ended", phases)
			}
		})
	}
}
