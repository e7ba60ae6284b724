package tenancy_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit/kstatustest"
	"opctl.dev/opctl/pkg/packaging"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// TestMemcachedPerTenant installs the operator opctl kit generated
// (operators/memcached), packaged by opctl package, for two tenants: each
// gets a release of its own in its namespace, Ready, and the operator's
// CRD is applied once and shared; each release's manager, run with its
// pod's identity, reconciles the project's sample in its namespace only.
func TestMemcachedPerTenant(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	out := t.TempDir()
	if _, err := packaging.Package(ctx, "../../operators/memcached", packaging.PackageOptions{Out: out, Targets: []string{"chart"}}); err != nil {
		t.Fatalf("packaging operators/memcached: %v", err)
	}
	chart := filepath.Join(out, "charts", "memcached-operator")
	id := suffix()
	names := []string{"mc-a-" + id, "mc-b-" + id}
	for _, name := range names {
		tn := newTenant(name, []string{name}, "", 0, "owner-"+name)
		tn.Spec.Operators = []tenancyv1.OperatorSpec{{Name: "memcached", Chart: &tenancyv1.ChartSource{Path: chart}, Instances: 2}}
		createTenant(t, tn)
	}
	for _, name := range names {
		tn := waitTenant(t, name, 3*time.Minute, "Tenant Ready", ready)
		if st := kstatustest.AssertConformance(t, tn); st != "Current" {
			t.Errorf("Tenant %s kstatus %s, want Current", name, st)
		}
		op := tn.Status.Operators[0]
		if op.Health != tenancyv1.HealthReady || op.Revision != 1 || op.ChartVersion != "0.1.0" {
			t.Errorf("%s: operator status %s, want Ready at revision 1 of chart 0.1.0", name, dump(op))
		}
		if len(op.CRDs) != 1 || op.CRDs[0] != "memcacheds.cache.opctl.dev" {
			t.Errorf("%s: operator CRDs %v, want [memcacheds.cache.opctl.dev]", name, op.CRDs)
		}
	}
	// Seen working: each tenant's manager, run as its release's pod with
	// its identity, reconciles the project's own sample in its namespace.
	bin, err := testcluster.GoBuild(t.TempDir(), "opctl.dev/opctl/operators/memcached/cmd", "")
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]*testcluster.Pod{}
	for _, name := range names {
		pods[name] = runRelease(t, c, bin, name)
	}
	sample, err := os.ReadFile("../../operators/memcached/config/samples/cache_v1alpha1_memcached.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seenWorking(t, c, schema.GroupVersionResource{Group: "cache.opctl.dev", Version: "v1alpha1", Resource: "memcacheds"}, string(sample), pods)

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: "memcacheds.cache.opctl.dev"}, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Labels[tenancyv1.LabelSharedCRD] != "true" {
		t.Errorf("CRD memcacheds.cache.opctl.dev labels %v, want the shared-CRD label", crd.Labels)
	}
}
