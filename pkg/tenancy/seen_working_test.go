package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// runRelease runs bin as the manager of tenant namespace ns's release: the
// release's Deployment as the cluster holds it, with its pod's identity
// (testcluster.RunDeployment), until it answers its readiness probe.
func runRelease(t *testing.T, c *testcluster.Cluster, bin, ns string) *testcluster.Pod {
	t.Helper()
	deps, err := c.Client.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{LabelSelector: tenancyv1.LabelTenant})
	if err != nil {
		t.Fatal(err)
	}
	if len(deps.Items) != 1 {
		t.Fatalf("%d release Deployments in %s, want the operator's one", len(deps.Items), ns)
	}
	dep := &deps.Items[0]
	pod := c.RunDeployment(t, bin, dep, "manager")
	pod.WaitReady(t, dep, "manager", 60*time.Second)
	return pod
}

// seenWorking applies sample (a custom resource's YAML) in each namespace
// while the managers of pods run there, and checks that each manager
// works for its tenant only, within 2 minutes: it writes the resource's
// status, makes a first child object (an object the resource owns) in its
// namespace and none in another, takes any leader-election Lease in its
// own namespace, and logs no "forbidden".
func seenWorking(t *testing.T, c *testcluster.Cluster, gvr schema.GroupVersionResource, sample string, pods map[string]*testcluster.Pod) {
	t.Helper()
	ctx := context.Background()
	dc := dynamic.NewForConfigOrDie(c.Config)
	cr := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(sample), &cr.Object); err != nil {
		t.Fatal(err)
	}
	uids := map[string]string{}
	for ns := range pods {
		obj := cr.DeepCopy()
		obj.SetNamespace(ns)
		made, err := dc.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[ns] = string(made.GetUID())
	}
	for ns, pod := range pods {
		testcluster.Eventually(t, 2*time.Minute, fmt.Sprintf("the manager in %s working on its %s", ns, gvr.Resource), func(ctx context.Context) error {
			if err := pod.Exited(); err != nil {
				return err
			}
			got, err := dc.Resource(gvr).Namespace(ns).Get(ctx, cr.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if st, _, _ := unstructured.NestedMap(got.Object, "status"); len(st) == 0 {
				return fmt.Errorf("%s/%s has no status yet", ns, cr.GetName())
			}
			children, err := ownedBy(ctx, c, uids[ns])
			if err != nil {
				return err
			}
			if len(children[ns]) == 0 {
				return fmt.Errorf("no object in %s owned by %s %s", ns, gvr.Resource, cr.GetName())
			}
			for other, names := range children {
				if other != ns {
					return fmt.Errorf("objects %v owned by %s's %s are in namespace %s", names, ns, cr.GetName(), other)
				}
			}
			return nil
		})
		if strings.Contains(strings.ToLower(pod.Log()), "forbidden") {
			t.Errorf("the manager in %s logged forbidden:\n%s", ns, pod.Log())
		}
	}
	leases, err := c.Client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		if holder := leaseHolder(l); holder != "" {
			for ns, pod := range pods {
				if strings.HasPrefix(holder, pod.Name) && l.Namespace != ns {
					t.Errorf("the manager in %s holds Lease %s/%s, outside its namespace", ns, l.Namespace, l.Name)
				}
			}
		}
	}
}

func leaseHolder(l coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// ownedBy lists, by namespace, the Deployments, StatefulSets, Services,
// ConfigMaps and Secrets whose owner references name uid.
func ownedBy(ctx context.Context, c *testcluster.Cluster, uid string) (map[string][]string, error) {
	out := map[string][]string{}
	add := func(m metav1.Object) {
		for _, o := range m.GetOwnerReferences() {
			if string(o.UID) == uid {
				out[m.GetNamespace()] = append(out[m.GetNamespace()], m.GetName())
			}
		}
	}
	var sts *appsv1.StatefulSetList
	deps, err := c.Client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err == nil {
		sts, err = c.Client.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
	}
	if err != nil {
		return nil, err
	}
	for i := range deps.Items {
		add(&deps.Items[i])
	}
	for i := range sts.Items {
		add(&sts.Items[i])
	}
	svcs, err := c.Client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range svcs.Items {
		add(&svcs.Items[i])
	}
	cms, err := c.Client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range cms.Items {
		add(&cms.Items[i])
	}
	secrets, err := c.Client.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range secrets.Items {
		add(&secrets.Items[i])
	}
	return out, nil
}
