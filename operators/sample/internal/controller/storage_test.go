package controller_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// storageClass creates a StorageClass without a provisioner and one 5Gi
// hostPath PersistentVolume per replica for claims to bind to.
func storageClass(t *testing.T, name string, expandable bool, volumes int) {
	t.Helper()
	ctx := context.Background()
	sc := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: name},
		Provisioner:          "kubernetes.io/no-provisioner",
		AllowVolumeExpansion: ptr.To(expandable),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingImmediate),
	}
	create(t, sc)
	t.Cleanup(func() { _ = kube.Delete(context.Background(), sc) })
	for i := range volumes {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i)},
			Spec: corev1.PersistentVolumeSpec{
				StorageClassName:              name,
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}},
			},
		}
		if err := kube.Create(ctx, pv); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.Delete(context.Background(), pv) })
	}
}

func TestStorageExpansion(t *testing.T) {
	c := testcluster.Require(t, cluster)
	for _, expandable := range []bool{true, false} {
		t.Run(fmt.Sprintf("expandable=%v", expandable), func(t *testing.T) {
			ns := c.Namespace(t, "kv-storage", restricted)
			class := ns + "-class"
			storageClass(t, class, expandable, 2)
			k := newKVStore(ns, "disk", 2)
			k.Spec.Storage = &kvv1.StorageSpec{Size: resource.MustParse("1Gi"), StorageClassName: ptr.To(class)}
			create(t, k)
			waitKV(t, k, "KVStore Ready on bound volumes", readyWith(2, kvv1.DefaultVersion))
			testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Storage.Size = resource.MustParse("2Gi") })
			if !expandable {
				waitKV(t, k, "expansion refused", conditionIs("Degraded", metav1.ConditionTrue, "StorageExpansionUnsupported"))
				assertKstatus(t, k, "Failed")
			}
			for i := range 2 {
				pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("data-disk-%d", i)}}
				want := map[bool]string{true: "2Gi", false: "1Gi"}[expandable]
				testcluster.WaitObject(t, kube, pvc, wait, "claim size "+want, func(pvc *corev1.PersistentVolumeClaim) error {
					if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != want {
						return fmt.Errorf("requests.storage %s", got.String())
					}
					return nil
				})
			}
			if expandable {
				// The StatefulSet's claim template is immutable and keeps its size.
				if got := statefulSet(t, k).Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "1Gi" {
					t.Errorf("claim template changed to %s", got.String())
				}
			}
		})
	}
}
