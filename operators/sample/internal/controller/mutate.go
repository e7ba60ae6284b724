package controller

import (
	"context"
	"errors"
	"fmt"
	"path"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

// Mutate sets the fields that come from the KVStore's spec.
func (h *Handler) Mutate(ctx context.Context, k *kvv1.KVStore, objs []client.Object) error {
	conf := renderConfig(k)
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			o.Data = map[string]string{configFile: conf, primaryFile: primaryOf(k)}
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
	s.Spec.Replicas = ptr.To(replicasOf(k))
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
	c.Resources = resourcesOf(k)
	tmpl.Spec.NodeSelector = k.Spec.NodeSelector
	tmpl.Spec.Tolerations = k.Spec.Tolerations
	live := &appsv1.StatefulSet{}
	if err := h.Client.Get(ctx, client.ObjectKeyFromObject(s), live); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading StatefulSet %s: %w", s.Name, err)
		}
		live = nil
	}
	if err := h.mutateRestore(ctx, k, s, live); err != nil {
		return err
	}
	return h.mutateStorage(k, s, live)
}

// mutateRestore adds the restore init container of spec.restore: it
// installs the backup into the first pod's empty data volume. A restore
// belongs to the StatefulSet as it was created, so an existing one keeps
// its own, even once the backup is gone.
func (h *Handler) mutateRestore(ctx context.Context, k *kvv1.KVStore, s *appsv1.StatefulSet, live *appsv1.StatefulSet) error {
	spec := &s.Spec.Template.Spec
	if live != nil {
		for _, c := range live.Spec.Template.Spec.InitContainers {
			if c.Name == "restore" {
				spec.InitContainers = append(spec.InitContainers, c)
			}
		}
		for _, v := range live.Spec.Template.Spec.Volumes {
			if v.Name == "backups" {
				spec.Volumes = append(spec.Volumes, v)
			}
		}
		return nil
	}
	if k.Spec.Restore == nil {
		return nil
	}
	if h.ToolsImage == "" {
		return operatorkit.Terminal("NoToolsImage", errors.New("spec.restore needs the operator's --tools-image (RELATED_IMAGE_TOOLS), the image of its restore program; set it on the operator's Deployment"))
	}
	b, err := backupFor(ctx, h.Client, k)
	if err != nil {
		return err
	}
	c := spec.Containers[0]
	spec.InitContainers = []corev1.Container{{
		Name: "restore", Image: h.ToolsImage, Command: []string{"/manager", "restore"},
		Args:            []string{"--file", path.Join(BackupMountPath, b.Status.File), "--sha256", b.Status.SHA256, "--data-dir", "/data", "--pod", primaryOf(k)},
		VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "backups", MountPath: BackupMountPath, ReadOnly: true}},
		Resources:       corev1.ResourceRequirements{Requests: c.Resources.Requests, Limits: c.Resources.Limits},
		SecurityContext: c.SecurityContext.DeepCopy(),
	}}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "backups", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: b.Status.ClaimName, ReadOnly: true}}})
	h.event(k, b, "Restoring", "Restoring from KVBackup %s (%d keys, sha256 %s)", b.Name, b.Status.Keys, b.Status.SHA256)
	return nil
}

// mutateStorage adds the data volume: a claim template with spec.storage,
// else an emptyDir. Claim templates are immutable, so an existing
// StatefulSet keeps its own; Repair grows the claims instead.
func (h *Handler) mutateStorage(k *kvv1.KVStore, s *appsv1.StatefulSet, live *appsv1.StatefulSet) error {
	retain := appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	if k.Spec.DeletionPolicy == operatorkit.DeletionOrphan {
		retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: retain, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	exists := live != nil
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

// resourcesOf are the server container's resources: spec.resources, or
// the defaults.
func resourcesOf(k *kvv1.KVStore) corev1.ResourceRequirements {
	if len(k.Spec.Resources.Requests) > 0 || len(k.Spec.Resources.Limits) > 0 {
		return *k.Spec.Resources.DeepCopy()
	}
	return *defaultResources.DeepCopy()
}

// replicasOf is the number of pods to run: none once Stopping is
// wished; else what autoscaling decided (status.replicas, within its
// bounds) or spec.replicas, and never fewer than the primary's ordinal
// needs, since a StatefulSet removes the highest ordinals first.
func replicasOf(k *kvv1.KVStore) int32 {
	if k.KitWish() == lifecycle.Stopping {
		return 0
	}
	n := ptr.Deref(k.Spec.Replicas, 1)
	if a := k.Spec.Autoscaling; a != nil {
		if k.Status.Replicas > 0 {
			n = k.Status.Replicas
		}
		n = max(a.MinReplicas, min(a.MaxReplicas, n))
	}
	if o := ordinal(k, primaryOf(k)); o >= 0 {
		n = max(n, int32(o)+1)
	}
	return n
}

func resourceMust(s string) resource.Quantity { return resource.MustParse(s) }
