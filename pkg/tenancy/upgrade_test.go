package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// One tenant upgrades to a newer chart; then a version whose operator
// never becomes ready rolls back on its own, and status says so.
func TestUpgradeAndRollback(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{UpgradeTimeout: 8 * time.Second})
	neverReady(t, c, "opctl/kvstore-operator:0.3.0")
	v1, v2, v3 := sampleChart(t, "", "0.1.0"), sampleChart(t, "", "0.2.0"), sampleChart(t, "", "0.3.0")
	type opKey struct{ op, result string }
	ops := []opKey{{"install", "ok"}, {"upgrade", "ok"}, {"rollback", "ok"}}
	before := map[opKey][2]float64{}
	for _, k := range ops {
		n, timed := releaseOps(t, k.op, k.result)
		before[k] = [2]float64{n, float64(timed)}
	}

	name := "upgrade-" + suffix()
	createTenant(t, newTenant(name, []string{name}, v1, 1))
	waitTenant(t, name, 2*time.Minute, "Tenant Ready on 0.1.0", ready)

	image := func() string {
		var deps appsv1.DeploymentList
		if err := cl.List(ctx, &deps, client.InNamespace(name)); err != nil || len(deps.Items) != 1 {
			return fmt.Sprintf("deployments: %d, %v", len(deps.Items), err)
		}
		return deps.Items[0].Spec.Template.Spec.Containers[0].Image
	}

	setChart(t, name, v2)
	waitTenant(t, name, 2*time.Minute, "Tenant Ready on 0.2.0", func(tn *tenancyv1.Tenant) error {
		if err := ready(tn); err != nil {
			return err
		}
		if op := tn.Status.Operators[0]; op.ChartVersion != "0.2.0" || op.Revision != 2 {
			return fmt.Errorf("operator %s", dump(op))
		}
		return nil
	})
	if got := image(); got != "opctl/kvstore-operator:0.2.0" {
		t.Fatalf("after the upgrade the operator runs %s", got)
	}

	setChart(t, name, v3)
	tn := waitTenant(t, name, 2*time.Minute, "upgrade to 0.3.0 rolled back", func(tn *tenancyv1.Tenant) error {
		if err := testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonUpgradeFailed); err != nil {
			return fmt.Errorf("%w; operator %s", err, dump(tn.Status.Operators))
		}
		if op := tn.Status.Operators[0]; op.FailedVersion != "0.3.0" || op.ChartVersion != "0.2.0" {
			return fmt.Errorf("operator %s", dump(op))
		}
		return nil
	})
	if op := tn.Status.Operators[0]; op.Revision != 4 {
		t.Errorf("revision %d after install, upgrade, failed upgrade and rollback; want 4", op.Revision)
	}
	testcluster.Eventually(t, time.Minute, "the operator back on 0.2.0", func(context.Context) error {
		if got := image(); got != "opctl/kvstore-operator:0.2.0" {
			return fmt.Errorf("image %s", got)
		}
		return nil
	})
	if err := testcluster.HasCondition(tn.Status.Conditions, "Ready", metav1.ConditionFalse, ""); err != nil {
		t.Errorf("a tenant whose upgrade failed: %v", err)
	}
	// Each Helm operation was counted by result and timed.
	for _, k := range ops {
		n, timed := releaseOps(t, k.op, k.result)
		if n < before[k][0]+1 || float64(timed) < before[k][1]+1 {
			t.Errorf("release operation %s/%s: count %v→%v, timed %v→%v; want both up", k.op, k.result, before[k][0], n, before[k][1], timed)
		}
	}
}

// neverReady makes kwok keep pods of image from ever becoming ready, until
// the test ends.
func neverReady(t *testing.T, c *testcluster.Cluster, image string) {
	t.Helper()
	remove, err := c.AddStage(context.Background(), testcluster.NeverReadyStage("never-ready-"+suffix(), image))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove(context.Background()) })
}

// setChart points the Tenant's first operator at another chart.
func setChart(t *testing.T, name, path string) {
	t.Helper()
	testcluster.UpdateObject(t, cl, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(tn *tenancyv1.Tenant) {
		tn.Spec.Operators[0].Chart.Path = path
	})
}
