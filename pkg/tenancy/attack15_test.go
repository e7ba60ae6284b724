package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// countChart is pruneChart with a Service named for the number of
// namespaces it watches: a change of namespaces drops one Service from
// the manifest and adds another, as a chart renaming an object on a
// values change does.
func countChart() map[string]string {
	files := map[string]string{}
	maps.Copy(files, pruneChart())
	delete(files, "templates/single.yaml")
	files["templates/count.yaml"] = "apiVersion: v1\nkind: Service\nmetadata:\n  name: count-{{ len .Values.watchNamespaces }}\nspec:\n  selector:\n    app: op\n  ports:\n  - port: 8080\n"
	return files
}

// Red team 15. rollback records as failed the version and values of the
// attempt it undoes, found in the history (failedAttempt), and a release
// whose status records no failed values is held whatever the spec's
// values are (releaseState). The controller's early pruning (prune.go)
// runs at the start of the reconcile that rolls back; when a first
// rollback failed, the failed upgrade is neither the last revision nor
// the deployed one, and past --max-history it goes once what it alone
// named is deleted. The second rollback then finds no attempt to record,
// and the release is held on the deployed revision for every values of
// that chart version: a namespace the platform takes afterwards is never
// handed back (red team 11's TestAttack11HeldReleaseIgnoresNamespaceChanges
// again). Tenant A runs countChart on a and b with MaxHistory 2; its
// owner fills count/services in a. The platform adds c: the upgrade
// creates Role reader in c and binding delegate-c, the quota refuses
// Service watch-c; the rollback fails in Helm (Service count-2, which the
// failed upgrade dropped but did not delete, is in no manifest of the
// revision rolled back from), the next reconcile prunes the failed
// upgrade (revision 2) and rolls back again. The owner then frees its
// quota and the platform takes b.
func TestAttack15PrunedFailedAttemptHoldsRelease(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{MaxHistory: 2})
	name, a, b := historyTenant(t, c, "lostfail-", countChart(), "-c")
	nsC, owner := name+"-c", "owner-"+name

	setNamespaces(t, name, a, b, nsC)
	tn := waitTenant(t, name, 3*time.Minute, "the failed upgrade rolled back", func(tn *tenancyv1.Tenant) error {
		for _, op := range tn.Status.Operators {
			if op.FailedVersion != "" && op.Revision >= 4 {
				return nil
			}
		}
		return fmt.Errorf("operators %s", dump(tn.Status.Operators))
	})
	op := tn.Status.Operators[0]
	two, err := revisionStored(ctx, c, name, a, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rolled back: revision %d, failedVersion %q, failedValues %q; revision 2 (the failed upgrade) stored: %v", op.Revision, op.FailedVersion, op.FailedValues, two)

	// The owner frees its quota; the platform takes b.
	freeServices(t, c, owner, a)
	setNamespaces(t, name, a, nsC)
	if err := handedBack(ctx, b, 3*time.Minute); err != nil {
		live := &tenancyv1.Tenant{}
		_ = cl.Get(ctx, client.ObjectKey{Name: name}, live)
		ok, why := reviewServiceAccount(t, c, b, "op", delegation)
		logRevisions(t, c, name, a)
		t.Errorf("namespace %s, taken from Tenant %s, not handed back 3 minutes after the platform took it with the owner's quota free: %v; "+
			"the failed upgrade's revision 2 was pruned before the second rollback (stored: %v), which then recorded failedValues %q, held for any values; "+
			"ServiceAccount op of %s bound cluster-wide: %v (%s); operators %s",
			b, name, err, two, op.FailedValues, b, ok, why, dump(live.Status.Operators))
	}
}
