package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"opctl.dev/opctl/pkg/operatorkit"

	v1alpha1 "opctl.dev/opctl/operators/memcached/api/v1alpha1"
)

// TestMemcachedReconciles creates a Memcached and waits until its
// resources exist and its status carries the Ready condition.
func TestMemcachedReconciles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mgr, err := ctrl.NewManager(testConfig, ctrl.Options{Scheme: testScheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetupMemcached(mgr, operatorkit.Options{}); err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	kube, err := client.New(testConfig, client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "memcached-test-"}}
	if err := kube.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), ns) })
	obj := &v1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "sample"}}
	if err := kube.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	h := &MemcachedHandler{Client: kube}
	for {
		err := kube.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if err == nil && meta.FindStatusCondition(obj.Status.Conditions, operatorkit.ConditionReady) == nil {
			err = fmt.Errorf("no Ready condition yet")
		}
		for _, r := range memcachedResources(h) {
			if err != nil {
				break
			}
			o := r.New(obj)
			err = kube.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: o.GetName()}, o)
		}
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Memcached not reconciled: %v", err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
