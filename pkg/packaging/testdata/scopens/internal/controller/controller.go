// Package controller reconciles the fixture's Gadgets.
package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1 "example.com/scopens/api/v1"
)

// Reconciler reconciles a Gadget.
type Reconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// Reconcile marks the Gadget ready; its namespace is the request's.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var obj appsv1.Gadget
	if err := r.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, &obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	obj.Status.Ready = true
	return ctrl.Result{}, r.Status().Update(ctx, &obj)
}

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&appsv1.Gadget{}).Complete(r)
}
