package controller_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/operators/memcached/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
	"opctl.dev/opctl/pkg/operatorkit/kstatustest"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

const wait = 60 * time.Second

func newMemcached(ns, name string, mutate func(*v1alpha1.Memcached)) *v1alpha1.Memcached {
	m := &v1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.Replicas = 2
	if mutate != nil {
		mutate(m)
	}
	return m
}

func create(t *testing.T, o client.Object) {
	t.Helper()
	if err := kube.Create(context.Background(), o); err != nil {
		t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

func waitMemcached(t *testing.T, ns, name, what string, check func(*v1alpha1.Memcached) error) *v1alpha1.Memcached {
	t.Helper()
	m := &v1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	testcluster.WaitObject(t, kube, m, wait, what, check)
	return m
}

// ready is Ready at the current generation with every server ready and
// a version read from memcached.
func ready(m *v1alpha1.Memcached) error {
	if err := testcluster.ReadyAt(m, m.Status.Conditions, m.Status.ObservedGeneration); err != nil {
		return err
	}
	if m.Status.ReadyReplicas != m.Spec.Replicas || m.Status.Version == "" {
		return fmt.Errorf("readyReplicas %d of %d, version %q", m.Status.ReadyReplicas, m.Spec.Replicas, m.Status.Version)
	}
	return nil
}

func TestReadyKstatusAndZeroWritesAtSteadyState(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "memcached-steady", nil)
	create(t, newMemcached(ns, "m", nil))
	m := waitMemcached(t, ns, "m", "Memcached Ready", ready)
	if m.Status.Phase != lifecycle.Running {
		t.Errorf("phase %s, want Running", m.Status.Phase)
	}
	if got := kstatustest.AssertConformance(t, m); got != "Current" {
		t.Errorf("kstatus %s, want Current", got)
	}
	d := &appsv1.Deployment{}
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "m-server"}, d); err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "); args != "-m 64 -p 11211" || d.Spec.Template.Spec.Containers[0].Image != "memcached:1.6" {
		t.Errorf("server container %q %q, want the defaults -m 64 -p 11211 and memcached:1.6", d.Spec.Template.Spec.Containers[0].Image, args)
	}

	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "m"}}
	c.AssertNoSteadyStateWrites(t, agent, ns, 25, func() error {
		_, err := reconciler.Reconcile(context.Background(), req)
		return err
	})
}

func TestDeletionPolicies(t *testing.T) {
	c := testcluster.Require(t, cluster)
	for _, policy := range []kitapi.DeletionPolicy{kitapi.DeletionDelete, kitapi.DeletionOrphan} {
		t.Run(string(policy), func(t *testing.T) {
			ctx := context.Background()
			ns := c.Namespace(t, "memcached-delete", nil)
			m := newMemcached(ns, "m", func(m *v1alpha1.Memcached) { m.Spec.DeletionPolicy = policy })
			create(t, m)
			waitMemcached(t, ns, "m", "Memcached Ready", ready)
			if err := kube.Delete(ctx, m); err != nil {
				t.Fatal(err)
			}
			testcluster.Eventually(t, wait, "Memcached gone", func(ctx context.Context) error {
				if err := kube.Get(ctx, client.ObjectKeyFromObject(m), m); !apierrors.IsNotFound(err) {
					return fmt.Errorf("still there (err %v)", err)
				}
				return nil
			})
			for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
				name := map[bool]string{true: "m-server", false: "m-client"}[isDeployment(o)]
				err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o)
				switch {
				case policy == kitapi.DeletionDelete && !apierrors.IsNotFound(err):
					t.Errorf("%s left behind by Delete (err %v)", name, err)
				case policy == kitapi.DeletionOrphan && err != nil:
					t.Errorf("%s removed by Orphan: %v", name, err)
				case policy == kitapi.DeletionOrphan && len(o.GetOwnerReferences()) != 0:
					t.Errorf("%s still owned after Orphan: %v", name, o.GetOwnerReferences())
				}
			}
		})
	}
}

func isDeployment(o client.Object) bool { _, ok := o.(*appsv1.Deployment); return ok }

func TestAdoption(t *testing.T) {
	c := testcluster.Require(t, cluster)
	for _, adopt := range []bool{true, false} {
		t.Run(fmt.Sprint("adopt=", adopt), func(t *testing.T) {
			ns := c.Namespace(t, "memcached-adopt", nil)
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m-client"},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "before"}, Ports: []corev1.ServicePort{{Name: "memcached", Port: 11211}}}}
			create(t, svc)
			create(t, newMemcached(ns, "m", func(m *v1alpha1.Memcached) { m.Spec.AdoptExisting = adopt }))
			if !adopt {
				m := waitMemcached(t, ns, "m", "OwnershipConflict", func(m *v1alpha1.Memcached) error {
					return testcluster.HasCondition(m.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, operatorkit.ReasonOwnershipConflict)
				})
				if got := kstatustest.AssertConformance(t, m); got == "Current" {
					t.Errorf("kstatus Current with an ownership conflict")
				}
				return
			}
			waitMemcached(t, ns, "m", "Memcached Ready", ready)
			got := &corev1.Service{}
			if err := kube.Get(context.Background(), client.ObjectKeyFromObject(svc), got); err != nil {
				t.Fatal(err)
			}
			if got.UID != svc.UID || metav1.GetControllerOf(got) == nil || got.Spec.Selector["app.kubernetes.io/instance"] != "m" {
				t.Errorf("Service not adopted in place: uid %s→%s, controller %v, selector %v", svc.UID, got.UID, metav1.GetControllerOf(got), got.Spec.Selector)
			}
		})
	}
}

// TestDataPath reads the version from a real memcached, and reports the
// server unreachable when it stops.
func TestDataPath(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "memcached-data", nil)
	addr, stop, err := startMemcached()
	if err != nil {
		t.Fatal(err)
	}
	servers.Store(ns+"/m", addr)
	out, err := exec.Command(testcluster.DebianProgram(t, "memcached", "memcached"), "-V").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimPrefix(strings.TrimSpace(string(out)), "memcached ")
	create(t, newMemcached(ns, "m", func(m *v1alpha1.Memcached) { m.Spec.Replicas = 1 }))
	m := waitMemcached(t, ns, "m", "Memcached Ready", ready)
	if m.Status.Version != want {
		t.Errorf("status.version %q, want %q (memcached -V)", m.Status.Version, want)
	}
	stop()
	// A spec change brings a reconcile now rather than at the requeue.
	testcluster.UpdateObject(t, kube, &v1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"}}, func(m *v1alpha1.Memcached) {
		m.Spec.MemoryMB = 32
	})
	waitMemcached(t, ns, "m", "server unreachable", func(m *v1alpha1.Memcached) error {
		return testcluster.HasCondition(m.Status.Conditions, operatorkit.ConditionReady, metav1.ConditionFalse, "ServerUnreachable")
	})
}
