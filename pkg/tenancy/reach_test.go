package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/auth/rbac/validation"

	"opctl.dev/opctl/internal/testcatalog"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// subject is a user or ServiceAccount as the API server sees it.
type subject struct{ user, namespace string }

func (s subject) String() string { return s.user }

func (s subject) client(c *testcluster.Cluster) kubernetes.Interface {
	if s.namespace == "" {
		return kubernetes.NewForConfigOrDie(c.As(s.user))
	}
	return kubernetes.NewForConfigOrDie(c.As(s.user, "system:serviceaccounts", "system:serviceaccounts:"+s.namespace, "system:authenticated"))
}

// can asks, as s, whether it may verb resource in ns.
func (s subject) can(t *testing.T, c *testcluster.Cluster, ns, verb, group, resource, sub string) bool {
	t.Helper()
	r, err := s.client(c).AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(), &authzv1.SelfSubjectAccessReview{
		Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: sub}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("access review as %s: %v", s, err)
	}
	return r.Status.Allowed
}

// rules are s's rules in ns (SelfSubjectRulesReview: the rules of ns and
// every cluster-wide rule, so cluster scope is in every namespace's).
func (s subject) rules(t *testing.T, c *testcluster.Cluster, ns string) []rbacv1.PolicyRule {
	t.Helper()
	r, err := s.client(c).AuthorizationV1().SelfSubjectRulesReviews().Create(context.Background(),
		&authzv1.SelfSubjectRulesReview{Spec: authzv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("rules review as %s in %s: %v", s, ns, err)
	}
	var out []rbacv1.PolicyRule
	for _, rr := range r.Status.ResourceRules {
		out = append(out, rbacv1.PolicyRule{Verbs: rr.Verbs, APIGroups: rr.APIGroups, Resources: rr.Resources, ResourceNames: rr.ResourceNames})
	}
	for _, nr := range r.Status.NonResourceRules {
		out = append(out, rbacv1.PolicyRule{Verbs: nr.Verbs, NonResourceURLs: nr.NonResourceURLs})
	}
	return out
}

// TestTenantReach is the general reach test of the issue "A tenant is its
// namespaces", over a chart, a bundle and an OLM tenant: from every owner
// and every ServiceAccount of a tenant's
// namespaces, follow what a subject can become (its namespace's
// ServiceAccounts, by minting tokens, impersonating or running pods as
// them) to a fixed point, then compare what each reachable subject may do
// in every namespace outside its tenant with a subject that has no
// binding at all plus the platform's allow-list. Nothing may exceed it.
func TestTenantReach(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	// Namespaced rules asked cluster-wide, within what admin holds.
	verbs := []any{"get", "list", "watch", "create", "update", "patch", "delete"}
	reg := publishGreedy(t, map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets", "pods"}, "verbs": verbs},
		map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments"}, "verbs": verbs})
	c.StartOLM(t)
	addr := testcatalog.Serve(t, publishSampleCatalog(t, "0.1.0"))
	startController(t, tenancy.Options{PlainHTTPRegistries: true})
	id := suffix()
	chart, bundled, olm := "reach-chart-"+id, "reach-bundle-"+id, "reach-olm-"+id
	createTenant(t, olmTenant(olm, "owner-"+olm, tenancyv1.OLMSource{Catalog: tenancyv1.OLMCatalog{Address: addr}, Package: olmPackage, Channel: "stable"}, ""))
	createTenant(t, newTenant(chart, []string{chart, chart + "-b"}, sampleChart(t, "", "0.1.0"), 1, "owner-"+chart))
	createTenant(t, bundleTenant(bundled, tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{Image: reg.Host + "/ops/sample-operator-catalog:latest"},
		Package: olmPackage, Channel: "stable"}, "0.1.0"))
	waitTenant(t, chart, 2*time.Minute, "chart tenant Ready", ready)
	waitTenant(t, bundled, 2*time.Minute, "bundle tenant Ready", bundleAt("0.1.0", 1))
	waitTenant(t, olm, 3*time.Minute, "OLM tenant Ready", olmReady("0.1.0"))
	// An owner-made ServiceAccount of any name gets no guardrail exemption
	// (and joins the subjects reached below).
	posersRefused(t, c, chart, "owner-"+chart, tenancy.ActorName(chart), "opctl-controller-manager")

	// What any authenticated subject may do, and what the platform allows.
	baselineNS := "reach-baseline-" + id
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: baselineNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), baselineNS, metav1.DeleteOptions{})
	})
	if _, err := c.Client.CoreV1().ServiceAccounts(baselineNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nobody := subject{user: "system:serviceaccount:" + baselineNS + ":nobody", namespace: baselineNS}
	// The allow-list: the shipped baseline (docs/tenancy-threat-model.md),
	// written out here rather than read from the code under test, and
	// reading the sample operator's own CRDs by name.
	allowed := []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"},
			ResourceNames: []string{"kvstores.kv.opctl.dev", "kvbackups.kv.opctl.dev"}},
	}
	namespaces, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tenants := map[string][]string{chart: {chart, chart + "-b"}, bundled: {bundled}, olm: {olm}}
	baseline := map[string][]rbacv1.PolicyRule{}
	baseOf := func(ns string) []rbacv1.PolicyRule {
		if _, ok := baseline[ns]; !ok {
			baseline[ns] = append(nobody.rules(t, c, ns), allowed...)
		}
		return baseline[ns]
	}
	var table []string
	for _, tenant := range slices.Sorted(maps.Keys(tenants)) {
		own := tenants[tenant]
		// Reach: the owner, then every ServiceAccount of a namespace where
		// a reached subject can mint tokens, impersonate or create pods.
		reached := []subject{{user: "owner-" + tenant}}
		seen := map[string]bool{reached[0].user: true}
		for i := 0; i < len(reached); i++ {
			s := reached[i]
			for _, ns := range own {
				if !s.can(t, c, ns, "create", "", "serviceaccounts", "token") && !s.can(t, c, ns, "impersonate", "", "serviceaccounts", "") && !s.can(t, c, ns, "create", "", "pods", "") {
					continue
				}
				sas, err := c.Client.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, sa := range sas.Items {
					u := "system:serviceaccount:" + ns + ":" + sa.Name
					if !seen[u] {
						seen[u] = true
						reached = append(reached, subject{user: u, namespace: ns})
					}
				}
			}
		}
		if len(reached) < 3 {
			t.Fatalf("tenant %s: reached only %v; the operator's ServiceAccount must be among them", tenant, reached)
		}
		for _, s := range reached {
			checked, exceeds := 0, false
			for _, n := range namespaces.Items {
				if slices.Contains(own, n.Name) || n.DeletionTimestamp != nil {
					continue
				}
				if ok, extra := validation.Covers(baseOf(n.Name), s.rules(t, c, n.Name)); !ok {
					exceeds = true
					t.Errorf("tenant %s: %s may, in namespace %s, beyond a subject with no binding and the allow-list: %v", tenant, s, n.Name, extra)
				}
				checked++
			}
			table = append(table, fmt.Sprintf("| %s | %s | %d namespaces (cluster-wide rules in each) | %s |", tenant, s, checked, map[bool]string{false: "nothing beyond", true: "EXCEEDS"}[exceeds]))
		}
	}
	sort.Strings(table)
	t.Logf("reach table:\n| tenant | subject | checked | outside the tenant |\n|---|---|---|---|\n%s", strings.Join(table, "\n"))
}
