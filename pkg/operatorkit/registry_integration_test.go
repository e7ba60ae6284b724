package operatorkit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
	"opctl.dev/opctl/pkg/operatorkit/kstatustest"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
	"opctl.dev/opctl/pkg/operatorkit/resources"
)

func createGadget(t *testing.T, ns, name string, mutate func(*testv1.Gadget)) {
	t.Helper()
	g := &testv1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Spec.Message = "hello"
	g.Spec.Replicas = 2
	if mutate != nil {
		mutate(g)
	}
	if err := kube.Create(context.Background(), g); err != nil {
		t.Fatalf("creating Gadget: %v", err)
	}
}

func waitGadget(t *testing.T, ns, name, what string, check func(*testv1.Gadget) error) *testv1.Gadget {
	t.Helper()
	g := &testv1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	testcluster.WaitObject(t, kube, g, wait, what, check)
	return g
}

func readyGadget(g *testv1.Gadget) error {
	return testcluster.ReadyAt(g, g.Status.Conditions, g.Status.ObservedGeneration)
}

func getSecret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRegistryZeroWritesAndInitialDataKept: a Handler assembled from
// Resources installs in batches of two, reaches Ready with the
// StatefulSet's pods counted, makes no write at steady state, and keeps
// the Secret's generated password across reconciles and spec changes.
func TestRegistryZeroWritesAndInitialDataKept(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kit-registry", nil)
	createGadget(t, ns, "g", nil)
	g := waitGadget(t, ns, "g", "Gadget Ready", gadgetReady)
	if g.Status.Phase != lifecycle.Running {
		t.Errorf("phase %q, want Running", g.Status.Phase)
	}
	assertGadgetKstatus(t, g)
	secret := getSecret(t, ns, "g-auth")
	password := secret.Data["password"]
	if len(password) != 24 || string(secret.Data["user"]) != "g" {
		t.Fatalf("Secret data %q, want a 24-character password and user g", secret.Data)
	}

	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "g"}}
	c.AssertNoSteadyStateWrites(t, managerAgent, ns, 25, func() error {
		_, err := gadgetReconciler.Reconcile(ctx, req)
		return err
	})

	// A spec change updates the ConfigMap and the StatefulSet, never the
	// Secret's initial data.
	testcluster.UpdateObject(t, kube, &testv1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}}, func(g *testv1.Gadget) {
		g.Spec.Message = "changed"
		g.Spec.Replicas = 3
	})
	waitGadget(t, ns, "g", "scaled Gadget Ready", func(g *testv1.Gadget) error {
		if g.Status.RunningPods != 3 {
			return fmt.Errorf("runningPods %d", g.Status.RunningPods)
		}
		return gadgetReady(g)
	})
	cm := &corev1.ConfigMap{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "g-config"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "changed" {
		t.Errorf("ConfigMap message %q, want changed", cm.Data["message"])
	}
	if after := getSecret(t, ns, "g-auth"); !bytes.Equal(after.Data["password"], password) || after.ResourceVersion != secret.ResourceVersion {
		t.Errorf("the Secret's initial data changed: password %q → %q, resourceVersion %s → %s",
			password, after.Data["password"], secret.ResourceVersion, after.ResourceVersion)
	}
}

// TestRegistryHashFields: a field outside a resource's HashFields (the
// ConfigMap's labels) is not restored when it drifts; one inside (its
// data) is.
func TestRegistryHashFields(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kit-hashfields", nil)
	createGadget(t, ns, "g", func(g *testv1.Gadget) { g.Spec.Replicas = 1 })
	waitGadget(t, ns, "g", "Gadget Ready", gadgetReady)
	key := client.ObjectKey{Namespace: ns, Name: "g-config"}
	cm := &corev1.ConfigMap{}
	if err := kube.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	cm.Labels["app.kubernetes.io/name"] = "edited"
	cm.Data["message"] = "tampered"
	if err := kube.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, wait, "ConfigMap data restored", func(ctx context.Context) error {
		if err := kube.Get(ctx, key, cm); err != nil {
			return err
		}
		if cm.Data["message"] != "hello" {
			return fmt.Errorf("message %q", cm.Data["message"])
		}
		return nil
	})
	// Restoring the data re-applies the whole object, labels included;
	// now drift the labels alone.
	cm.Labels["app.kubernetes.io/name"] = "edited"
	if err := kube.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "g"}}
	time.Sleep(time.Second)
	writes := c.WritesDuring(t, managerAgent, ns, func() {
		if _, err := gadgetReconciler.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	})
	for _, w := range writes {
		if w.ObjectRef.Resource == "configmaps" {
			t.Errorf("a label outside HashFields was restored: %s", testcluster.Describe(writes))
		}
	}
}

// TestRegistryJobAction: a backup named in the spec runs as a Job through
// package action; the Gadget is Running again with the action Succeeded
// after it.
func TestRegistryJobAction(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "kit-action", nil)
	createGadget(t, ns, "g", func(g *testv1.Gadget) { g.Spec.Replicas = 1 })
	waitGadget(t, ns, "g", "Gadget Ready", gadgetReady)
	testcluster.UpdateObject(t, kube, &testv1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}}, func(g *testv1.Gadget) {
		g.Spec.Backup = "b1"
	})
	g := waitGadget(t, ns, "g", "backup succeeded", func(g *testv1.Gadget) error {
		if g.Status.Backup == nil || g.Status.Backup.Phase != kitapi.ActionSucceeded {
			return fmt.Errorf("backup %+v", g.Status.Backup)
		}
		return gadgetReady(g)
	})
	if g.Status.Phase != lifecycle.Running || g.Status.Backup.Key != "b1" {
		t.Errorf("phase %s, backup %+v; want Running after backup b1", g.Status.Phase, g.Status.Backup)
	}
}

func assertGadgetKstatus(t *testing.T, g *testv1.Gadget) {
	t.Helper()
	if got := kstatustest.AssertConformance(t, g); got != "Current" {
		t.Errorf("kstatus = %s, want Current", got)
	}
}

// TestExpandPVC: a claim's request grows and never shrinks, read from
// the API server.
func TestExpandPVC(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kit-pvc", nil)
	live := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}}}
	if err := kube.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		want, got string
		shrink    bool
	}{
		{"3Gi", "3Gi", false},
		{"2Gi", "2Gi", false},
		{"1Gi", "2Gi", true},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}}
			err := resources.ExpandPVC(ctx, kube, pvc, resource.MustParse(tt.want))
			var se *resources.ShrinkError
			if errors.As(err, &se) != tt.shrink {
				t.Errorf("err %v, shrink refused: want %v", err, tt.shrink)
			}
			if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse(tt.got)) != 0 {
				t.Errorf("request %s, want %s", got.String(), tt.got)
			}
		})
	}
}
