package helmrelease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Reconciler is the release engine: it brings a tenant's Helm releases to
// their spec, corrects their drift and removes them. The chart and bundle
// backends share it.
type Reconciler struct {
	// Client writes, and reads from the cache; Reader reads the API
	// server; Owned reads the objects the controller labels for a tenant
	// (live where a shard's cache may not hold them yet).
	Client client.Client
	Reader client.Reader
	Owned  client.Reader
	// Helm runs the Helm actions against the controller's record storage.
	Helm *HelmClient
	// Drift is the memo of each release's objects that drift correction
	// compares.
	Drift *DriftMemo
	// Recorder receives the Events of a Tenant.
	Recorder events.EventRecorder
	// Actor is a client acting as a tenant's actor: what drift correction
	// restores, it restores with the tenant's rights.
	Actor func(tenant string) (client.Client, error)
	// ActorName names a tenant's actor, for messages.
	ActorName func(tenant string) string
	// FieldManager is the field manager of the objects drift correction
	// restores.
	FieldManager string
	// UpgradeTimeout is how long an install or upgrade may take to be
	// ready; DriftInterval, how often unwatched objects are read.
	UpgradeTimeout, DriftInterval time.Duration

	installs failedInstalls
	swept    revisionMemo
	pruned   revisionMemo
	upgrades failedUpgrades
}

// Request is what one reconcile asks of one release.
type Request struct {
	Tenant *tenancyv1.Tenant
	Spec   Spec
	// Status is the operator's status, updated in place.
	Status *tenancyv1.OperatorStatus
	// Scope is what the release may touch and grant.
	Scope guard.ReleaseScope
	// Labels are set on every object of the release.
	Labels map[string]string
	// DriftIgnore are the fields drift correction leaves as they are.
	DriftIgnore []tenancyv1.DriftIgnoreRule
	// Requeue asks for the next reconcile at most d from now.
	Requeue func(d time.Duration)
}

// releaseSpec is one desired release.
type Spec struct {
	Name, Namespace string
	Install         *chart.Chart // what Helm installs: the chart without its CRDs
	Values          map[string]any
}

// Reconcile brings one release to its spec: releaseState decides
// from the records, the spec and the status, and one action acts. Installs
// and upgrades do not wait inside Helm: readiness comes from the cached
// workloads, so a reconcile never blocks on polling. An upgrade that fails,
// or does not become ready within UpgradeTimeout, is rolled back to the
// last deployed revision and its version is not retried until the spec
// changes; one whose rollback would re-enter a namespace the tenant is
// leaving is run again instead, after a backoff.
func (c *Reconciler) Reconcile(ctx context.Context, req Request) error {
	t, spec, st := req.Tenant, req.Spec, req.Status
	unlock := c.Helm.lock(spec.Namespace, spec.Name)
	defer unlock()
	cfg, err := c.Helm.action(t.Name, spec.Namespace)
	if err != nil {
		return err
	}
	// Whatever revision Helm installs, upgrades or rolls back to, its
	// webhook configurations are narrowed to the tenant (webhooks.go).
	if k, ok := cfg.KubeClient.(*releaseKube); ok {
		k.narrow = req.Scope.Namespaces
	}
	// Records of an older controller can be in the release namespace only
	// when it installed there (a revision in the status) or the namespace
	// was adopted; a namespace this controller made needs no look, nor
	// does a release this process installed (helmClient.noLegacy). They
	// are deleted unread (legacy.go).
	if st.Revision > 0 || t.Spec.AdoptNamespaces {
		if err := c.dropLegacy(ctx, t, spec.Namespace, spec.Name); err != nil {
			return err
		}
	}
	r := &releaseRun{ctx: ctx, t: t, cfg: cfg, spec: spec, st: st, labels: req.Labels, requeue: req.Requeue, scope: req.Scope}
	for recovered := false; ; recovered = true {
		if err := r.observe(c.UpgradeTimeout); err != nil {
			return err
		}
		c.sweep(r)
		c.prune(r)
		phase := releaseState(r.facts)
		if phase == releaseInSync {
			st.Revision, st.Chart = r.facts.deployed.Version, r.facts.deployed.Chart.Metadata.Name
			if err := c.correctDrift(r, r.facts.deployed, spec.Namespace, req.DriftIgnore); err != nil {
				return err
			}
			r.facts.health = c.health(ctx, spec)
			phase = releaseState(r.facts)
		}
		log.FromContext(ctx).V(1).Info("release", "name", spec.Namespace+"/"+spec.Name, "phase", phase.String())
		if phase == releaseStuckPending {
			if recovered {
				return fmt.Errorf("revision %d of %s is still pending after recovery", r.facts.current.Version, spec.Name)
			}
			if err := c.recoverRelease(r); err != nil {
				return err
			}
			continue
		}
		if act, ok := releaseActions[phase]; ok {
			return act(c, r)
		}
		return fmt.Errorf("release %s: no action for phase %s", spec.Name, phase)
	}
}

