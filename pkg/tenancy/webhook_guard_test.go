package tenancy_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/packaging"
	"opctl.dev/opctl/pkg/tenancy"
)

// fixtureChart packages a project of pkg/packaging/testdata and returns
// its chart directory.
func fixtureChart(t *testing.T, fixture, chart string) string {
	t.Helper()
	out := t.TempDir()
	if _, err := packaging.Package(context.Background(), filepath.Join("..", "packaging", "testdata", fixture), packaging.PackageOptions{
		Out: out, Targets: []string{"chart"}, Load: packaging.Options{Image: "opctl/kvstore-operator:0.1.0"},
	}); err != nil {
		t.Fatalf("packaging %s: %v", fixture, err)
	}
	return filepath.Join(out, "charts", chart)
}

// A chart's webhooks are served by a Service in a tenant namespace, which
// the tenant controls: the controller narrows them to the tenant's
// namespaced objects that the platform does not manage. A chart whose CRD
// converts through a webhook is refused: the CRD is shared.
func TestChartWebhooksNarrowed(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	id := suffix()
	hooks, conv := "hooks-"+id, "conv-"+id
	createTenant(t, newTenant(hooks, []string{hooks, hooks + "-b"}, fixtureChart(t, "webhook", "hook-operator"), 1))
	createTenant(t, newTenant(conv, []string{conv}, fixtureChart(t, "conversion", "conv-operator"), 1))
	waitTenant(t, hooks, 2*time.Minute, "webhook tenant Ready", ready)

	var vwcs admissionregistrationv1.ValidatingWebhookConfigurationList
	var mwcs admissionregistrationv1.MutatingWebhookConfigurationList
	if err := cl.List(ctx, &vwcs, client.MatchingLabels{tenancyv1.LabelTenant: hooks}); err != nil {
		t.Fatal(err)
	}
	if err := cl.List(ctx, &mwcs, client.MatchingLabels{tenancyv1.LabelTenant: hooks}); err != nil {
		t.Fatal(err)
	}
	type hook struct {
		name    string
		ns, obj *metav1.LabelSelector
		rules   []admissionregistrationv1.RuleWithOperations
		conds   []admissionregistrationv1.MatchCondition
	}
	var all []hook
	for _, c := range vwcs.Items {
		for _, w := range c.Webhooks {
			all = append(all, hook{w.Name, w.NamespaceSelector, w.ObjectSelector, w.Rules, w.MatchConditions})
		}
	}
	for _, c := range mwcs.Items {
		for _, w := range c.Webhooks {
			all = append(all, hook{w.Name, w.NamespaceSelector, w.ObjectSelector, w.Rules, w.MatchConditions})
		}
	}
	if len(all) != 2 {
		t.Fatalf("%d webhooks of the tenant's release on the cluster, want the chart's 2", len(all))
	}
	for _, h := range all {
		if h.ns == nil || !slices.ContainsFunc(h.ns.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
			return r.Key == "kubernetes.io/metadata.name" && r.Operator == metav1.LabelSelectorOpIn && slices.Equal(r.Values, []string{hooks, hooks + "-b"})
		}) {
			t.Errorf("webhook %s namespaceSelector %v, want the tenant's namespaces", h.name, h.ns)
		}
		if h.obj == nil || !slices.ContainsFunc(h.obj.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
			return r.Key == tenancyv1.LabelTenant && r.Operator == metav1.LabelSelectorOpDoesNotExist
		}) {
			t.Errorf("webhook %s objectSelector %v, want the platform's objects left out", h.name, h.obj)
		}
		if !slices.ContainsFunc(h.conds, func(c admissionregistrationv1.MatchCondition) bool { return c.Name == "opctl-tenant-requests" }) {
			t.Errorf("webhook %s matchConditions %v, want the platform's writes left out", h.name, h.conds)
		}
		for _, r := range h.rules {
			if r.Scope == nil || *r.Scope != admissionregistrationv1.NamespacedScope {
				t.Errorf("webhook %s rule %+v, want scope Namespaced", h.name, r)
			}
		}
	}

	waitCondition(t, conv, "Degraded", tenancyv1.ReasonConversionWebhook, "converts through a webhook")
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := cl.List(ctx, &crds); err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds.Items {
		if c := crd.Spec.Conversion; c != nil && c.Strategy == apiextensionsv1.WebhookConverter && c.Webhook != nil && c.Webhook.ClientConfig.Service != nil {
			t.Errorf("CRD %s converts through Service %s/%s", crd.Name, c.Webhook.ClientConfig.Service.Namespace, c.Webhook.ClientConfig.Service.Name)
		}
	}
	var deps appsv1.DeploymentList
	if err := cl.List(ctx, &deps, client.InNamespace(conv)); err != nil || len(deps.Items) > 0 {
		t.Errorf("the refused tenant has %d Deployments (%v), want none", len(deps.Items), err)
	}
}

// A chart whose manager opctl package found reading no watch-namespace
// setting (a kubebuilder go/v4 scaffold) would act in every namespace
// from one tenant's: refused before anything is installed.
func TestAllNamespacesManagerRefused(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "allns-" + suffix()
	createTenant(t, newTenant(name, []string{name}, fixtureChart(t, "allns", "allns"), 1))
	waitCondition(t, name, "Degraded", "InstallModeNotSupported", "watches all namespaces")
	var deps appsv1.DeploymentList
	if err := cl.List(ctx, &deps, client.InNamespace(name)); err != nil || len(deps.Items) > 0 {
		t.Errorf("the refused tenant has %d Deployments (%v), want none", len(deps.Items), err)
	}
}
