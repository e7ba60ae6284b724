package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// TestDefaultQuota: a tenant with no operators gets the shipped default
// quota and container defaults; its owner's pod over the quota and its
// Secret past the count are refused.
func TestDefaultQuota(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "defaults-" + suffix()
	createTenant(t, newTenant(name, []string{name}, "", 0, "owner-"+name))
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)

	shipped := quota.ShippedDefaultQuota()
	hard := quotaOf(t, name).Spec.Hard
	for k, v := range shipped.Hard {
		got, ok := hard[k]
		switch {
		case !ok:
			t.Errorf("quota has no %s", k)
		case strings.HasPrefix(string(k), "count/") || k == corev1.ResourcePersistentVolumeClaims:
			// Plus what the controller and the cluster put there.
			if got.Cmp(v) < 0 {
				t.Errorf("quota %s = %s, below the default %s", k, got.String(), v.String())
			}
		case got.Cmp(v) != 0:
			t.Errorf("quota %s = %s, want the default %s (the tenant has no operators)", k, got.String(), v.String())
		}
	}
	// The owners' RoleBinding, the actor's bindings: counted on top.
	if rb, d := hard["count/rolebindings.rbac.authorization.k8s.io"], shipped.Hard["count/rolebindings.rbac.authorization.k8s.io"]; rb.Value() <= d.Value() {
		t.Errorf("count/rolebindings %s: the controller's RoleBindings are not counted on top of the default %s", rb.String(), d.String())
	}
	lr := &corev1.LimitRange{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: tenancy.LimitRangeName}, lr); err != nil {
		t.Fatal(err)
	}
	if d := lr.Spec.Limits[0].DefaultRequest[corev1.ResourceCPU]; d.Cmp(shipped.DefaultRequest[corev1.ResourceCPU]) != 0 {
		t.Errorf("LimitRange default request cpu %s, want the shipped %s", d.String(), shipped.DefaultRequest.Cpu().String())
	}

	owner := kubernetes.NewForConfigOrDie(c.As("owner-" + name))
	over := shipped.Hard[corev1.ResourceRequestsCPU]
	over.Add(resource.MustParse("1"))
	if _, err := owner.CoreV1().Pods(name).Create(ctx, restrictedPod("too-big", over.String()), metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Errorf("a pod of %s CPU: %v, want exceeded quota", over.String(), err)
	}
	// A count stops the object past it: Secrets, and a kind an owner
	// rarely thinks of (issue "A tenant is its namespaces", red team).
	fillCount(t, owner, name, hard, "count/secrets", func(i int) error {
		_, err := owner.CoreV1().Secrets(name).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%d", i)}}, metav1.CreateOptions{})
		return err
	})
	fillCount(t, owner, name, hard, "count/poddisruptionbudgets.policy", func(i int) error {
		one := intstr.FromInt32(1)
		_, err := owner.PolicyV1().PodDisruptionBudgets(name).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pdb-%d", i)},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}, metav1.CreateOptions{})
		return err
	})
	// The cluster serves dynamic resource allocation (Kubernetes 1.36):
	// its claims are counted too.
	fillCount(t, owner, name, hard, "count/resourceclaims.resource.k8s.io", func(i int) error {
		_, err := owner.ResourceV1().ResourceClaims(name).Create(ctx, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%d", i)},
			Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
				Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}}}}}}, metav1.CreateOptions{})
		return err
	})
	// Ephemeral storage is bounded too.
	disk := restrictedPod("disk", "10m")
	for _, l := range []corev1.ResourceList{disk.Spec.Containers[0].Resources.Requests, disk.Spec.Containers[0].Resources.Limits} {
		l[corev1.ResourceEphemeralStorage] = resource.MustParse("100Ti")
	}
	if _, err := owner.CoreV1().Pods(name).Create(ctx, disk, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Errorf("a pod of 100Ti ephemeral storage: %v, want exceeded quota", err)
	}
	// Finished pods count: a Job of many short pods stops at about
	// count/pods Pod objects, far short of its completions. The quota
	// controller's recount races the admission of the Job's parallel
	// creations (Kubernetes' own), which can let up to a parallel batch
	// more through, no more.
	maxPods := hard[countPods]
	completions, parallel := int32(3*maxPods.Value()), int32(25)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "many"}, Spec: batchv1.JobSpec{Completions: &completions, Parallelism: &parallel,
		Template: corev1.PodTemplateSpec{Spec: restrictedPod("", "10m").Spec}}}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := owner.BatchV1().Jobs(name).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the owner's Job: %v", err)
	}
	podCount := func(ctx context.Context) (int64, error) {
		pods, err := owner.CoreV1().Pods(name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		return int64(len(pods.Items)), nil
	}
	testcluster.Eventually(t, 2*time.Minute, "the Job's pods at count/pods", func(ctx context.Context) error {
		n, err := podCount(ctx)
		if err == nil && n < maxPods.Value() {
			err = fmt.Errorf("%d Pod objects, count/pods %d", n, maxPods.Value())
		}
		return err
	})
	time.Sleep(15 * time.Second) // more than a quota resync (10 s on the test control plane)
	n, err := podCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n > maxPods.Value()+int64(parallel) {
		t.Errorf("%d Pod objects, past count/pods %d and a parallel batch", n, maxPods.Value())
	}
	if j, err := owner.BatchV1().Jobs(name).Get(ctx, "many", metav1.GetOptions{}); err != nil || j.Status.Succeeded+j.Status.Failed >= completions {
		t.Errorf("the Job ran %v of %d pods (%v): count/pods did not stop it", j.Status.Succeeded+j.Status.Failed, completions, err)
	}
	_ = owner.BatchV1().Jobs(name).Delete(ctx, "many", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})

	// An operator whose catalog cannot be read: no figures of its own, the
	// defaults still.
	unread := "defaults-unread-" + suffix()
	createTenant(t, bundleTenant(unread, tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{Image: "127.0.0.1:1/nothing/catalog:latest"},
		Package: olmPackage, Channel: "stable"}, "0.1.0"))
	testcluster.Eventually(t, 2*time.Minute, "the default quota of a tenant whose catalog cannot be read", func(ctx context.Context) error {
		q := &corev1.ResourceQuota{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: unread, Name: tenancy.QuotaName}, q); err != nil {
			return err
		}
		for _, k := range []corev1.ResourceName{corev1.ResourceRequestsCPU, corev1.ResourcePods, "count/secrets"} {
			if got, want := q.Spec.Hard[k], shipped.Hard[k]; got.Cmp(want) < 0 {
				return fmt.Errorf("quota %s = %s, want at least the default %s", k, got.String(), want.String())
			}
		}
		return nil
	})
}

