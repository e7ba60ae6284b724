package operatorkit_test

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/resources"
)

// widgetHandler manages a ConfigMap, a Deployment and extra ConfigMaps.
type widgetHandler struct {
	client   client.Client
	mu       sync.Mutex
	failures map[types.UID]int32
}

func (h *widgetHandler) Check(_ context.Context, w *testv1.Widget) error {
	if w.Spec.Invalid {
		// The error quotes the spec, as errors often quote what a user wrote.
		return operatorkit.Terminal("InvalidSpec", fmt.Errorf("spec.invalid is set: this Widget cannot work (message %q)", w.Spec.Message))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures[w.UID] < w.Spec.FailTimes {
		h.failures[w.UID]++
		return operatorkit.WithReason("FlakyDependency", fmt.Errorf("transient failure %d of %d", h.failures[w.UID], w.Spec.FailTimes))
	}
	return nil
}

func (h *widgetHandler) Build(_ context.Context, w *testv1.Widget) ([]client.Object, error) {
	labels := map[string]string{"app.kubernetes.io/name": "widget", "app.kubernetes.io/instance": w.Name}
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-config", Labels: labels}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: w.Name, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "widget"}}},
				},
			},
		},
	}
	for i := range w.Spec.ExtraConfigMaps {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-extra-%d", w.Name, i), Labels: labels}})
	}
	return objs, nil
}

func (h *widgetHandler) Mutate(_ context.Context, w *testv1.Widget, objs []client.Object) error {
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			o.Data = map[string]string{"message": w.Spec.Message}
		case *appsv1.Deployment:
			o.Spec.Replicas = &w.Spec.Replicas
			o.Spec.Template.Spec.Containers[0].Image = w.Spec.Image
		}
	}
	return nil
}

func (h *widgetHandler) Status(ctx context.Context, w *testv1.Widget, _ []operatorkit.ApplyResult) (operatorkit.Observation, error) {
	d := &appsv1.Deployment{}
	if err := h.client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, d); err != nil {
		if apierrors.IsNotFound(err) {
			return operatorkit.Observation{Progressing: true, Message: "waiting for the Deployment"}, nil
		}
		return operatorkit.Observation{}, err
	}
	r := resources.Deployment(d)
	w.Status.ReadyReplicas = r.Ready
	o := operatorkit.Observation{
		Ready:        r.RolledOut(),
		Available:    r.RolledOut() || r.AnyAvailable(),
		Progressing:  !r.RolledOut(),
		RequestPhase: w.Spec.RequestPhase,
	}
	if o.Progressing {
		o.Message = fmt.Sprintf("%d of %d replicas ready", r.Ready, r.Desired)
	}
	return o, nil
}
