package testcluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

const waitLong = 60 * time.Second

func pod(name, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
	}
}

// restrictedPod is a pod that satisfies the "restricted" Pod Security level.
func restrictedPod(name string) *corev1.Pod {
	p := pod(name, "registry.example/app:v1")
	p.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return p
}

// (a) A Deployment's pods are scheduled on kwok nodes and become Ready.
func TestSmokeDeploymentBecomesReady(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ns := c.Namespace(t, "smoke-deploy", nil)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod("", "registry.example/web:v1").Spec,
			},
		},
	}
	if _, err := c.Client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, waitLong, "deployment 3/3 ready", func(ctx context.Context) error {
		got, err := c.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Status.ReadyReplicas != 3 || got.Status.UpdatedReplicas != 3 {
			return fmt.Errorf("ready %d/3, updated %d/3", got.Status.ReadyReplicas, got.Status.UpdatedReplicas)
		}
		return nil
	})
	pods, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			t.Errorf("pod %s was not scheduled", p.Name)
		}
		if podReady(&p) {
			ready++
		}
	}
	if ready != 3 {
		t.Errorf("%d of %d pods Ready, want 3", ready, len(pods.Items))
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// (b) Deleting a namespace deletes what it holds and the namespace goes away.
func TestSmokeNamespaceDeletion(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "smoke-nsdel", nil)
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod("p", "registry.example/app:v1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, waitLong, "namespace "+ns+" gone", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (err=%v)", err)
	})
}

// (c) Deleting an owner garbage-collects its dependents.
func TestSmokeGarbageCollection(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "smoke-gc", nil)
	cms := c.Client.CoreV1().ConfigMaps(ns)
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	for _, name := range []string{"dep-1", "dep-2"} {
		dep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{ref}}}
		if _, err := cms.Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bystander"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, waitLong, "dependents collected", func(ctx context.Context) error {
		for _, name := range []string{"dep-1", "dep-2"} {
			if _, err := cms.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s still there (err=%v)", name, err)
			}
		}
		return nil
	})
	if _, err := cms.Get(ctx, "bystander", metav1.GetOptions{}); err != nil {
		t.Errorf("an object without owner was touched: %v", err)
	}
}

// (d) Quota usage is tracked, an over-quota pod is rejected and LimitRanger
// fills in default requests.
func TestSmokeResourceQuota(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "smoke-quota", nil)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourceRequestsCPU: resource.MustParse("1"),
			corev1.ResourcePods:        resource.MustParse("5"),
		}},
	}
	if _, err := c.Client.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	limits := &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type:           corev1.LimitTypeContainer,
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		}}},
	}
	if _, err := c.Client.CoreV1().LimitRanges(ns).Create(ctx, limits, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The quota controller must have computed usage before admission counts.
	Eventually(t, waitLong, "quota status initialised", func(ctx context.Context) error {
		q, err := c.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := q.Status.Used[corev1.ResourceRequestsCPU]; !ok {
			return fmt.Errorf("status.used not set: %v", q.Status.Used)
		}
		return nil
	})
	big := pod("big", "registry.example/app:v1")
	big.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("700m")}
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defaulted, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod("defaulted", "registry.example/app:v1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := defaulted.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "100m" {
		t.Errorf("LimitRanger default request = %s, want 100m", got)
	}
	Eventually(t, waitLong, "quota used reflects pods", func(ctx context.Context) error {
		q, err := c.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			return err
		}
		used := q.Status.Used[corev1.ResourceRequestsCPU]
		if used.Cmp(resource.MustParse("800m")) != 0 {
			return fmt.Errorf("used requests.cpu = %s, want 800m", used.String())
		}
		return nil
	})
	over := pod("over", "registry.example/app:v1")
	over.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}
	_, err = c.Client.CoreV1().Pods(ns).Create(ctx, over, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("over-quota pod: got err %v, want Forbidden: exceeded quota", err)
	}
}

// (e) A CRD is served, a CR round-trips and the schema rejects bad CRs.
func TestSmokeCustomResource(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ctx := context.Background()
	group := "smoke.testcluster.opctl.dev"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size": {Type: "integer", Minimum: ptr.To(1.0)},
							"name": {Type: "string"},
						}},
						"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					},
				}},
			}},
		},
	}
	if err := c.installCRD(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteCRD(t, c, crd.Name) })
	ns := c.Namespace(t, "smoke-crd", nil)
	dc := dynamic.NewForConfigOrDie(c.Config)
	widgets := dc.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"},
		"spec":     map[string]any{"size": int64(3), "name": "gear", "dropped": "unknown fields are pruned"},
	}}
	// The CRD's discovery may lag Established by a moment.
	Eventually(t, waitLong, "create Widget", func(ctx context.Context) error {
		_, err := widgets.Create(ctx, obj, metav1.CreateOptions{})
		return err
	})
	got, err := widgets.Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
		t.Errorf("spec.size = %d, want 3", size)
	}
	if _, found, _ := unstructured.NestedString(got.Object, "spec", "dropped"); found {
		t.Errorf("unknown field spec.dropped was not pruned")
	}
	bad := obj.DeepCopy()
	bad.SetName("bad")
	_ = unstructured.SetNestedField(bad.Object, int64(0), "spec", "size")
	if _, err := widgets.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("Widget with size 0: got %v, want Invalid", err)
	}
}

