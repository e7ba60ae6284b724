package resources

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatefulSetPods counts the pods of a StatefulSet.
type StatefulSetPods struct {
	// Ready pods, of any revision.
	Ready int32
	// Running pods: phase Running, ready or not.
	Running int32
	// Updated pods run the update revision.
	Updated int32
	// CurrentRevision and UpdateRevision are the StatefulSet's; they are
	// equal once a rollout has finished.
	CurrentRevision, UpdateRevision string
}

// CountStatefulSetPods reads the pods of s through r (a cache that holds
// pods) and counts them.
func CountStatefulSetPods(ctx context.Context, r client.Reader, s *appsv1.StatefulSet) (StatefulSetPods, error) {
	out := StatefulSetPods{
		Ready:           s.Status.ReadyReplicas,
		Updated:         s.Status.UpdatedReplicas,
		CurrentRevision: s.Status.CurrentRevision,
		UpdateRevision:  s.Status.UpdateRevision,
	}
	if s.Spec.Selector == nil {
		return out, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
	if err != nil {
		return out, fmt.Errorf("selector of StatefulSet %s: %w", s.Name, err)
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(s.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return out, fmt.Errorf("listing the pods of StatefulSet %s: %w", s.Name, err)
	}
	for _, p := range pods.Items {
		if metav1.IsControlledBy(&p, s) && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp.IsZero() {
			out.Running++
		}
	}
	return out, nil
}

// StatefulSetReady is a Resource readiness for a StatefulSet: rolled out.
func StatefulSetReady(live client.Object) (bool, string) {
	s, ok := live.(*appsv1.StatefulSet)
	if !ok {
		return false, fmt.Sprintf("a StatefulSet, not %T", live)
	}
	return StatefulSet(s).rolledOut()
}

// DeploymentReady is a Resource readiness for a Deployment: rolled out.
func DeploymentReady(live client.Object) (bool, string) {
	d, ok := live.(*appsv1.Deployment)
	if !ok {
		return false, fmt.Sprintf("a Deployment, not %T", live)
	}
	return Deployment(d).rolledOut()
}

// rolledOut is RolledOut with what it waits for.
func (r Readiness) rolledOut() (bool, string) {
	if r.RolledOut() {
		return true, ""
	}
	return false, fmt.Sprintf("%d of %d replicas ready and updated", min(r.Ready, r.Updated), r.Desired)
}
