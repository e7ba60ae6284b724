package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
)

// Repair does what an apply cannot: during a rollback it deletes the pods
// stuck unready on the failed revision (a StatefulSet does not replace
// them by itself), it grows data volumes to spec.storage.size, labels the
// pods' roles, steers the servers over the data path, and takes the
// scheduled backups.
func (h *Handler) Repair(ctx context.Context, k *kvv1.KVStore, _ []operatorkit.ApplyResult) error {
	if runVersion(k) != k.Spec.Version || configRolledBack(k) {
		if err := h.replaceStuckPods(ctx, k); err != nil {
			return err
		}
	}
	if err := h.expandVolumes(ctx, k); err != nil {
		return err
	}
	if k.Status.Primary == "" {
		k.Status.Primary = primaryOf(k)
	}
	pods, err := h.pods(ctx, k)
	if err != nil {
		return err
	}
	if h.DataPath != nil && len(pods) > 0 {
		if err := h.reconcileServers(ctx, k, pods); err != nil {
			return err
		}
	}
	if err := h.labelRoles(ctx, k, pods); err != nil {
		return err
	}
	k.Status.Replicas = replicasOf(k)
	return h.scheduleBackups(ctx, k)
}

func (h *Handler) replaceStuckPods(ctx context.Context, k *kvv1.KVStore) error {
	s := &appsv1.StatefulSet{}
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: namesOf(k).sts}, s); err != nil {
		return client.IgnoreNotFound(err)
	}
	if s.Status.UpdateRevision == "" || s.Status.ObservedGeneration < s.Generation {
		return nil // the controller has not seen the reverted template yet
	}
	pods := &corev1.PodList{}
	if err := h.Client.List(ctx, pods, client.InNamespace(k.Namespace), client.MatchingLabels(selectorLabels(k))); err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] == s.Status.UpdateRevision || podReady(p) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if err := h.Client.Delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting pod %s stuck on the failed revision: %w", p.Name, err)
		}
		h.event(k, p, "RollbackPodReplaced", "Deleted pod %s stuck on the failed revision", p.Name)
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// claims returns the data PVCs of k's pods that exist.
func (h *Handler) claims(ctx context.Context, k *kvv1.KVStore) ([]corev1.PersistentVolumeClaim, error) {
	var out []corev1.PersistentVolumeClaim
	for i := range ptr.Deref(k.Spec.Replicas, 1) {
		pvc := corev1.PersistentVolumeClaim{}
		key := client.ObjectKey{Namespace: k.Namespace, Name: fmt.Sprintf("data-%s-%d", namesOf(k).sts, i)}
		if err := h.Client.Get(ctx, key, &pvc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading PVC %s: %w", key.Name, err)
		}
		out = append(out, pvc)
	}
	return out, nil
}

func (h *Handler) expandVolumes(ctx context.Context, k *kvv1.KVStore) error {
	if k.Spec.Storage == nil {
		return nil
	}
	pvcs, err := h.claims(ctx, k)
	if err != nil {
		return err
	}
	for i := range pvcs {
		pvc := &pvcs[i]
		current := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		if current.Cmp(k.Spec.Storage.Size) >= 0 {
			continue
		}
		if ok, _, err := h.expandable(ctx, pvc); err != nil || !ok {
			return err // not expandable: Status reports it
		}
		patch := client.MergeFrom(pvc.DeepCopy())
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = k.Spec.Storage.Size
		if err := h.Client.Patch(ctx, pvc, patch); err != nil {
			return fmt.Errorf("expanding PVC %s: %w", pvc.Name, err)
		}
		h.event(k, pvc, "VolumeExpanding", "Requested %s for PVC %s (was %s)", k.Spec.Storage.Size.String(), pvc.Name, current.String())
	}
	return nil
}

// expandable reports whether pvc's StorageClass allows expansion.
func (h *Handler) expandable(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, string, error) {
	name := ptr.Deref(pvc.Spec.StorageClassName, "")
	if name == "" {
		return false, "the claim has no StorageClass", nil
	}
	sc := &storagev1.StorageClass{}
	if err := h.APIReader.Get(ctx, client.ObjectKey{Name: name}, sc); err != nil {
		if apierrors.IsNotFound(err) {
			return false, "StorageClass " + name + " does not exist", nil
		}
		return false, "", fmt.Errorf("reading StorageClass %s: %w", name, err)
	}
	if !ptr.Deref(sc.AllowVolumeExpansion, false) {
		return false, "StorageClass " + name + " does not allow volume expansion", nil
	}
	return true, "", nil
}

// storageProblem reports claims smaller than spec.storage.size that cannot
// grow.
func (h *Handler) storageProblem(ctx context.Context, k *kvv1.KVStore) *operatorkit.Problem {
	if k.Spec.Storage == nil {
		return nil
	}
	pvcs, err := h.claims(ctx, k)
	if err != nil {
		return nil
	}
	for i := range pvcs {
		current := pvcs[i].Spec.Resources.Requests[corev1.ResourceStorage]
		if current.Cmp(k.Spec.Storage.Size) >= 0 {
			continue
		}
		if ok, why, err := h.expandable(ctx, &pvcs[i]); err == nil && !ok {
			return &operatorkit.Problem{Reason: "StorageExpansionUnsupported", Stalled: true, Message: fmt.Sprintf(
				"cannot grow PVC %s from %s to %s: %s; restore spec.storage.size or move the data to a new KVStore",
				pvcs[i].Name, current.String(), k.Spec.Storage.Size.String(), why)}
		}
	}
	return nil
}
