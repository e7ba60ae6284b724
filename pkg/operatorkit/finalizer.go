package operatorkit

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

// finalize applies the deletion policy: Delete removes every managed object
// and waits until they are gone; Orphan removes the ownerReferences and
// leaves the objects running. Stopping is written first, before anything
// is removed, then Ended once every object is; the finalizer goes in the
// reconcile after that, so both phases can be seen.
func (r *Reconciler[T]) finalize(ctx context.Context, obj T) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	policy := obj.KitDeletionPolicy()
	if policy == "" {
		policy = DeletionDelete
	}
	logger.V(1).Info("step", "step", "finalize", "policy", policy)
	st, gen := obj.KitStatus(), obj.GetGeneration()
	was := st.Phase
	r.transition(ctx, obj, lifecycle.Facts{Deleting: true}, "")
	if st.Phase == lifecycle.Stopping && was != lifecycle.Stopping && was != lifecycle.Ended {
		// Stopping is written before anything is removed, so that it can be
		// seen however fast the removal is.
		setCondition(st, ConditionReady, metav1.ConditionFalse, ReasonDeleting, "stopping: applying the deletion policy "+string(policy), gen)
		return ctrl.Result{RequeueAfter: time.Millisecond}, nil
	}
	if f, ok := r.handler.(Finalizing[T]); ok {
		done, err := f.Finalize(ctx, obj, policy)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("finalize: %w", err)
		}
		if !done {
			setCondition(st, ConditionReady, metav1.ConditionFalse, ReasonDeleting, "waiting for the handler's deletion step", gen)
			return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
		}
	}
	objs, err := r.handler.Build(ctx, obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("finalize: build: %w", err)
	}
	remaining := 0
	for _, o := range objs {
		left, err := r.release(ctx, obj, o, policy)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("finalize: %w", err)
		}
		if left {
			remaining++
		}
	}
	if remaining > 0 {
		setCondition(st, ConditionReady, metav1.ConditionFalse, ReasonDeleting,
			fmt.Sprintf("waiting for %d managed objects to be deleted", remaining), gen)
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
	}
	r.transition(ctx, obj, lifecycle.Facts{Deleting: true, Gone: true}, "")
	if st.Phase == lifecycle.Ended && was != lifecycle.Ended {
		// Ended is written first, so that it can be seen: once the
		// finalizer goes, so does the object.
		setCondition(st, ConditionReady, metav1.ConditionFalse, ReasonDeleting, "ended: every managed object is "+pastTense(policy), gen)
		return ctrl.Result{RequeueAfter: time.Millisecond}, nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(T))
	controllerutil.RemoveFinalizer(obj, Finalizer)
	if err := r.client.Patch(ctx, obj, patch); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("removing finalizer: %w", err)
	}
	logger.Info("released", "policy", policy)
	return ctrl.Result{}, nil
}

func pastTense(p DeletionPolicy) string {
	if p == DeletionOrphan {
		return "disconnected"
	}
	return "deleted"
}

// release deletes or disconnects one managed object. It reports whether
// the object still exists and must be waited for.
func (r *Reconciler[T]) release(ctx context.Context, owner T, desired client.Object, policy DeletionPolicy) (bool, error) {
	gvk, err := apiutil.GVKForObject(desired, r.scheme)
	if err != nil {
		return false, err
	}
	if desired.GetNamespace() == "" {
		desired.SetNamespace(owner.GetNamespace())
	}
	obj, err := newLive(r.scheme, desired, gvk)
	if err != nil {
		return false, err
	}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(desired), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading %s %s: %w", gvk.Kind, desired.GetName(), err)
	}
	if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != owner.GetUID() {
		return false, nil // not ours
	}
	if policy == DeletionOrphan {
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		refs := obj.GetOwnerReferences()[:0]
		for _, ref := range obj.GetOwnerReferences() {
			if ref.UID != owner.GetUID() {
				refs = append(refs, ref)
			}
		}
		obj.SetOwnerReferences(refs)
		if err := r.client.Patch(ctx, obj, patch); err != nil {
			return false, fmt.Errorf("orphaning %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		r.event(owner, obj, "Orphaned", "Orphaned %s %s", gvk.Kind, obj.GetName())
		return false, nil
	}
	if obj.GetDeletionTimestamp().IsZero() {
		if err := r.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("deleting %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		r.event(owner, obj, "Deleted", "Deleted %s %s", gvk.Kind, obj.GetName())
	}
	return true, nil
}

func (r *Reconciler[T]) event(owner, related client.Object, reason, format string, args ...any) {
	if r.recorder != nil {
		r.recorder.Eventf(owner, related, "Normal", reason, reason, format, args...)
	}
}
