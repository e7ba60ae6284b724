package resources

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ShrinkError is a PersistentVolumeClaim asked to be smaller than it is,
// which Kubernetes refuses.
type ShrinkError struct {
	Name       string
	Live, Want resource.Quantity
}

func (e *ShrinkError) Error() string {
	return fmt.Sprintf("PersistentVolumeClaim %s requests %s and cannot shrink to %s", e.Name, e.Live.String(), e.Want.String())
}

// ExpandPVC sets the storage request of pvc to want, reading the live claim
// through r: growing it expands the volume, and a smaller want keeps the
// live request and returns a *ShrinkError (report it as a terminal error:
// only a spec change fixes it).
func ExpandPVC(ctx context.Context, r client.Reader, pvc *corev1.PersistentVolumeClaim, want resource.Quantity) error {
	if pvc.Spec.Resources.Requests == nil {
		pvc.Spec.Resources.Requests = corev1.ResourceList{}
	}
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = want
	live := &corev1.PersistentVolumeClaim{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(pvc), live); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("reading PersistentVolumeClaim %s: %w", pvc.Name, err)
	}
	cur, ok := live.Spec.Resources.Requests[corev1.ResourceStorage]
	if ok && want.Cmp(cur) < 0 {
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = cur
		return &ShrinkError{Name: pvc.Name, Live: cur, Want: want}
	}
	return nil
}

// PVCReady is a Resource readiness for a PersistentVolumeClaim: bound,
// with the requested capacity (an expansion has finished).
func PVCReady(live client.Object) (bool, string) {
	p, ok := live.(*corev1.PersistentVolumeClaim)
	if !ok {
		return false, fmt.Sprintf("a PersistentVolumeClaim, not %T", live)
	}
	if p.Status.Phase != corev1.ClaimBound {
		return false, "the claim to be bound"
	}
	want := p.Spec.Resources.Requests[corev1.ResourceStorage]
	if got, ok := p.Status.Capacity[corev1.ResourceStorage]; ok && got.Cmp(want) < 0 {
		return false, fmt.Sprintf("the volume to expand from %s to %s", got.String(), want.String())
	}
	return true, ""
}
