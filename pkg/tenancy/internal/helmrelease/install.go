package helmrelease

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// installRelease installs the release from scratch, first removing a
// revision that never deployed. After a failure the same install waits
// (release_install_backoff.go).
func (c *Reconciler) installRelease(r *releaseRun) error {
	ref := releaseRef(r.t.Name, r.spec.Namespace, r.spec.Name)
	if wait := c.installs.wait(ref, r.spec.Install, r.spec.Values, r.facts.now); wait > 0 {
		r.requeue(wait) // the status still says why the last one failed
		return nil
	}
	if cur := r.facts.current; cur != nil {
		if stop, err := c.refused(r.ctx, r.t, r.st, r.scope, cur); stop || err != nil {
			return err
		}
		if err := c.Helm.uninstall(r.cfg, r.spec.Name); err != nil {
			return fmt.Errorf("removing failed release: %w", err)
		}
	}
	rel, err := c.timed("install", func() (*release.Release, error) {
		return c.Helm.install(r.ctx, r.cfg, r.spec, guard.RenderGuard{Ctx: r.ctx, Scope: r.scope, Labels: r.labels})
	})
	if c.tampered(r.t, r.st, err) {
		return nil
	}
	want := r.facts.want
	err = c.actorForbidden(r.t.Name, err)
	if err != nil {
		c.installs.failed(ref, r.spec.Install, r.spec.Values, r.facts.now)
		r.st.Health, r.st.LastError, r.st.Reason = tenancyv1.HealthFailed, err.Error(), tenancyv1.ReasonInstallFailed
		c.event(r.t, "Warning", tenancyv1.ReasonInstallFailed, "installing %s %s: %v", r.spec.Name, want, err)
		return err
	}
	c.installs.forget(ref)
	c.Helm.noLegacy(r.t.Name, r.spec.Namespace, r.spec.Name)
	c.event(r.t, "Normal", "Installed", "installed %s %s (revision %d)", r.spec.Name, want, rel.Version)
	c.hooksNotRun(r.t, rel)
	r.progressing(rel.Version)
	r.requeue(c.UpgradeTimeout)
	return nil
}

// progressing records a new revision whose workloads roll out now.
func (r *releaseRun) progressing(revision int) {
	st := r.st
	st.TargetVersion, st.UpgradeStartTime, st.LastError, st.Reason = r.facts.want, &metav1.Time{Time: r.facts.now}, "", ""
	st.Revision, st.Health = revision, tenancyv1.HealthProgressing
}

// hooksNotRun says, in an Event, that rel's hooks were not run.
func (c *Reconciler) hooksNotRun(t *tenancyv1.Tenant, rel *release.Release) {
	if rel == nil || len(rel.Hooks) == 0 {
		return
	}
	names := make([]string, 0, len(rel.Hooks))
	for _, h := range rel.Hooks {
		names = append(names, h.Kind+" "+h.Name)
	}
	c.event(t, "Warning", tenancyv1.ReasonHooksNotRun, "release %s: the chart's hooks were not run (%s): a tenant's release runs no Helm hooks, which no check could see; install what they do as ordinary objects",
		rel.Name, strings.Join(names, ", "))
}
