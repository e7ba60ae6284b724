package tenancy

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/tools/events"
	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Status reports the namespaces' quotas and turns the operators' health
// into the Tenant's conditions.
func (c *Controller) Status(ctx context.Context, t *tenancyv1.Tenant, p *plan, _ []operatorkit.ApplyResult) (operatorkit.Observation, error) {
	var syncing []string
	t.Status.Namespaces, syncing = c.quotaStatus(ctx, t, p)
	obs := operatorkit.Observation{Ready: true, Available: true, Reason: "Provisioned",
		Message: fmt.Sprintf("%d namespaces and %d operators ready", len(t.Spec.Namespaces), len(t.Spec.Operators))}
	if p != nil {
		obs.RequeueAfter = p.requeue
	}
	progressing := 0
	for _, st := range t.Status.Operators {
		health := st.Health
		if st.Reason != "" {
			health = tenancyv1.HealthFailed
		}
		switch health {
		case tenancyv1.HealthReady:
		case tenancyv1.HealthFailed:
			obs.Ready = false
			if obs.Degraded == nil {
				obs.Degraded = failure(st)
				obs.Reason, obs.Message = obs.Degraded.Reason, obs.Degraded.Message
			}
			if st.ChartVersion == "" || st.Health != tenancyv1.HealthReady {
				obs.Available = false
			}
		default:
			obs.Ready = false
			progressing++
			if obs.Degraded == nil {
				obs.Reason, obs.Message = "Installing", fmt.Sprintf("operator %s %s is rolling out", st.Name, st.TargetVersion)
				if st.LastError != "" {
					obs.Message += ": " + st.LastError
				}
			}
		}
	}
	obs.Progressing = progressing > 0
	if len(syncing) > 0 && obs.Degraded == nil {
		obs.Ready, obs.Progressing, obs.Reason = false, true, "QuotaSyncing"
		obs.Message = fmt.Sprintf("the quota controller has not counted the quota of %s yet", strings.Join(syncing, ", "))
	}
	if len(t.Status.Operators) < len(t.Spec.Operators) && obs.Degraded == nil {
		obs.Ready, obs.Progressing, obs.Reason, obs.Message = false, true, "Installing", "operators are being installed"
	}
	return obs, nil
}

// failure describes a failed operator as a Degraded problem. A rolled
// back version and a refused CRD wait for a spec change: Stalled.
func failure(st tenancyv1.OperatorStatus) *operatorkit.Problem {
	switch st.Reason {
	case tenancyv1.ReasonUpgradeFailed:
		return &operatorkit.Problem{Reason: st.Reason, Message: fmt.Sprintf("operator %s: %s; running %s", st.Name, st.LastError, st.ChartVersion), Stalled: true}
	case tenancyv1.ReasonCRDSkew, tenancyv1.ReasonConversionWebhook, tenancyv1.ReasonOperatorGroupConflict, tenancyv1.ReasonTooManyOperatorGroups, tenancyv1.ReasonReleaseTampered,
		tenancyv1.ReasonClusterRightsRefused, tenancyv1.ReasonCRDNotShared, tenancyv1.ReasonCRDGroupReserved, tenancyv1.ReasonCRDMetadataReserved, tenancyv1.ReasonPlanChanged:
		return &operatorkit.Problem{Reason: st.Reason, Message: fmt.Sprintf("operator %s: %s", st.Name, st.LastError), Stalled: true}
	}
	return &operatorkit.Problem{Reason: tenancyv1.ReasonInstallFailed, Message: fmt.Sprintf("operator %s: %s", st.Name, st.LastError)}
}

// tenantEvents records the Events of Tenants, their messages bounded.
type tenantEvents struct{ recorder events.EventRecorder }

func (e tenantEvents) event(t *tenancyv1.Tenant, typ, reason, format string, args ...any) {
	if e.recorder != nil {
		e.recorder.Eventf(t, nil, typ, reason, reason, "%s", operatorkit.BoundText(fmt.Sprintf(format, args...)))
	}
}