// releaseActions is the action for each phase that ends a reconcile.
var releaseActions = map[releasePhase]func(*Reconciler, *releaseRun) error{
	releaseAbsent:        (*Reconciler).installRelease,
	releaseFailed:        (*Reconciler).rollbackFailed,
	releaseFailedLeaving: (*Reconciler).retryUpgrade,
	releaseHeld:          (*Reconciler).holdRelease,
	releaseOutOfSync:     (*Reconciler).upgradeRelease,
	releaseProgressing:   (*Reconciler).awaitRelease,
	releaseTimedOut:      (*Reconciler).timedOutRelease,
	releaseReady:         (*Reconciler).readyRelease,
}

// sweep deletes, once per revision deployed last, what the release's
// earlier revisions left (deleteLeftovers): an upgrade that failed and
// whose rollback failed too leaves its objects behind the revision a
// later rollback deploys. Until it succeeds, every stored revision holds
// the namespaces it names (Holds); a failure is logged and tried again at
// the next reconcile, without stopping this one.
func (c *Reconciler) sweep(r *releaseRun) {
	cur, deployed := r.facts.current, r.facts.deployed
	if cur == nil || deployed == nil || cur.Version != deployed.Version || c.swept.done(r.t.Name, r.spec.Namespace, r.spec.Name, cur.Version) {
		return
	}
	hist, err := c.history(r.t.Name, r.spec.Namespace, r.spec.Name)
	if err == nil {
		earlier := slices.DeleteFunc(hist, func(rel *release.Release) bool { return rel.Version == cur.Version })
		err = c.Helm.deleteLeftovers(r.cfg, r.spec.Name, cur, earlier)
	}
	if err != nil {
		log.FromContext(r.ctx).Info("deleting what earlier revisions left", "release", r.spec.Namespace+"/"+r.spec.Name, "error", operatorkit.BoundText(err.Error()))
		return
	}
	c.swept.mark(r.t.Name, r.spec.Namespace, r.spec.Name, cur.Version)
}

// dropLegacy deletes, unread, the Helm records of a release in its
// namespace, and says so in an Event.
func (c *Reconciler) dropLegacy(ctx context.Context, t *tenancyv1.Tenant, ns, name string) error {
	dropped, err := c.Helm.dropLegacy(ctx, t.Name, ns, name)
	if len(dropped) > 0 {
		c.event(t, "Normal", "ReleaseRecordsDropped", "deleted, unread, the Helm records %s of release %s in namespace %s: the controller keeps its own and installs over the release's objects", strings.Join(dropped, ", "), name, ns)
	}
	return err
}

// refused runs the tamper check on revisions before Helm acts on them:
// stop when they name objects outside the tenant or grant what the
// platform does not allow (reported on st), an error when the cluster
// could not be read (retried).
func (c *Reconciler) refused(ctx context.Context, t *tenancyv1.Tenant, st *tenancyv1.OperatorStatus, scope guard.ReleaseScope, revisions ...*release.Release) (stop bool, err error) {
	return c.refusal(t, st, scope.Verify(ctx, revisions...))
}

// refusedApply is refused of a revision Helm applies again.
func (c *Reconciler) refusedApply(ctx context.Context, t *tenancyv1.Tenant, st *tenancyv1.OperatorStatus, scope guard.ReleaseScope, rel *release.Release) (stop bool, err error) {
	return c.refusal(t, st, scope.VerifyApply(ctx, rel))
}

