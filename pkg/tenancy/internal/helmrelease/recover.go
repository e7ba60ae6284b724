package helmrelease

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// recoverRelease marks a revision a crash left pending as failed, so that
// Helm accepts new operations; the next decision sees it as interrupted.
func (c *Reconciler) recoverRelease(r *releaseRun) error {
	cur := r.facts.current
	log.FromContext(r.ctx).Info("recovering a stuck release", "release", r.spec.Namespace+"/"+r.spec.Name, "revision", cur.Version, "status", cur.Info.Status)
	if err := markFailed(r.cfg, cur); err != nil {
		return fmt.Errorf("recovering stuck revision %d: %w", cur.Version, err)
	}
	releaseOps.WithLabelValues("recover", "ok").Inc()
	c.event(r.t, "Warning", "RecoveredStuckRelease", "release %s revision %d was %s after a restart; marked failed", r.spec.Name, cur.Version, "pending")
	return nil
}
