package tenancy

import (
	"context"
	"errors"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/policy"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

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
		if err := policy.ConversionWebhook(op.analysis.CRDs); err != nil {
			st.Health, st.LastError, st.Reason = tenancyv1.HealthFailed, err.Error(), tenancyv1.ReasonConversionWebhook
			c.event(t, "Warning", tenancyv1.ReasonConversionWebhook, "operator %s: %v", op.spec.Name, err)
			statuses[i] = st
			continue
		}
		if err := guard.GroupsReserved(ctx, c.client, c.discovery, op.analysis.CRDs); operatorkit.IsTerminal(err) {
			st.Health, st.LastError, st.Reason = tenancyv1.HealthFailed, err.Error(), tenancyv1.ReasonCRDGroupReserved
			c.event(t, "Warning", tenancyv1.ReasonCRDGroupReserved, "operator %s: %v", op.spec.Name, err)
			statuses[i] = st
			continue
		} else if err != nil {
			st.Health, st.LastError, st.Reason = tenancyv1.HealthFailed, err.Error(), tenancyv1.ReasonInstallFailed
			errs = append(errs, err)
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
			if err = guard.CRDSkew(ctx, c.client, op.analysis.CRDs, c.storedObjects()); err == nil {
				var missing []*apiextensionsv1.CustomResourceDefinition
				if missing, err = guard.AbsentCRDs(ctx, c.client, op.analysis.CRDs); err == nil && len(missing) > 0 {
					applied, err = guard.EnsureCRDs(ctx, c.client, c.served, FieldManager, missing, c.storedObjects())
				}
			}
		} else {
			applied, err = guard.EnsureCRDs(ctx, c.client, c.served, FieldManager, op.analysis.CRDs, c.storedObjects())
		}
		var skew *guard.SkewError
		switch {
		case errors.As(err, &skew):
			st.Health, st.LastError, st.Reason = tenancyv1.HealthFailed, err.Error(), tenancyv1.ReasonCRDSkew
			c.event(t, "Warning", tenancyv1.ReasonCRDSkew, "operator %s: %v", op.spec.Name, err)
		case operatorkit.IsTerminal(err):
			st.Health, st.LastError, st.Reason = tenancyv1.HealthFailed, err.Error(), tenancyv1.ReasonCRDNotShared
			c.event(t, "Warning", tenancyv1.ReasonCRDNotShared, "operator %s: %v", op.spec.Name, err)
		case err != nil:
			st.Health, st.LastError, st.Reason = tenancyv1.HealthFailed, err.Error(), tenancyv1.ReasonInstallFailed
			errs = append(errs, err)
		default:
			crdsOK[i] = true
			if len(applied) > 0 {
				c.helm.CrdsApplied()
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
	moving, removing := c.moveReleases(ctx, t, p)
	if moving != nil {
		errs = append(errs, moving)
		counted = false // nothing installs over the old release's objects
	}
	if removing != nil {
		errs = append(errs, removing)
	}
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
	if len(errs) == 0 {
		if err := c.releaseLeaving(ctx, t, p); err != nil {
			errs = append(errs, err)
		}
	}
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

func (c *Controller) event(t *tenancyv1.Tenant, typ, reason, format string, args ...any) {
	tenantEvents{c.recorder}.event(t, typ, reason, format, args...)
}
