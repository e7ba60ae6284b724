// Package controller reconciles the fixture's Gizmos.
package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1 "example.com/watchflag/api/v1"
)

// Reconciler reconciles a Gizmo.
type Reconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// Reconcile marks the Gizmo ready; its namespace is the request's.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var obj appsv1.Gizmo
	if err := r.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, &obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	obj.Status.Ready = true
	return ctrl.Result{}, r.Status().Update(ctx, &obj)
}

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&appsv1.Gizmo{}).Complete(r)
}