func (c *Reconciler) refusal(t *tenancyv1.Tenant, st *tenancyv1.OperatorStatus, err error) (stop bool, _ error) {
	if c.tampered(t, st, err) {
		return true, nil
	}
	return false, err
}

// tampered reports a TamperError or a GrantError on st and in an Event,
// and whether err was one. The release is left as it is until its record
// or chart, or the platform's allow-list, changes.
func (c *Reconciler) tampered(t *tenancyv1.Tenant, st *tenancyv1.OperatorStatus, err error) bool {
	var te *guard.TamperError
	var ge *guard.GrantError
	reason := tenancyv1.ReasonReleaseTampered
	switch {
	case errors.As(err, &te):
	case errors.As(err, &ge):
		reason = tenancyv1.ReasonClusterRightsRefused
	default:
		return false
	}
	st.Health, st.Reason, st.LastError = tenancyv1.HealthFailed, reason, err.Error()
	releaseOps.WithLabelValues("verify", "refused").Inc()
	c.event(t, "Warning", reason, "%s", err.Error())
	return true
}

// interrupted reports whether rel is a revision markFailed recovered.
func interrupted(rel *release.Release) bool {
	return strings.HasPrefix(rel.Info.Description, interruptedPrefix)
}

// health is Ready when every Deployment and StatefulSet of the release
// runs its current revision with all replicas ready.
func (c *Reconciler) health(ctx context.Context, spec Spec) string {
	sel := client.MatchingLabels{guard.HelmInstance: spec.Name}
	var deps appsv1.DeploymentList
	if err := c.Owned.List(ctx, &deps, client.InNamespace(spec.Namespace), sel); err != nil {
		return tenancyv1.HealthProgressing
	}
	if len(deps.Items) == 0 {
		return tenancyv1.HealthProgressing
	}
	for i := range deps.Items {
		if !RolledOut(&deps.Items[i]) {
			return tenancyv1.HealthProgressing
		}
	}
	return tenancyv1.HealthReady
}

// replicaFailure quotes why the API server refuses the pods of the
// release's Deployments (their ReplicaFailure condition: quota,
// LimitRange, Pod Security), "" when it does not.
func (c *Reconciler) replicaFailure(ctx context.Context, spec Spec) string {
	var deps appsv1.DeploymentList
	if err := c.Owned.List(ctx, &deps, client.InNamespace(spec.Namespace), client.MatchingLabels{guard.HelmInstance: spec.Name}); err != nil {
		return ""
	}
	for _, d := range deps.Items {
		for _, cond := range d.Status.Conditions {
			if cond.Type == appsv1.DeploymentReplicaFailure && cond.Status == corev1.ConditionTrue {
				return fmt.Sprintf("the pods of Deployment %s are refused: %s", d.Name, cond.Message)
			}
		}
	}
	return ""
}

// RolledOut is `kubectl rollout status`: every replica updated and
// available, and no old replica left.
func RolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas >= want && st.Replicas <= st.UpdatedReplicas && st.AvailableReplicas >= st.UpdatedReplicas
}