func deleteCRD(t *testing.T, c *Cluster, name string) {
	dc := dynamic.NewForConfigOrDie(c.Config)
	crds := dc.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	if err := crds.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting CRD %s: %v", name, err)
	}
}

// (f) A ServiceAccount bound to a Role in one namespace is denied in another,
// both impersonated and with a real token.
func TestSmokeRBACNamespaceScope(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ctx := context.Background()
	home := c.Namespace(t, "smoke-rbac-home", nil)
	other := c.Namespace(t, "smoke-rbac-other", nil)
	if _, err := c.Client.CoreV1().ServiceAccounts(home).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}
	if _, err := c.Client.RbacV1().Roles(home).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bot-reads"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cm-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "bot", Namespace: home}},
	}
	if _, err := c.Client.RbacV1().RoleBindings(home).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token, err := c.ServiceAccountTokenConfig(ctx, home, "bot")
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*rest.Config{"impersonated": c.AsServiceAccount(home, "bot"), "token": token} {
		t.Run(name, func(t *testing.T) {
			cs := kubernetes.NewForConfigOrDie(cfg)
			// The RBAC authorizer reads from a cache; allow it to catch up.
			Eventually(t, waitLong, "allowed in "+home, func(ctx context.Context) error {
				_, err := cs.CoreV1().ConfigMaps(home).List(ctx, metav1.ListOptions{})
				return err
			})
			_, err := cs.CoreV1().ConfigMaps(other).List(ctx, metav1.ListOptions{})
			if !apierrors.IsForbidden(err) {
				t.Errorf("list configmaps in %s: got %v, want Forbidden", other, err)
			}
			_, err = cs.CoreV1().Secrets(home).List(ctx, metav1.ListOptions{})
			if !apierrors.IsForbidden(err) {
				t.Errorf("list secrets in %s: got %v, want Forbidden", home, err)
			}
		})
	}
}

// (g) Pod Security admission rejects a privileged pod in a restricted
// namespace and admits a compliant one.
func TestSmokePodSecurityRestricted(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "smoke-psa", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	priv := pod("privileged", "registry.example/app:v1")
	priv.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	_, err := c.Client.CoreV1().Pods(ns).Create(ctx, priv, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Errorf("privileged pod: got %v, want Forbidden: violates PodSecurity", err)
	}
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, restrictedPod("compliant"), metav1.CreateOptions{}); err != nil {
		t.Errorf("restricted-compliant pod rejected: %v", err)
	}
}

// A kwok stage added at run time keeps pods of one image from becoming Ready
// while other pods still do.
func TestSmokeKwokStageNeverReady(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ctx := context.Background()
	image := "registry.example/broken:never-ready"
	remove, err := c.AddStage(ctx, NeverReadyStage("smoke-never-ready", image))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := remove(context.Background()); err != nil {
			t.Error(err)
		}
	})
	ns := c.Namespace(t, "smoke-stage", nil)
	// Give kwok a moment to load the new stage before the pods appear.
	time.Sleep(time.Second)
	for name, img := range map[string]string{"broken": image, "fine": "registry.example/app:v1"} {
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod(name, img), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	Eventually(t, waitLong, "both pods Running", func(ctx context.Context) error {
		for _, name := range []string{"broken", "fine"} {
			p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pod %s phase %q", name, p.Status.Phase)
			}
		}
		return nil
	})
	fine, _ := c.Client.CoreV1().Pods(ns).Get(ctx, "fine", metav1.GetOptions{})
	if !podReady(fine) {
		t.Errorf("pod with a normal image is not Ready")
	}
	// Ready must not flip later: watch for a while.
	time.Sleep(2 * time.Second)
	broken, err := c.Client.CoreV1().Pods(ns).Get(ctx, "broken", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if podReady(broken) {
		t.Errorf("pod with image %s became Ready despite the never-ready stage", image)
	}
}

// The admin kubeconfig works for real CLIs: kubectl sees the kwok nodes and
// helm reaches the cluster.
func TestSmokeKubeconfigForCLIs(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	bin, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "kubectl"), "--kubeconfig", c.Kubeconfig,
		"get", "nodes", "-l", "type=kwok", "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get nodes: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "node/kwok-node-"); n < 2 {
		t.Errorf("kubectl sees %d kwok nodes, want at least 2:\n%s", n, out)
	}
	out, err = exec.Command(filepath.Join(bin, "helm"), "--kubeconfig", c.Kubeconfig, "list", "--all-namespaces", "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("helm list: %v\n%s", err, out)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(out)), "[") {
		t.Errorf("helm list -o json = %q, want a JSON list", out)
	}
}

// The audit log records every write with its user agent.
func TestSmokeAuditLogRecordsWrites(t *testing.T) {
	t.Parallel()
	c := Require(t, cluster)
	ns := c.Namespace(t, "smoke-audit", nil)
	off, err := c.AuditOffset()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.UserAgent = "smoke-audit-writer"
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	writes, err := c.AuditWritesSince(off, func(e AuditEvent) bool { return e.UserAgent == "smoke-audit-writer" })
	if err != nil {
		t.Fatal(err)
	}
	var verbs []string
	for _, w := range writes {
		verbs = append(verbs, w.Verb)
	}
	if strings.Join(verbs, ",") != "create,delete" {
		t.Errorf("audited writes = %v, want [create delete] (reads are not audited)", verbs)
	}
}
