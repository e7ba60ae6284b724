package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
)

// Release objects changed or deleted by someone other than the controller
// (here a cluster admin, whom the guardrails let through) come back from
// the release manifest; the restores are counted and reported; the steady
// state after them makes no writes.
func TestDriftCorrection(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "drift-" + suffix()
	createTenant(t, newTenant(name, []string{name}, sampleChart(t, "", "0.1.0"), 1))
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	before := driftCount(t)

	const deploy, role, binding = operatorSA, "kv-sample-operator-manager", "kv-sample-operator-manager"
	if _, err := c.Client.AppsV1().Deployments(name).Patch(ctx, deploy, types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().Roles(name).Patch(ctx, role, types.JSONPatchType, []byte(`[{"op":"replace","path":"/rules","value":[]}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.RbacV1().RoleBindings(name).Delete(ctx, binding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.CoreV1().ServiceAccounts(name).Delete(ctx, operatorSA, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	testcluster.Eventually(t, time.Minute, "release objects restored", func(ctx context.Context) error {
		d, err := c.Client.AppsV1().Deployments(name).Get(ctx, deploy, metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
			return fmt.Errorf("Deployment %v: %v", d.Spec.Replicas, err)
		}
		r, err := c.Client.RbacV1().Roles(name).Get(ctx, role, metav1.GetOptions{})
		if err != nil || len(r.Rules) == 0 {
			return fmt.Errorf("Role rules %v: %v", rulesOf(r), err)
		}
		if _, err := c.Client.RbacV1().RoleBindings(name).Get(ctx, binding, metav1.GetOptions{}); err != nil {
			return err
		}
		_, err = c.Client.CoreV1().ServiceAccounts(name).Get(ctx, operatorSA, metav1.GetOptions{})
		return err
	})
	t.Logf("restored in %s", time.Since(start).Round(100*time.Millisecond))
	// Counted once each restore's write returned, which can follow the
	// object's reappearance by a moment.
	testcluster.Eventually(t, 10*time.Second, "4 drift corrections counted", func(context.Context) error {
		if got := driftCount(t) - before; got < 4 {
			return fmt.Errorf("%v drift corrections counted, want at least 4", got)
		}
		return nil
	})
	events, err := c.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=DriftCorrected"})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no DriftCorrected event: %v", err)
	}
	waitTenant(t, name, time.Minute, "Tenant Ready again", ready)
	t.Run("steady state makes no writes", func(t *testing.T) {
		checkNoSteadyStateWrites(t, c, []string{name})
	})
}

func rulesOf(r *rbacv1.Role) []rbacv1.PolicyRule {
	if r == nil {
		return nil
	}
	return r.Rules
}

// driftCount is the controller's drift corrections in this process.
func driftCount(t *testing.T) float64 {
	t.Helper()
	return counter(t, "opctl_tenancy_drift_corrections_total", "", "")
}