// countPods bounds every Pod object of a namespace, finished ones too.
const countPods corev1.ResourceName = "count/pods"

// fillCount creates objects in namespace until the quota's count refuses
// one: none may be refused before the count, and one past it must be. The
// quota controller's periodic recount can race the API server's admission
// and let one more through (Kubernetes' own), so a refusal within two
// objects past the count passes; an unenforced count does not.
func fillCount(t *testing.T, owner kubernetes.Interface, namespace string, hard corev1.ResourceList, count corev1.ResourceName, create func(i int) error) {
	t.Helper()
	used := &corev1.ResourceQuota{}
	testcluster.Eventually(t, time.Minute, "the quota's use of "+string(count), func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: tenancy.QuotaName}, used); err != nil {
			return err
		}
		if _, ok := used.Status.Used[count]; !ok {
			return fmt.Errorf("status.used has no %s yet", count)
		}
		return nil
	})
	limit, inUse := hard[count], used.Status.Used[count]
	room := limit.Value() - inUse.Value()
	created := int64(0)
	var err error
	for ; created <= room+2; created++ {
		if err = create(int(created)); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") || created < room {
		t.Errorf("%s: object %d of a count of %d (%d in use before): %v, want exceeded quota just past the count", count, created+1, limit.Value(), inUse.Value(), err)
	}
}
