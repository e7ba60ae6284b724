package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/sharding"
	"opctl.dev/opctl/pkg/tenancy"
)

// The controller caches the objects of tenant namespaces that carry its
// labels (issue "holds under abuse", item 2): the owner may not set them,
// at create or update, on the kinds it caches (guardrail
// tenant-owned-labels), with the controller stopped too; without them the
// same objects are the owner's to write.
func TestOwnersCannotPlantOwnedLabels(t *testing.T) {
	ctx := context.Background()
	name, as := stoppedTenant(t, "plant-")
	role := func(n string, labels map[string]string) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: name, Labels: labels},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "are the opctl tenancy controller's") {
			t.Errorf("the owner %s: %v, want the guardrail's refusal", what, err)
		}
	}
	refused("creating a Role labelled as its tenant's", as.Create(ctx, role("planted", map[string]string{tenancyv1.LabelTenant: name})))
	refused("creating a Role labelled as another tenant's", as.Create(ctx, role("planted-b", map[string]string{tenancyv1.LabelTenant: "someone-else"})))
	refused("creating a Role with a shard label", as.Create(ctx, role("planted-s", map[string]string{sharding.ShardLabel("tenancy"): "0"})))
	// The cache holds Deployments labelled for a tenant and by Helm: Helm's
	// label is anyone's, the tenant's is not.
	zero := int32(0)
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "planted", Namespace: name,
		Labels: map[string]string{tenancyv1.LabelTenant: name, "app.kubernetes.io/managed-by": "Helm"}},
		Spec: appsv1.DeploymentSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "p"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "p"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	refused("creating a Deployment labelled as its tenant's", as.Create(ctx, deployment))
	plain := role("plain", map[string]string{"app": "mine"})
	if err := as.Create(ctx, plain); err != nil {
		t.Fatalf("the owner creating an unlabelled Role: %v", err)
	}
	plain.Labels[tenancyv1.LabelTenant] = name
	refused("labelling its Role as its tenant's", as.Update(ctx, plain))
	plain.Labels = map[string]string{"app": "still-mine"}
	if err := as.Update(ctx, plain); err != nil {
		t.Errorf("the owner changing its own labels: %v", err)
	}
}

// A scale request carries no labels, so no label rule of a guardrail
// sees it (issue "holds under abuse", item 4): the controller lists its
// release workloads on the namespace, and tenant-release-scale refuses the
// owner their scale subresource and an autoscaler aimed at them, while
// the owner's own workloads scale as before. What someone with the bypass
// scales, drift correction restores.
func TestReleaseScaleGuarded(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "scale-" + suffix()
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{name}, sampleChart(t, "", "0.1.0"), 1, owner))
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	const deploy = "kv-sample-operator-controller-manager"
	testcluster.Eventually(t, time.Minute, "the namespace lists the release's Deployment", func(ctx context.Context) error {
		ns, err := c.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := ns.Annotations[tenancy.AnnotationReleaseWorkloads]; got != "deployments/"+deploy {
			return fmt.Errorf("%s is %q", tenancy.AnnotationReleaseWorkloads, got)
		}
		return nil
	})
	as := kubernetes.NewForConfigOrDie(c.As(owner))
	scale, err := as.AppsV1().Deployments(name).GetScale(ctx, deploy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := scale.Spec.Replicas
	if want == 0 {
		t.Fatalf("the release's Deployment %s has 0 replicas: nothing to guard", deploy)
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "deployments/"+deploy+" is a workload of an operator release") {
			t.Errorf("the owner %s: %v, want tenant-release-scale's refusal", what, err)
		}
	}
	scale.Spec.Replicas = 0
	_, err = as.AppsV1().Deployments(name).UpdateScale(ctx, deploy, scale, metav1.UpdateOptions{})
	refused("scaling its operator to 0", err)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "steal", Namespace: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 50,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: deploy}}}
	_, err = as.AutoscalingV2().HorizontalPodAutoscalers(name).Create(ctx, hpa, metav1.CreateOptions{})
	refused("aiming an autoscaler at its operator", err)

	// The owner's own Deployment, and an autoscaler of it, are the owner's.
	mine := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "mine"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "mine"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if _, err := as.AppsV1().Deployments(name).Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the owner creating its own Deployment: %v", err)
	}
	own, err := as.AppsV1().Deployments(name).GetScale(ctx, "mine", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	own.Spec.Replicas = 1
	if _, err := as.AppsV1().Deployments(name).UpdateScale(ctx, "mine", own, metav1.UpdateOptions{}); err != nil {
		t.Errorf("the owner scaling its own Deployment: %v", err)
	}
	hpa.Name, hpa.Spec.ScaleTargetRef.Name = "mine", "mine"
	if _, err := as.AutoscalingV2().HorizontalPodAutoscalers(name).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Errorf("the owner autoscaling its own Deployment: %v", err)
	}

	// An administrator is not refused; drift correction restores the
	// release's replicas.
	scale, err = c.Client.AppsV1().Deployments(name).GetScale(ctx, deploy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 0
	if _, err := c.Client.AppsV1().Deployments(name).UpdateScale(ctx, deploy, scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("an administrator scaling the operator: %v", err)
	}
	testcluster.Eventually(t, time.Minute, "the operator's replicas restored", func(ctx context.Context) error {
		d, err := c.Client.AppsV1().Deployments(name).Get(ctx, deploy, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != want {
			return fmt.Errorf("replicas %v, want %d", d.Spec.Replicas, want)
		}
		return nil
	})
}

// stoppedTenant provisions a Tenant with no operators, named prefix and a
// suffix, then stops the controller: what the guardrails refuse then, they
// refuse without it. It returns the name and a client of its owner.
func stoppedTenant(t *testing.T, prefix string) (string, client.Client) {
	t.Helper()
	c := testcluster.Require(t, cluster)
	stop := startController(t, tenancy.Options{})
	name := prefix + suffix()
	createTenant(t, newTenant(name, []string{name}, "", 0, "owner-"+name))
	waitTenant(t, name, time.Minute, "Tenant Ready", ready)
	stop()
	as, err := client.New(c.As("owner-"+name), client.Options{Scheme: tenancy.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return name, as
}
