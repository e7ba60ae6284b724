package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/controller"
	"opctl.dev/opctl/pkg/operatorkit"
)

// A Service that existed before the KVStore is adopted in place.
func TestAdoptsExistingService(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ns := c.Namespace(t, "kv-adopt", restricted)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "adopt"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "before"},
			Ports: []corev1.ServicePort{{Name: "valkey", Port: 6379, TargetPort: intstr.FromInt32(6379)}}},
	}
	create(t, svc)
	k := newKVStore(ns, "adopt", 1)
	k.Spec.AdoptExisting = true
	create(t, k)
	waitKV(t, k, "KVStore Ready", readyWith(1, kvv1.DefaultVersion))
	got := &corev1.Service{}
	get(t, ns, "adopt", got)
	if got.UID != svc.UID || got.Spec.ClusterIP != svc.Spec.ClusterIP {
		t.Errorf("the Service was recreated (uid %s→%s, clusterIP %s→%s)", svc.UID, got.UID, svc.Spec.ClusterIP, got.Spec.ClusterIP)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.Name != "adopt" || got.Spec.Selector["app.kubernetes.io/instance"] != "adopt" {
		t.Errorf("not adopted: controller %v selector %v", ref, got.Spec.Selector)
	}
}

// A newer operator build takes over objects an older build wrote with
// client-side updates and the legacy label scheme: the legacy labels go,
// the objects and the password stay.
func TestMigratesObjectsOfAnOlderOperator(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kv-migrate", restricted)
	k := newKVStore(ns, "legacy", 1)
	k.Annotations = map[string]string{operatorkit.PausedAnnotation: "true"}
	create(t, k)
	owner := metav1.OwnerReference{APIVersion: kvv1.GroupVersion.String(), Kind: "KVStore", Name: k.Name, UID: k.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	legacyLabels := map[string]string{"app": "kvstore", "kvstore.opctl.dev/name": "legacy", "app.kubernetes.io/instance": "legacy"}
	old := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "legacy-auth"}, Data: map[string][]byte{"password": []byte("written-by-v0.1")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy-config"}, Data: map[string]string{"valkey.conf": "port 6379\n", "legacy.conf": "x"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}},
	}
	uids := map[string]string{}
	for _, o := range old {
		o.SetNamespace(ns)
		o.SetLabels(legacyLabels)
		o.SetOwnerReferences([]metav1.OwnerReference{owner})
		if err := kube.Create(ctx, o, client.FieldOwner(controller.LegacyFieldManager)); err != nil {
			t.Fatal(err)
		}
		uids[fmt.Sprintf("%T", o)] = string(o.GetUID())
	}
	testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { delete(k.Annotations, operatorkit.PausedAnnotation) })
	waitKV(t, k, "KVStore Ready", readyWith(1, kvv1.DefaultVersion))
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy-auth"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy-config"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"}},
	} {
		name := o.GetName()
		testcluster.WaitObject(t, kube, o, wait, name+" migrated", func(o client.Object) error {
			if _, ok := o.GetLabels()["app"]; ok {
				return fmt.Errorf("legacy labels still there: %v", o.GetLabels())
			}
			return nil
		})
		if string(o.GetUID()) != uids[fmt.Sprintf("%T", o)] {
			t.Errorf("%s was recreated during the migration", name)
		}
		if o.GetLabels()["app.kubernetes.io/managed-by"] != controller.FieldManager {
			t.Errorf("%s lacks the new labels: %v", name, o.GetLabels())
		}
		for _, mf := range o.GetManagedFields() {
			if mf.Manager == controller.LegacyFieldManager {
				t.Errorf("%s still has fields of the legacy manager: %s", name, mf.FieldsV1.String())
			}
		}
	}
	secret := &corev1.Secret{}
	get(t, ns, "legacy-auth", secret)
	if string(secret.Data["password"]) != "written-by-v0.1" {
		t.Errorf("the migration replaced the password")
	}
	cm := &corev1.ConfigMap{}
	get(t, ns, "legacy-config", cm)
	if _, ok := cm.Data["legacy.conf"]; ok {
		t.Errorf("a key only the legacy build wrote was kept: %v", cm.Data)
	}
}

func TestDeletionPolicies(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	for _, policy := range []operatorkit.DeletionPolicy{operatorkit.DeletionDelete, operatorkit.DeletionOrphan} {
		t.Run(string(policy), func(t *testing.T) {
			ns := c.Namespace(t, "kv-delete", restricted)
			k := newKVStore(ns, "del", 2)
			k.Spec.DeletionPolicy = policy
			create(t, k)
			waitKV(t, k, "KVStore Ready", readyWith(2, kvv1.DefaultVersion))
			if err := kube.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
			testcluster.Eventually(t, wait, "KVStore gone", func(ctx context.Context) error {
				if err := kube.Get(ctx, client.ObjectKeyFromObject(k), &kvv1.KVStore{}); !apierrors.IsNotFound(err) {
					return fmt.Errorf("still there (%v)", err)
				}
				return nil
			})
			sts := &appsv1.StatefulSet{}
			if policy == operatorkit.DeletionDelete {
				for _, o := range []client.Object{
					&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "del"}},
					&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "del-auth"}},
					&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "del"}},
				} {
					if err := kube.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
						t.Errorf("%T %s survived Delete: %v", o, o.GetName(), err)
					}
				}
				testcluster.Eventually(t, wait, "pods collected", func(ctx context.Context) error {
					if n := len(podImages(t, k)); n > 0 {
						return fmt.Errorf("%d pods left", n)
					}
					return nil
				})
				return
			}
			time.Sleep(3 * time.Second) // time for the garbage collector to act on leftovers
			get(t, ns, "del", sts)
			if len(sts.OwnerReferences) != 0 || sts.Status.ReadyReplicas != 2 {
				t.Errorf("orphaned StatefulSet: owners %v ready %d, want none and 2", sts.OwnerReferences, sts.Status.ReadyReplicas)
			}
			secret := &corev1.Secret{}
			get(t, ns, "del-auth", secret)
			if len(secret.OwnerReferences) != 0 {
				t.Errorf("orphaned Secret still owned: %v", secret.OwnerReferences)
			}
			for pod, img := range podImages(t, k) {
				if img != "valkey/valkey:"+kvv1.DefaultVersion+" Ready" {
					t.Errorf("orphaned pod %s: %s", pod, img)
				}
			}
		})
	}
}
