package tenancy

import (
	"context"
	"fmt"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// olmStatus maps the Subscription, the installed CSV and the InstallPlan
// that installed it (or the Subscription's latest one).
func (c *olmBackend) olmStatus(ctx context.Context, sub *operatorsv1alpha1.Subscription, plans []operatorsv1alpha1.InstallPlan, op operatorPlan, st *tenancyv1.OperatorStatus) {
	s := st.OLM
	s.CSV, s.Phase, s.Version, s.InstallPlan, s.InstallPlanPhase = sub.Status.InstalledCSV, "", "", "", ""
	if sub.Status.InstallPlanRef != nil {
		s.InstallPlan = sub.Status.InstallPlanRef.Name
	}
	for _, plan := range plans {
		if s.CSV != "" && plan.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete && slices.Contains(plan.Spec.ClusterServiceVersionNames, s.CSV) {
			s.InstallPlan = plan.Name
		}
	}
	if st.Reason == "" {
		st.LastError = "" // what OLM says now, below
	}
	for _, plan := range plans {
		if plan.Name == s.InstallPlan {
			s.InstallPlanPhase = string(plan.Status.Phase)
			// OLM retries a plan it cannot execute (a Forbidden step, for
			// ever) and says why only here.
			if plan.Status.Phase == operatorsv1alpha1.InstallPlanPhaseInstalling && plan.Status.Message != "" && st.Reason == "" {
				st.LastError = operatorkit.BoundText(fmt.Sprintf("InstallPlan %s: %s", plan.Name, plan.Status.Message))
			}
		}
	}
	want := op.detail.(*olmPlan).target
	st.TargetVersion = want.Version
	st.Health = tenancyv1.HealthProgressing
	if s.CSV == "" {
		return
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: sub.Namespace, Name: s.CSV}, csv); err != nil {
		return
	}
	s.Phase, s.Version = string(csv.Status.Phase), csv.Spec.Version.String()
	switch csv.Status.Phase {
	case operatorsv1alpha1.CSVPhasePending:
		// RequirementsNotMet: what the CSV still waits for.
		if st.Reason == "" && st.LastError == "" && csv.Status.Message != "" {
			st.LastError = operatorkit.BoundText(fmt.Sprintf("CSV %s Pending (%s): %s", s.CSV, csv.Status.Reason, csv.Status.Message))
		}
	case operatorsv1alpha1.CSVPhaseSucceeded:
		st.ChartVersion = s.Version
		if err := c.shareCRDs(ctx, op); err != nil {
			st.LastError = err.Error()
		}
		if s.CSV == want.CSVName {
			st.Health, st.TargetVersion, st.Reason, st.LastError = tenancyv1.HealthReady, "", "", ""
		}
	case operatorsv1alpha1.CSVPhaseFailed:
		st.Health, st.Reason = tenancyv1.HealthFailed, tenancyv1.ReasonInstallFailed
		if csv.Status.Reason == operatorsv1alpha1.CSVReasonInterOperatorGroupOwnerConflict {
			st.Reason = tenancyv1.ReasonOperatorGroupConflict
		}
		st.LastError = fmt.Sprintf("CSV %s failed: %s", s.CSV, csv.Status.Message)
	}
}

// shareCRDs labels shared again the CRDs of an installed bundle that OLM
// replaced, labels included: they keep being shared once the tenants it
// installed them for are gone (isShared reads OLM's marks only while
// their namespaces exist).
func (c *olmBackend) shareCRDs(ctx context.Context, op operatorPlan) error {
	if op.analysis == nil {
		return nil
	}
	for _, crd := range op.analysis.CRDs {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := c.client.Get(ctx, client.ObjectKey{Name: crd.Name}, m); err != nil {
			continue // not installed yet, or gone
		}
		if m.Labels[tenancyv1.LabelSharedCRD] == "true" {
			continue
		}
		if shared, err := guard.IsShared(ctx, c.client, m); err != nil || !shared {
			continue
		}
		patch := client.MergeFrom(m.DeepCopy())
		m.Labels[tenancyv1.LabelSharedCRD] = "true"
		if err := c.client.Patch(ctx, m, patch); err != nil {
			return fmt.Errorf("labelling CRD %s shared again after OLM installed it: %w", crd.Name, err)
		}
	}
	return nil
}
