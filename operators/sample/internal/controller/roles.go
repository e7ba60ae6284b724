package controller

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// pods lists a store's pods that are not being deleted, by name.
func (h *Handler) pods(ctx context.Context, k *kvv1.KVStore) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := h.Client.List(ctx, list, client.InNamespace(k.Namespace), client.MatchingLabels(selectorLabels(k))); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp.IsZero() && ordinal(k, p.Name) >= 0 {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return ordinal(k, out[i].Name) < ordinal(k, out[j].Name) })
	return out, nil
}

// labelRoles marks the primary pod primary and the others replica, which
// is what the client and read-only Services select. Only pods whose label
// is wrong are patched.
func (h *Handler) labelRoles(ctx context.Context, k *kvv1.KVStore, pods []corev1.Pod) error {
	primary := primaryOf(k)
	for i := range pods {
		p := &pods[i]
		role := RoleReplica
		if p.Name == primary {
			role = RolePrimary
		}
		if p.Labels[RoleLabel] == role {
			continue
		}
		patch := client.MergeFrom(p.DeepCopy())
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[RoleLabel] = role
		if err := h.Client.Patch(ctx, p, patch); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("labelling pod %s %s: %w", p.Name, role, err)
		}
	}
	return nil
}
