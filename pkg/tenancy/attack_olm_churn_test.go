package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"opctl.dev/opctl/internal/testcatalog"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// The Deployment OLM installs for a tenant's CSV carries no tenant label,
// so no guardrail keeps it from the owner. An owner deleting it over and
// over makes OLM reinstall it, and the CSV's phase goes round (Failed,
// Pending, InstallReady, Installing, Succeeded); the CSV watch passed every
// phase change, and the reconciles grew with the churn (red team 4: 28
// edits in 30 s, 137 reconciles; 2 deletions, 13). CSV updates are
// coalesced per Tenant (boundedUpdates).
func TestOLMDeploymentChurnBounded(t *testing.T) { olmDeploymentChurn(t, false) }

// TestOLMDeploymentEditChurnBounded is TestOLMDeploymentChurnBounded with
// the owner changing OLM's Deployment (a pod template annotation) instead
// of deleting it: OLM puts it back, and the CSV's phase goes round.
func TestOLMDeploymentEditChurnBounded(t *testing.T) { olmDeploymentChurn(t, true) }

func olmDeploymentChurn(t *testing.T, edit bool) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	c.StartOLM(t)
	addr := testcatalog.Serve(t, publishSampleCatalog(t, "0.1.0"))
	startController(t, tenancy.Options{QuotaUsageInterval: time.Hour})
	name := "olmchurn-" + suffix()
	owner := "owner-" + name
	src := tenancyv1.OLMSource{Catalog: tenancyv1.OLMCatalog{Address: addr}, Package: olmPackage, Channel: "stable"}
	createTenant(t, olmTenant(name, owner, src, ""))
	waitTenant(t, name, 3*time.Minute, "OLM tenant Ready", olmReady("0.1.0"))

	kc := kubernetes.NewForConfigOrDie(c.As(owner))
	d, err := kc.AppsV1().Deployments(name).Get(ctx, olmDeploy, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("owner reading OLM's Deployment: %v", err)
	}
	t.Logf("OLM's Deployment %s labels: %v", d.Name, d.Labels)
	rate := waitIdle(t)

	start, before := time.Now(), reconciles(t)
	deleted, refusedN := 0, 0
	for time.Since(start) < 30*time.Second {
		var err error
		if edit {
			patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"churn":"%d"}}}}}`, deleted)
			_, err = kc.AppsV1().Deployments(name).Patch(ctx, olmDeploy, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		} else {
			err = kc.AppsV1().Deployments(name).Delete(ctx, olmDeploy, metav1.DeleteOptions{})
		}
		switch {
		case err == nil:
			deleted++
		case apierrors.IsNotFound(err):
		default:
			refusedN++
			if refusedN == 1 {
				t.Logf("owner deleting OLM's Deployment: %v", err)
			}
		}
		time.Sleep(time.Second)
	}
	time.Sleep(3 * time.Second)
	n, allowed := reconciles(t)-before, churnAllowed(rate, start)
	t.Logf("edit=%v: owner deleted or changed OLM's Deployment %d times in 30s (%d refused): the controller ran %.0f reconciles (others' rate %.2f/s)", edit, deleted, refusedN, n, rate)
	if deleted == 0 || n > allowed {
		t.Errorf("%d deletions or changes of OLM's Deployment by the owner brought %.0f reconciles, want at most %.0f (%d, plus other tenants' %.2f/s)", deleted, n, allowed, maxChurnReconciles, rate)
	}
}
