package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// clusterAdmin reports whether user may do everything everywhere
// (`kubectl auth can-i '*' '*' -A`), asked as the user.
func clusterAdmin(t *testing.T, c *testcluster.Cluster, user string) bool {
	t.Helper()
	return can(t, c, user, authzv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"})
}

// can asks the API server whether user may do what attrs say.
func can(t *testing.T, c *testcluster.Cluster, user string, attrs authzv1.ResourceAttributes) bool {
	t.Helper()
	r, err := kubernetes.NewForConfigOrDie(c.As(user)).AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(),
		&authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("can-i as %s: %v", user, err)
	}
	return r.Status.Allowed
}

// plantRecord creates, as owner, a Secret in ns shaped like Helm's record
// of revision 1 of release kv: deployed, with a ClusterRoleBinding of
// cluster-admin to the owner in its manifest and in a pre-delete hook.
func plantRecord(t *testing.T, owner, ns string) (binding string) {
	t.Helper()
	binding = "kv-owner-" + ns
	crb := adminBinding(binding, owner, "")
	rel := &release.Release{Name: "kv", Namespace: ns, Version: 1, Manifest: "---\n" + crb,
		Info:  &release.Info{Status: release.StatusDeployed},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "sample-operator", Version: "0.1.0", APIVersion: "v2"}},
		Hooks: []*release.Hook{{Name: binding, Kind: "ClusterRoleBinding", Path: "hook.yaml", Manifest: crb,
			Events: []release.HookEvent{release.HookPreDelete, release.HookPreUpgrade, release.HookPreRollback}}},
	}
	data, err := tenancy.EncodeRelease(rel)
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.kv.v1", Namespace: ns,
		Labels: map[string]string{"owner": "helm", "name": "kv", "status": "deployed", "version": "1"}},
		Type: "helm.sh/release.v1", Data: map[string][]byte{"release": []byte(data)}}
	if _, err := kubernetes.NewForConfigOrDie(cluster.As(owner)).CoreV1().Secrets(ns).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatalf("planting the record as %s: %v", owner, err)
	}
	return binding
}

// The two routes to cluster-admin through forged Helm records (issue
// "A tenant is its namespaces"): the owner plants a record whose manifest
// and pre-delete hook bind cluster-admin to itself, and pre-creates the
// chart's ServiceAccount so that the install fails before the controller
// writes a record of its own. Then the platform adds the operator, and
// deletes the Tenant. The owner is never cluster-admin, the binding never
// exists, and the planted record is deleted unread.
func TestForgedRecordsGrantNothing(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	chart := sampleChart(t, "", "0.1.0")
	for _, adopt := range []bool{true, false} {
		t.Run(fmt.Sprintf("adopted=%v", adopt), func(t *testing.T) {
			t.Parallel()
			name := "plant-" + suffix()
			owner := "owner-" + name
			tn := newTenant(name, []string{name}, "", 0, owner)
			if adopt {
				tn.Spec.AdoptNamespaces = true
				if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
					t.Fatal(err)
				}
			}
			createTenant(t, tn)
			waitTenant(t, name, time.Minute, "Tenant Ready", ready)
			as := kubernetes.NewForConfigOrDie(c.As(owner))
			if _, err := as.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "kv-sample-operator-controller-manager"}}, metav1.CreateOptions{}); err != nil {
				t.Fatalf("pre-creating the chart's ServiceAccount as the owner: %v", err)
			}
			binding := plantRecord(t, owner, name)
			if clusterAdmin(t, c, owner) {
				t.Fatal("the owner is cluster-admin before the attack")
			}
			testcluster.UpdateObject(t, cl, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(tn *tenancyv1.Tenant) {
				tn.Spec.Operators = []tenancyv1.OperatorSpec{{Name: "kv", Chart: &tenancyv1.ChartSource{Path: chart}, Instances: 1}}
			})
			waitTenant(t, name, 2*time.Minute, "the install refused over the owner's ServiceAccount", func(tn *tenancyv1.Tenant) error {
				if len(tn.Status.Operators) == 0 || tn.Status.Operators[0].LastError == "" {
					return fmt.Errorf("operators %s", dump(tn.Status.Operators))
				}
				return nil
			})
			check := func(when string) {
				t.Helper()
				if clusterAdmin(t, c, owner) {
					t.Errorf("%s: the owner is cluster-admin", when)
				}
				if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, binding, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("%s: ClusterRoleBinding %s: %v, want NotFound", when, binding, err)
				}
			}
			check("after the failed install")
			if adopt {
				if _, err := c.Client.CoreV1().Secrets(name).Get(ctx, "sh.helm.release.v1.kv.v1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("the planted record: %v, want deleted", err)
				}
			}
			if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
				t.Fatal(err)
			}
			tenantGone(t, name)
			check("after the Tenant's deletion")
		})
	}
}

// adminBinding is a ClusterRoleBinding of cluster-admin to user, with
// annotations (YAML lines under metadata.annotations, or none): what
// every attack on the controller reaches for.
func adminBinding(name, user, annotations string) string {
	meta := "metadata:\n  name: " + name + "\n"
	if annotations != "" {
		meta += "  annotations:\n" + annotations
	}
	return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n" + meta +
		"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\n" +
		"subjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: " + user + "\n"
}

// Secrets labelled like the release's Helm records are anyone's in the
// namespace. At start the controller deletes, unread, those named as
// records (dropLegacy) and keeps the others; it lists only their names, as
// a table, so an owner's many Secrets with 1.5 MB of labels each cannot
// fill its memory (red team, issue "holds under abuse": 60 of 0.8 MB took
// the controller from 117 to 357 MB in one list; pages of 8 objects still
// reached 310 MB with two tenants' Secrets of 110,000 labels).
func TestLegacyRecordsListedByName(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	stop := startController(t, tenancy.Options{})
	name := "pages-" + suffix()
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{name}, sampleChart(t, "", "0.1.0"), 1, owner))
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	stop()
	as := kubernetes.NewForConfigOrDie(c.As(owner))
	labels := map[string]string{"owner": "helm", "name": "kv"}
	const lookalikes = 20
	for i := range lookalikes {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("lookalike-%d", i), Labels: labels}}
		if _, err := as.CoreV1().Secrets(name).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	record := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.kv.v7", Labels: labels}, Data: map[string][]byte{"release": []byte("not read")}}
	if _, err := as.CoreV1().Secrets(name).Create(ctx, record, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	startController(t, tenancy.Options{})
	testcluster.Eventually(t, time.Minute, "the record-named Secret deleted", func(ctx context.Context) error {
		if _, err := c.Client.CoreV1().Secrets(name).Get(ctx, record.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %v, want NotFound", record.Name, err)
		}
		return nil
	})
	for i := range lookalikes {
		if _, err := c.Client.CoreV1().Secrets(name).Get(ctx, fmt.Sprintf("lookalike-%d", i), metav1.GetOptions{}); err != nil {
			t.Errorf("the owner's lookalike-%d: %v, want kept", i, err)
		}
	}
	events, err := c.AuditRequestsBy(controllerUser)
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for _, e := range events {
		if e.Verb != "list" || e.ObjectRef.Resource != "secrets" || e.ObjectRef.Namespace != name {
			continue
		}
		if !strings.Contains(e.RequestURI, "includeObject=None") || !strings.Contains(e.RequestURI, "limit=") {
			t.Errorf("a list of the release's records that asks for more than a page of names: %s", e.RequestURI)
		}
		lists++
	}
	if lists == 0 {
		t.Error("no list of the release's records in the audit log")
	}
}
