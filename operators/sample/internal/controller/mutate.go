package controller

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
)

// Mutate sets the fields that come from the KVStore's spec.
func (h *Handler) Mutate(ctx context.Context, k *kvv1.KVStore, objs []client.Object) error {
	conf := renderConfig(k)
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			o.Data = map[string]string{configFile: conf}
		case *appsv1.StatefulSet:
			if err := h.mutateStatefulSet(ctx, k, o, conf); err != nil {
				return err
			}
		}
	}
	return nil
}

func (h *Handler) mutateStatefulSet(ctx context.Context, k *kvv1.KVStore, s *appsv1.StatefulSet, conf string) error {
	version := runVersion(k)
	s.Spec.Replicas = ptr.To(ptr.Deref(k.Spec.Replicas, 1))
	s.Labels["app.kubernetes.io/version"] = version
	tmpl := &s.Spec.Template
	tmpl.Labels["app.kubernetes.io/version"] = version
	// A config change restarts the pods, one at a time.
	tmpl.Annotations = map[string]string{configSumKey: sha(conf)}
	c := &tmpl.Spec.Containers[0]
	base := k.Spec.Image
	if base == "" {
		base = h.RelatedImage
	}
	c.Image = imageFor(base, version)
	c.Resources = defaultResources
	if len(k.Spec.Resources.Requests) > 0 || len(k.Spec.Resources.Limits) > 0 {
		c.Resources = *k.Spec.Resources.DeepCopy()
	}
	tmpl.Spec.NodeSelector = k.Spec.NodeSelector
	tmpl.Spec.Tolerations = k.Spec.Tolerations
	return h.mutateStorage(ctx, k, s)
}

// mutateStorage adds the data volume: a claim template with spec.storage,
// else an emptyDir. Claim templates are immutable, so an existing
// StatefulSet keeps its own; Repair grows the claims instead.
func (h *Handler) mutateStorage(ctx context.Context, k *kvv1.KVStore, s *appsv1.StatefulSet) error {
	retain := appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	if k.Spec.DeletionPolicy == operatorkit.DeletionOrphan {
		retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: retain, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	live := &appsv1.StatefulSet{}
	err := h.Client.Get(ctx, client.ObjectKeyFromObject(s), live)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading StatefulSet %s: %w", s.Name, err)
	}
	exists := err == nil
	if exists && (len(live.Spec.VolumeClaimTemplates) > 0) != (k.Spec.Storage != nil) {
		return operatorkit.Terminal("StorageImmutable",
			errors.New("spec.storage cannot be added or removed once the KVStore exists; restore it, or create a new KVStore"))
	}
	if k.Spec.Storage == nil {
		s.Spec.Template.Spec.Volumes = append(s.Spec.Template.Spec.Volumes,
			corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		return nil
	}
	if exists {
		for _, t := range live.Spec.VolumeClaimTemplates {
			t.Status = corev1.PersistentVolumeClaimStatus{}
			s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, t)
		}
		return nil
	}
	s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: selectorLabels(k)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: k.Spec.Storage.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: k.Spec.Storage.Size}},
		},
	}}
	return nil
}
