package tenancy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// Health values of an operator instance.
const (
	HealthReady       = "Ready"
	HealthProgressing = "Progressing"
	HealthFailed      = "Failed"
)

// releaseSpec is one desired release.
type releaseSpec struct {
	Name, Namespace string
	Install         *chart.Chart // what Helm installs: the chart without its CRDs
	Values          map[string]any
}

// Repair runs after the namespaces and their objects are applied: it
// applies the shared CRDs, then has each operator's backend bring it to
// its plan.
func (c *Controller) Repair(ctx context.Context, t *tenancyv1.Tenant, p *plan, _ []operatorkit.ApplyResult) error {
	if p == nil {
		return nil
	}
	ns := t.Spec.Namespaces[0]
	statuses := make([]tenancyv1.OperatorStatus, len(p.operators))
	crdsOK := make([]bool, len(p.operators))
	var errs []error
	for i, op := range p.operators {
		st := operatorStatus(t, op.spec.Name)
		if !op.backend.installed(st) { // the source changed
			st.OLM, st.Bundle = nil, nil
		}
		if op.analysis == nil { // a catalog not readable yet
			statuses[i], crdsOK[i] = st, true
			continue
		}
		st.CRDs = crdNames(op.analysis)
		if err := guard.ConversionWebhook(op.analysis.CRDs); err != nil {
			st.Health, st.LastError, st.Reason = HealthFailed, err.Error(), tenancyv1.ReasonConversionWebhook
			c.event(t, "Warning", tenancyv1.ReasonConversionWebhook, "operator %s: %v", op.spec.Name, err)
			statuses[i] = st
			continue
		}
		var applied []string
		var err error
		if _, viaOLM := op.backend.(*olmBackend); viaOLM {
			// OLM installs a bundle's CRDs, replacing what the controller
			// wrote: the controller applies them before approving
			// (guardPlan), not on every pass, which would fight OLM; here
			// it guards the skew and creates the missing ones, which the
			// quota counts before anything is subscribed.
			if err = guard.CRDSkew(ctx, c.client, op.analysis.CRDs); err == nil {
				var missing []*apiextensionsv1.CustomResourceDefinition
				if missing, err = guard.AbsentCRDs(ctx, c.client, op.analysis.CRDs); err == nil && len(missing) > 0 {
					applied, err = guard.EnsureCRDs(ctx, c.client, c.served, FieldManager, missing)
				}
			}
		} else {
			applied, err = guard.EnsureCRDs(ctx, c.client, c.served, FieldManager, op.analysis.CRDs)
		}
		var skew *guard.SkewError
		switch {
		case errors.As(err, &skew):
			st.Health, st.LastError, st.Reason = HealthFailed, err.Error(), tenancyv1.ReasonCRDSkew
			c.event(t, "Warning", tenancyv1.ReasonCRDSkew, "operator %s: %v", op.spec.Name, err)
		case operatorkit.IsTerminal(err):
			st.Health, st.LastError, st.Reason = HealthFailed, err.Error(), tenancyv1.ReasonCRDNotShared
			c.event(t, "Warning", tenancyv1.ReasonCRDNotShared, "operator %s: %v", op.spec.Name, err)
		case err != nil:
			st.Health, st.LastError, st.Reason = HealthFailed, err.Error(), tenancyv1.ReasonInstallFailed
			errs = append(errs, err)
		default:
			crdsOK[i] = true
			if len(applied) > 0 {
				c.helm.crdsApplied()
				c.event(t, "Normal", "CRDApplied", "operator %s: applied CRDs %v", op.spec.Name, applied)
				if err := c.applyKinds(ctx, p); err != nil {
					errs = append(errs, err)
				}
			}
		}
		statuses[i] = st
	}
	// Until the quota controller has counted the namespace's quota (which
	// counts the CRDs' objects, so after they exist), the API server
	// refuses the pods a release would create and their ReplicaSet backs
	// off for a long time: install once it has. The quota's status update
	// brings the next reconcile.
	q := &corev1.ResourceQuota{}
	counted := c.getOwned(ctx, client.ObjectKey{Namespace: ns, Name: QuotaName}, q) == nil && quotaCounted(q)
	for i, op := range p.operators {
		if !crdsOK[i] || !counted {
			continue
		}
		if err := op.backend.reconcile(ctx, p, op, &statuses[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.guardScale(ctx, p); err != nil {
		errs = append(errs, err)
	}
	sort.Slice(statuses, func(i, j int) bool { return statuses[i].Name < statuses[j].Name })
	for i := range statuses {
		statuses[i].LastError = operatorkit.BoundText(statuses[i].LastError)
	}
	t.Status.Operators = statuses
	return errors.Join(errs...)
}

func operatorStatus(t *tenancyv1.Tenant, name string) tenancyv1.OperatorStatus {
	for _, s := range t.Status.Operators {
		if s.Name == name {
			return *s.DeepCopy()
		}
	}
	return tenancyv1.OperatorStatus{Name: name}
}

func crdNames(a *quota.Analysis) []string {
	var names []string
	for _, crd := range a.CRDs {
		names = append(names, crd.Name)
	}
	return names
}

// reconcileRelease brings one release to its spec: releaseState decides
// from the records, the spec and the status, and one action acts. Installs
// and upgrades do not wait inside Helm: readiness comes from the cached
// workloads, so a reconcile never blocks on polling. An upgrade that fails,
// or does not become ready within UpgradeTimeout, is rolled back to the
// last deployed revision and its version is not retried until the spec
// changes.
func (c *Controller) reconcileRelease(ctx context.Context, t *tenancyv1.Tenant, spec releaseSpec, st *tenancyv1.OperatorStatus, p *plan) error {
	unlock := c.helm.lock(spec.Namespace, spec.Name)
	defer unlock()
	cfg, err := c.helm.action(t.Name, spec.Namespace)
	if err != nil {
		return err
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
	r := &releaseRun{ctx: ctx, t: t, cfg: cfg, spec: spec, st: st, p: p, scope: c.scope(t, spec.Namespace, spec.Name, p)}
	for recovered := false; ; recovered = true {
		if err := r.observe(c.opts.UpgradeTimeout); err != nil {
			return err
		}
		phase := releaseState(r.facts)
		if phase == releaseInSync {
			st.Revision, st.Chart = r.facts.deployed.Version, r.facts.deployed.Chart.Metadata.Name
			if err := c.correctDrift(ctx, p, r.facts.deployed, spec.Namespace, driftIgnore(t, spec.Name)); err != nil {
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
var releaseActions = map[releasePhase]func(*Controller, *releaseRun) error{
	releaseAbsent:      (*Controller).installRelease,
	releaseFailed:      (*Controller).rollbackFailed,
	releaseHeld:        (*Controller).holdRelease,
	releaseOutOfSync:   (*Controller).upgradeRelease,
	releaseProgressing: (*Controller).awaitRelease,
	releaseTimedOut:    (*Controller).timedOutRelease,
	releaseReady:       (*Controller).readyRelease,
}

// dropLegacy deletes, unread, the Helm records of a release in its
// namespace, and says so in an Event.
func (c *Controller) dropLegacy(ctx context.Context, t *tenancyv1.Tenant, ns, name string) error {
	dropped, err := c.helm.dropLegacy(ctx, t.Name, ns, name)
	if len(dropped) > 0 {
		c.event(t, "Normal", "ReleaseRecordsDropped", "deleted, unread, the Helm records %s of release %s in namespace %s: the controller keeps its own and installs over the release's objects", strings.Join(dropped, ", "), name, ns)
	}
	return err
}

// scope is what the release name of t in ns may touch, and grant outside
// its namespaces: the ClusterRoles p allows (nil: the controller's only)
// and get on the operator's own CRDs.
func (c *Controller) scope(t *tenancyv1.Tenant, ns, name string, p *plan) guard.ReleaseScope {
	g := guard.GrantPolicy{Roles: c.opts.ClusterRoles, Namespaces: t.Spec.Namespaces, Reader: c.reader, Mapper: c.helm.mapper}
	if p != nil {
		g.Roles, g.Exposure = p.settings.ClusterRoles, p.settings.Services
		g.Tenant, g.LockNetworkPolicies = t.Name, p.settings.LockNetworkPolicies
		for _, op := range p.operators {
			if op.spec.Name == name && op.analysis != nil {
				g.Crds = crdNames(op.analysis)
				crds := op.analysis.CRDs
				g.Kinds = func(ctx context.Context) ([]string, error) { return guard.OwnKinds(ctx, c.reader, crds) }
			}
		}
	}
	return guard.ReleaseScope{Tenant: t.Name, Release: name, Namespace: ns, Namespaces: t.Spec.Namespaces, Mapper: c.helm.mapper, Reader: c.reader, Grants: g}
}

// refused runs the tamper check on revisions before Helm acts on them:
// stop when they name objects outside the tenant or grant what the
// platform does not allow (reported on st), an error when the cluster
// could not be read (retried).
func (c *Controller) refused(ctx context.Context, t *tenancyv1.Tenant, st *tenancyv1.OperatorStatus, scope guard.ReleaseScope, revisions ...*release.Release) (stop bool, err error) {
	return c.refusal(t, st, scope.Verify(ctx, revisions...))
}

// refusedApply is refused of a revision Helm applies again.
func (c *Controller) refusedApply(ctx context.Context, t *tenancyv1.Tenant, st *tenancyv1.OperatorStatus, scope guard.ReleaseScope, rel *release.Release) (stop bool, err error) {
	return c.refusal(t, st, scope.VerifyApply(ctx, rel))
}

func (c *Controller) refusal(t *tenancyv1.Tenant, st *tenancyv1.OperatorStatus, err error) (stop bool, _ error) {
	if c.tampered(t, st, err) {
		return true, nil
	}
	return false, err
}

// tampered reports a TamperError or a GrantError on st and in an Event,
// and whether err was one. The release is left as it is until its record
// or chart, or the platform's allow-list, changes.
func (c *Controller) tampered(t *tenancyv1.Tenant, st *tenancyv1.OperatorStatus, err error) bool {
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
	st.Health, st.Reason, st.LastError = HealthFailed, reason, err.Error()
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
func (c *Controller) health(ctx context.Context, spec releaseSpec) string {
	sel := client.MatchingLabels{helmInstance: spec.Name}
	var deps appsv1.DeploymentList
	if err := c.listOwned(ctx, &deps, client.InNamespace(spec.Namespace), sel); err != nil {
		return HealthProgressing
	}
	if len(deps.Items) == 0 {
		return HealthProgressing
	}
	for i := range deps.Items {
		if !rolledOut(&deps.Items[i]) {
			return HealthProgressing
		}
	}
	return HealthReady
}

// rolledOut is `kubectl rollout status`: every replica updated and
// available, and no old replica left.
func rolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas >= want && st.Replicas <= st.UpdatedReplicas && st.AvailableReplicas >= st.UpdatedReplicas
}

// sameValues compares release values through JSON, as Helm stores them.
func sameValues(a, b map[string]any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var u, v any
	_ = json.Unmarshal(x, &u)
	_ = json.Unmarshal(y, &v)
	return reflect.DeepEqual(u, v)
}

// driftIgnore is the ignore rules of t's operator whose release is name.
func driftIgnore(t *tenancyv1.Tenant, name string) []tenancyv1.DriftIgnoreRule {
	for _, op := range t.Spec.Operators {
		if op.Name == name {
			return op.DriftIgnore
		}
	}
	return nil
}

func (p *plan) requeueAtMost(d time.Duration) {
	if d < time.Second {
		d = time.Second
	}
	if p.requeue == 0 || d < p.requeue {
		p.requeue = d
	}
}

// timed runs a Helm action and records its count and duration.
func (c *Controller) timed(op string, f func() (*release.Release, error)) (*release.Release, error) {
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

func (c *Controller) event(t *tenancyv1.Tenant, typ, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(t, nil, typ, reason, reason, "%s", operatorkit.BoundText(fmt.Sprintf(format, args...)))
	}
}
