package controller

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/resources"
)

// Reasons of the KVStore conditions.
const (
	ReasonInstalling    = "Installing"
	ReasonRollingOut    = "RollingOut"
	ReasonUpgrading     = "Upgrading"
	ReasonRollingBack   = "RollingBack"
	ReasonUpgradeFailed = "UpgradeFailed"
)

// Status reads the StatefulSet and drives the upgrade: it records the
// version that runs, starts the upgrade clock and, past the deadline, marks
// the target version failed so that the next reconcile rolls back.
func (h *Handler) Status(ctx context.Context, k *kvv1.KVStore, _ []operatorkit.ApplyResult) (operatorkit.Observation, error) {
	n := namesOf(k)
	k.Status.Endpoint = fmt.Sprintf("%s.%s.svc:%d", n.client, k.Namespace, valkeyPort)
	k.Status.SecretName = n.secret
	s := &appsv1.StatefulSet{}
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: n.sts}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return operatorkit.Observation{Progressing: true, Reason: ReasonInstalling, Message: "creating the StatefulSet"}, nil
		}
		return operatorkit.Observation{}, fmt.Errorf("reading StatefulSet: %w", err)
	}
	r := resources.StatefulSet(s)
	k.Status.ReadyReplicas = r.Ready
	run := runVersion(k)
	rolledOut := r.RolledOut() && s.Spec.Template.Labels["app.kubernetes.io/version"] == run
	progress := fmt.Sprintf("%d of %d pods ready and updated", min(r.Ready, r.Updated), r.Desired)
	o := operatorkit.Observation{Available: r.AnyAvailable()}

	switch {
	case run != k.Spec.Version: // rolling back a failed upgrade
		o.Degraded = &operatorkit.Problem{Reason: ReasonUpgradeFailed, Stalled: rolledOut, Message: fmt.Sprintf(
			"version %s did not become ready within %ds; rolled back to %s. Set spec.version to retry or choose another version",
			k.Spec.Version, k.Spec.Upgrade.ProgressDeadlineSeconds, run)}
		o.Reason, o.Message = ReasonUpgradeFailed, o.Degraded.Message
		if !rolledOut {
			o.Progressing, o.Reason, o.Message = true, ReasonRollingBack, "rolling back to "+run+": "+progress
		} else {
			k.Status.CurrentVersion, k.Status.TargetVersion, k.Status.UpgradeStartTime = run, "", nil
		}
	case rolledOut:
		k.Status.CurrentVersion, k.Status.TargetVersion, k.Status.FailedVersion, k.Status.UpgradeStartTime = run, "", "", nil
		o.Ready, o.Available = true, true
		o.Message = fmt.Sprintf("%d replicas of version %s ready at %s", r.Desired, run, k.Status.Endpoint)
	case k.Status.CurrentVersion != "" && k.Status.CurrentVersion != k.Spec.Version:
		o = h.upgrading(k, o, progress)
	default:
		o.Progressing, o.Reason, o.Message = true, ReasonRollingOut, progress
		if k.Status.CurrentVersion == "" {
			o.Reason = ReasonInstalling
		}
	}
	if p := h.storageProblem(ctx, k); p != nil && o.Degraded == nil {
		o.Degraded = p
	}
	return o, nil
}

// upgrading tracks the progress deadline of an upgrade in flight.
func (h *Handler) upgrading(k *kvv1.KVStore, o operatorkit.Observation, progress string) operatorkit.Observation {
	now := h.now()
	if k.Status.TargetVersion != k.Spec.Version || k.Status.UpgradeStartTime == nil {
		k.Status.TargetVersion = k.Spec.Version
		k.Status.UpgradeStartTime = &metav1.Time{Time: now}
	}
	deadline := k.Status.UpgradeStartTime.Add(time.Duration(k.Spec.Upgrade.ProgressDeadlineSeconds) * time.Second)
	o.Progressing, o.Reason = true, ReasonUpgrading
	o.Message = fmt.Sprintf("upgrading %s → %s: %s", k.Status.CurrentVersion, k.Spec.Version, progress)
	if now.After(deadline) {
		// The next reconcile renders the current version again.
		k.Status.FailedVersion = k.Spec.Version
		o.Reason, o.Message = ReasonRollingBack, fmt.Sprintf("version %s missed its %ds progress deadline; rolling back to %s",
			k.Spec.Version, k.Spec.Upgrade.ProgressDeadlineSeconds, k.Status.CurrentVersion)
		o.RequeueAfter = 100 * time.Millisecond
		return o
	}
	o.RequeueAfter = time.Until(deadline) + 100*time.Millisecond
	return o
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}
