package operatorkit

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types written by operatorkit.
const (
	// ConditionReady is True when the application serves as specified.
	ConditionReady = "Ready"
	// ConditionProgressing is True while a change rolls out.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when something needs attention.
	ConditionDegraded = "Degraded"
	// ConditionLifecycle carries the lifecycle phase as its reason; it is
	// False when a requested transition was refused.
	ConditionLifecycle = "Lifecycle"
	// ConditionReconciling mirrors Progressing for kstatus (abnormal-true:
	// present only while True).
	ConditionReconciling = "Reconciling"
	// ConditionStalled marks a problem retrying cannot fix, for kstatus
	// (abnormal-true: present only while True).
	ConditionStalled = "Stalled"
)

// Reasons operatorkit uses.
const (
	ReasonAsExpected         = "AsExpected"
	ReasonReconcileFailed    = "ReconcileFailed"
	ReasonRetrying           = "RetryingAfterError"
	ReasonOwnershipConflict  = "OwnershipConflict"
	ReasonTransitionRefused  = "TransitionRefused"
	ReasonDeleting           = "Deleting"
	ReasonProgressingDefault = "Progressing"
	ReasonReady              = "Ready"
)

// setCondition sets one condition for generation gen, keeping the
// transition time when the status does not change.
func setCondition(s *Status, typ string, status metav1.ConditionStatus, reason, message string, gen int64) {
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: gen,
	})
}

// setAbnormal sets an abnormal-true condition when on and removes it when
// off, as kstatus expects of Reconciling and Stalled.
func setAbnormal(s *Status, typ string, on bool, reason, message string, gen int64) {
	if !on {
		meta.RemoveStatusCondition(&s.Conditions, typ)
		return
	}
	setCondition(s, typ, metav1.ConditionTrue, reason, message, gen)
}

func boolStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// applyObservation writes the Ready, Progressing, Degraded, Reconciling and
// Stalled conditions from o for generation gen.
func applyObservation(s *Status, o Observation, gen int64) {
	reason, msg := o.Reason, o.Message
	if reason == "" {
		reason = ReasonAsExpected
		if o.Ready {
			reason = ReasonReady
		} else if o.Progressing {
			reason = ReasonProgressingDefault
		}
	}
	setCondition(s, ConditionReady, boolStatus(o.Ready), reason, msg, gen)
	if o.Progressing {
		setCondition(s, ConditionProgressing, metav1.ConditionTrue, reason, msg, gen)
	} else {
		setCondition(s, ConditionProgressing, metav1.ConditionFalse, ReasonAsExpected, "", gen)
	}
	setAbnormal(s, ConditionReconciling, o.Progressing, reason, msg, gen)
	if d := o.Degraded; d != nil {
		setCondition(s, ConditionDegraded, metav1.ConditionTrue, d.Reason, d.Message, gen)
		setAbnormal(s, ConditionStalled, d.Stalled, d.Reason, d.Message, gen)
	} else {
		setCondition(s, ConditionDegraded, metav1.ConditionFalse, ReasonAsExpected, "", gen)
		setAbnormal(s, ConditionStalled, false, "", "", gen)
	}
}