// valuesDigest is the sha256 of release values as JSON (encoding/json
// sorts map keys), the form sameValues compares; "" when they do not
// encode.
func valuesDigest(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sameValues compares release values through JSON, as Helm stores them.
func sameValues(a, b map[string]any) bool {
	x := valuesDigest(a)
	return x != "" && x == valuesDigest(b)
}

// timed runs a Helm action and records its count and duration.
func (c *Reconciler) timed(op string, f func() (*release.Release, error)) (*release.Release, error) {
	start := time.Now()
	rel, err := f()
	result := "ok"
	if err != nil {
		result = "error"
	}
	releaseOps.WithLabelValues(op, result).Inc()
	releaseDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	return rel, err
}

func (c *Reconciler) event(t *tenancyv1.Tenant, typ, reason, format string, args ...any) {
	if c.Recorder != nil {
		c.Recorder.Eventf(t, nil, typ, reason, reason, "%s", operatorkit.BoundText(fmt.Sprintf(format, args...)))
	}
}

// HandBack moves the records of each release back to the namespace it is
// recorded for: the owners take the releases over.
func (c *Reconciler) HandBack(t *tenancyv1.Tenant, recorded []records.Recorded) error {
	for _, r := range recorded {
		// A release of the same name installed later starts a history
		// the memos know nothing of.
		c.swept.forget(t.Name, r.Namespace, r.Name)
		c.pruned.forget(t.Name, r.Namespace, r.Name)
		moved, err := c.Helm.handBack(t.Name, r.Namespace, r.Name)
		if err != nil {
			return err
		}
		if len(moved) > 0 {
			c.event(t, "Normal", "ReleaseRecordsHandedBack", "moved the records of release %s (revisions %v) back to namespace %s", r.Name, moved, r.Namespace)
		}
	}
	return nil
}

// Uninstall removes a release whose last revision, in the controller's
// storage, names only the tenant's objects; its legacy records in the
// namespace are deleted unread.
func (c *Reconciler) Uninstall(ctx context.Context, t *tenancyv1.Tenant, ns, name string, scope guard.ReleaseScope) error {
	unlock := c.Helm.lock(ns, name)
	defer unlock()
	cfg, err := c.Helm.action(t.Name, ns)
	if err != nil {
		return err
	}
	// What earlier revisions left is kept, where Helm kept it, only in
	// the namespaces the tenant keeps (releaseKube.keepLive).
	if k, ok := cfg.KubeClient.(*releaseKube); ok {
		k.narrow = scope.Namespaces
	}
	if err := c.dropLegacy(ctx, t, ns, name); err != nil {
		return err
	}
	rel, err := last(cfg, name)
	if err != nil || rel == nil {
		return err
	}
	// Helm's uninstall deletes what the last revision names; after a
	// failed upgrade, the deployed revision's objects that it does not
	// name (a ClusterRoleBinding the narrower render dropped) are still
	// there, and go first.
	// So do the objects of earlier revisions still there: an upgrade that
	// failed, and whose rollback failed too, before the revision deployed
	// since. Those the tamper check cannot judge (a namespace handed back
	// since) are deleted as the actor, who holds nothing outside the
	// tenant, and only where marked as the release's.
	hist, err := c.history(t.Name, ns, name)
	if err != nil {
		return err
	}
	notLast := func(revs []*release.Release) []*release.Release {
		return slices.DeleteFunc(slices.Clone(revs), func(r *release.Release) bool { return r.Version == rel.Version })
	}
	live, earlier := notLast(liveRevisions(hist)), notLast(hist)
	if err := scope.Verify(ctx, append([]*release.Release{rel}, live...)...); err != nil {
		reason := tenancyv1.ReasonReleaseTampered
		if ge := (*guard.GrantError)(nil); errors.As(err, &ge) {
			reason = tenancyv1.ReasonClusterRightsRefused
		}
		c.event(t, "Warning", reason, "%v", err)
		return operatorkit.WithReason(reason, err)
	}
	if err := c.Helm.deleteLeftovers(cfg, name, rel, earlier); err != nil {
		return fmt.Errorf("uninstalling %s from %s: %w", name, ns, err)
	}
	if _, err := c.timed("uninstall", func() (*release.Release, error) { return nil, c.Helm.uninstall(cfg, name) }); err != nil {
		return fmt.Errorf("uninstalling %s from %s: %w", name, ns, err)
	}
	c.swept.forget(t.Name, ns, name)
	c.pruned.forget(t.Name, ns, name)
	c.event(t, "Normal", "Uninstalled", "uninstalled %s from %s", name, ns)
	return nil
}

// actorForbidden adds to an error of a Helm action what the actor holds
// when the API server refused it something: the release needs more than
// the tenant holds in its namespaces.
func (c *Reconciler) actorForbidden(tenant string, err error) error {
	if err == nil || !apierrors.IsForbidden(err) {
		return err
	}
	return fmt.Errorf("%w (the release acts as tenant %s's actor, %s, which holds in the tenant's namespaces what the owners hold (admin), "+
		"the operator's own kinds and the ClusterRoles the platform names; for more, the platform team names a ClusterRole in the TenantProfile's spec.clusterRoles)",
		err, tenant, c.ActorName(tenant))
}
