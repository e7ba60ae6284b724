package operatorkit_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/action"
	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
	"opctl.dev/opctl/pkg/operatorkit/resources"
)

// gadgetReconciler reconciles Gadgets through a Registry of resources.
var gadgetReconciler *operatorkit.Reconciler[*testv1.Gadget]

// setupGadgets registers the Gadget reconciler: a ConfigMap, a Secret
// with a generated password, a headless Service and a StatefulSet, at
// most two created per reconcile, and a backup action.
func setupGadgets(mgr ctrl.Manager) error {
	c := mgr.GetClient()
	reg := operatorkit.NewRegistry(c, gadgetBase{client: c}, operatorkit.RegistryOptions{MaxCreates: 2},
		gadgetConfig{}, gadgetSecret{}, gadgetService{}, gadgetStatefulSet{}).
		WithJobs(gadgetBackup{})
	gadgetReconciler = operatorkit.New(mgr, "gadget", func() *testv1.Gadget { return &testv1.Gadget{} }, reg, operatorkit.Options{})
	return gadgetReconciler.SetupWithManager(mgr, &corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Service{}, &appsv1.StatefulSet{}, &batchv1.Job{})
}

func gadgetLabels(g *testv1.Gadget) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "gadget", "app.kubernetes.io/instance": g.Name}
}

type gadgetBase struct{ client client.Client }

func (gadgetBase) Check(context.Context, *testv1.Gadget) error { return nil }

func (b gadgetBase) Status(ctx context.Context, g *testv1.Gadget, _ []operatorkit.ApplyResult) (operatorkit.Observation, error) {
	s := &appsv1.StatefulSet{}
	if err := b.client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: g.Name}, s); err != nil {
		return operatorkit.Observation{Progressing: true, Message: "waiting for the StatefulSet"}, client.IgnoreNotFound(err)
	}
	pods, err := resources.CountStatefulSetPods(ctx, b.client, s)
	if err != nil {
		return operatorkit.Observation{}, err
	}
	g.Status.RunningPods = pods.Running
	r := resources.StatefulSet(s)
	return operatorkit.Observation{Ready: r.RolledOut(), Available: r.AnyAvailable() || r.RolledOut(), Progressing: !r.RolledOut()}, nil
}

// gadgetConfig is the ConfigMap: only its data decides a write.
type gadgetConfig struct{}

func (gadgetConfig) New(g *testv1.Gadget) client.Object {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-config"}}
}
func (gadgetConfig) HashFields() []string { return []string{"data"} }
func (gadgetConfig) InitialData(_ context.Context, g *testv1.Gadget, o client.Object) error {
	o.SetLabels(gadgetLabels(g))
	return nil
}
func (gadgetConfig) FromCR(_ context.Context, g *testv1.Gadget, o client.Object) error {
	o.(*corev1.ConfigMap).Data = map[string]string{"message": g.Spec.Message}
	return nil
}

// gadgetSecret holds a password generated at creation, never changed.
type gadgetSecret struct{}

func (gadgetSecret) New(g *testv1.Gadget) client.Object {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-auth"}}
}
func (gadgetSecret) HashFields() []string { return nil }
func (gadgetSecret) InitialData(_ context.Context, g *testv1.Gadget, o client.Object) error {
	o.SetLabels(gadgetLabels(g))
	return resources.SetSecretPassword(o.(*corev1.Secret), "password", 24)
}
func (gadgetSecret) FromCR(_ context.Context, g *testv1.Gadget, o client.Object) error {
	s := o.(*corev1.Secret)
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data["user"] = []byte(g.Name)
	return nil
}

type gadgetService struct{}

func (gadgetService) New(g *testv1.Gadget) client.Object {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: g.Name}}
}
func (gadgetService) HashFields() []string { return nil }
func (gadgetService) InitialData(_ context.Context, g *testv1.Gadget, o client.Object) error {
	s := o.(*corev1.Service)
	s.Labels = gadgetLabels(g)
	s.Spec.ClusterIP = corev1.ClusterIPNone
	s.Spec.Selector = gadgetLabels(g)
	s.Spec.Ports = []corev1.ServicePort{{Name: "main", Port: 8080, Protocol: corev1.ProtocolTCP}}
	return nil
}
func (gadgetService) FromCR(context.Context, *testv1.Gadget, client.Object) error { return nil }
func (gadgetService) Ready(live client.Object) (bool, string)                     { return resources.ServiceReady(live) }

type gadgetStatefulSet struct{}

func (gadgetStatefulSet) New(g *testv1.Gadget) client.Object {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: g.Name}}
}
func (gadgetStatefulSet) HashFields() []string { return []string{"metadata.labels", "spec"} }
func (gadgetStatefulSet) InitialData(_ context.Context, g *testv1.Gadget, o client.Object) error {
	s := o.(*appsv1.StatefulSet)
	s.Labels = gadgetLabels(g)
	s.Spec.ServiceName = g.Name
	s.Spec.Selector = &metav1.LabelSelector{MatchLabels: gadgetLabels(g)}
	s.Spec.Template.Labels = gadgetLabels(g)
	s.Spec.Template.Spec.Containers = []corev1.Container{{Name: "gadget"}}
	return nil
}
func (gadgetStatefulSet) FromCR(_ context.Context, g *testv1.Gadget, o client.Object) error {
	s := o.(*appsv1.StatefulSet)
	s.Spec.Replicas = &g.Spec.Replicas
	s.Spec.Template.Spec.Containers[0].Image = g.Spec.Image
	return nil
}
func (gadgetStatefulSet) Ready(live client.Object) (bool, string) {
	return resources.StatefulSetReady(live)
}

// gadgetBackup runs a backup Job while spec.backup names one.
type gadgetBackup struct{}

func (gadgetBackup) Action(g *testv1.Gadget) (action.Action, *kitapi.ActionStatus, bool) {
	if g.Spec.Backup == "" {
		return action.Action{}, nil, false
	}
	return action.Action{
		Name: "backup", Key: g.Spec.Backup,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "backup", Image: "registry.example/backup:v1"}}}},
	}, g.Status.Backup, true
}
func (gadgetBackup) Record(g *testv1.Gadget, st kitapi.ActionStatus) { g.Status.Backup = &st }

func gadgetReady(g *testv1.Gadget) error {
	if err := readyGadget(g); err != nil {
		return err
	}
	if g.Status.RunningPods != g.Spec.Replicas {
		return fmt.Errorf("runningPods %d of %d", g.Status.RunningPods, g.Spec.Replicas)
	}
	return nil
}
