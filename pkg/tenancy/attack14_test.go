package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
)

// revisionChart is pruneChart whose Service for a single namespace is
// named for the release's revision, as charts name an object that must
// be new at each upgrade (a migration Job, since a Job's template cannot
// change): every render of the same chart and values names another
// object.
func revisionChart() map[string]string {
	files := map[string]string{}
	maps.Copy(files, pruneChart())
	files["templates/single.yaml"] = "{{- if eq (len .Values.watchNamespaces) 1 }}\napiVersion: v1\nkind: Service\nmetadata:\n  name: single-{{ .Release.Revision }}\nspec:\n  selector:\n    app: op\n  ports:\n  - port: 8080\n{{- end }}\n"
	return files
}

// Red team 14. The controller prunes release history itself (prune.go):
// until the last revision is deployed and swept, a revision goes only
// when the others name every object it names, on the ground that a retry
// of the same spec renders the same objects. A chart that names an
// object for .Release.Revision renders another object at every try, so
// no failed try is ever covered and none is pruned. Tenant A runs
// revisionChart on a and b; its owner fills count/services in a; the
// platform takes b. The upgrade to a alone fails on the quota and, b
// leaving, is retried forward (upgrade_retry.go), each try a stored
// record, with the spec unchanged from the first try on: the history
// grows past --max-history, one record per try for as long as the owner
// keeps its quota full (a try every 10 minutes at most), and every
// reconcile that reads the history (Holds, on each reconcile of a Tenant
// whose namespaces changed) decodes them all. Before 109ed69 Helm
// pruned these tries past MaxHistory; the threat model says only a
// change of values between tries grows the history.
func TestAttack14RevisionNamedObjectGrowsHistory(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	const maxHistory = 2
	startController(t, tenancy.Options{MaxHistory: maxHistory})
	name, a, _ := historyTenant(t, c, "revname-", revisionChart())

	// From here on the spec does not change: every upgrade renders the
	// same chart with the same values, for a alone.
	setNamespaces(t, name, a)
	stored := func(ctx context.Context, v int) (bool, error) { return revisionStored(ctx, c, name, a, v) }
	// Revision 2 is the first try, 3 to 5 the next (30 s, 1 min, 2 min
	// on). The reconcile that made revision 5 pruned first, at revision
	// 4: revisions 1 (deployed) and 4 (last) are all MaxHistory leaves
	// of tries of one spec.
	testcluster.Eventually(t, 6*time.Minute, "the fourth try of the same spec (revision 5)", func(ctx context.Context) error {
		five, err := stored(ctx, 5)
		if err != nil || !five {
			return fmt.Errorf("revision 5 not stored yet (%v)", err)
		}
		return nil
	})
	var kept []int
	for v := 1; v <= 5; v++ {
		ok, err := stored(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			kept = append(kept, v)
		}
	}
	if len(kept) > maxHistory+1 {
		logRevisions(t, c, name, a)
		t.Errorf("with MaxHistory %d and the spec unchanged since revision 2, revisions %v are stored: each failed try of the same spec names "+
			"its own Service single-<revision>, so none is covered and the controller prunes none; the history grows by one record per try for as long as the owner keeps its quota full",
			maxHistory, kept)
	}
}
