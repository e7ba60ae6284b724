package controller

import (
	"context"
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
	"opctl.dev/opctl/pkg/operatorkit/resources"
)

// Reasons of the KVStore conditions.
const (
	ReasonInstalling    = "Installing"
	ReasonRollingOut    = "RollingOut"
	ReasonUpgrading     = "Upgrading"
	ReasonRollingBack   = "RollingBack"
	ReasonUpgradeFailed = "UpgradeFailed"
	// ReasonFailingOver: the primary is lost and a replica will be
	// promoted once spec.failover.after has passed.
	ReasonFailingOver = "FailingOver"
	// ReasonFailoverBlocked: no replica can be promoted.
	ReasonFailoverBlocked = "FailoverBlocked"
	// ReasonBackingUp: a KVBackup of the store is running.
	ReasonBackingUp = "BackingUp"
	// ReasonConfigRolledBack: a spec.config crash-looped the pods and the
	// last good one runs again.
	ReasonConfigRolledBack = "ConfigRolledBack"
	// ReasonWaitingForBackup: spec.restore names a backup that has not
	// succeeded (yet).
	ReasonWaitingForBackup = "WaitingForBackup"
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
	if k.KitWish() == lifecycle.Stopping {
		stopped := r.Observed && s.Status.Replicas == 0
		return operatorkit.Observation{Ready: stopped, Progressing: !stopped, Stopped: stopped, Message: "stopping the store's pods, as wished"}, nil
	}
	run := runVersion(k)
	// A StatefulSet read from the cache may predate this reconcile's apply:
	// its rollout counts only if it carries the version and config of now.
	rolledOut := r.RolledOut() && s.Spec.Template.Labels["app.kubernetes.io/version"] == run &&
		s.Spec.Template.Annotations[configSumKey] == sha(renderConfig(k))
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
	if rolledOut && run == k.Spec.Version {
		h.recordGoodConfig(k)
	} else if h.configCrashLoops(ctx, k, s) {
		o.RequeueAfter = 100 * time.Millisecond
	}
	if configRolledBack(k) && o.Degraded == nil {
		msg := "spec.config crash-looped the pods and was rolled back to the last config that ran; change spec.config to try again"
		o.Degraded = &operatorkit.Problem{Reason: ReasonConfigRolledBack, Stalled: rolledOut, Message: msg}
		o.Ready, o.Reason, o.Message = false, ReasonConfigRolledBack, msg
	}
	return h.servicing(ctx, k, o), nil
}

// servicing reports a failover or a backup in progress, which makes the
// lifecycle Servicing while the store serves; and the data path's
// problems and timers.
func (h *Handler) servicing(ctx context.Context, k *kvv1.KVStore, o operatorkit.Observation) operatorkit.Observation {
	requeue := func(d time.Duration) {
		if d > 0 && (o.RequeueAfter == 0 || d < o.RequeueAfter) {
			o.RequeueAfter = d
		}
	}
	if p := h.problem(k); p != nil && o.Degraded == nil {
		o.Degraded = p
	}
	if fs := k.Status.Failover; fs != nil && fs.PrimaryLostSince != nil {
		after := failoverAfterDefault
		if k.Spec.Failover.After != nil {
			after = k.Spec.Failover.After.Duration
		}
		o.Progressing, o.Reason = true, ReasonFailingOver
		o.Message = fmt.Sprintf("primary %s unreachable since %s; the most advanced replica is promoted after %s",
			primaryOf(k), fs.PrimaryLostSince.UTC().Format(time.RFC3339), after)
		since := fs.PrimaryLostSince.Time
		if t, ok := h.lostSince(k); ok {
			since = t
		}
		requeue(time.Until(since.Add(after)) + 100*time.Millisecond)
	} else if name := h.backupRunning(ctx, k); name != "" && o.Available {
		o.Progressing, o.Reason, o.Message = true, ReasonBackingUp, "KVBackup "+name+" is running"
	}
	if h.DataPath != nil {
		requeue(h.DataPath.poll())
	}
	if next := nextBackup(k); !next.IsZero() {
		requeue(max(time.Until(next), 0) + 100*time.Millisecond)
	}
	return o
}

// configRolledBack reports whether spec.config failed and the last good
// config runs instead.
func configRolledBack(k *kvv1.KVStore) bool {
	c := k.Status.Config
	return c != nil && c.FailedSHA256 != "" && c.FailedSHA256 == configSum(k.Spec.Config)
}

// recordGoodConfig keeps the spec.config that runs ready on every pod.
func (h *Handler) recordGoodConfig(k *kvv1.KVStore) {
	if configRolledBack(k) {
		return
	}
	c := k.Status.Config
	if c == nil {
		c = &kvv1.ConfigStatus{}
	}
	if k.Status.Config != nil && configSum(c.Good) == configSum(k.Spec.Config) && c.FailedSHA256 == "" {
		return
	}
	c.Good, c.FailedSHA256 = maps.Clone(k.Spec.Config), ""
	k.Status.Config = c
}

// configCrashLoops rolls spec.config back when pods of the StatefulSet's
// new revision crash-loop and the config is what changed since the last
// good one; it reports whether it did.
func (h *Handler) configCrashLoops(ctx context.Context, k *kvv1.KVStore, s *appsv1.StatefulSet) bool {
	c := k.Status.Config
	if c == nil || configRolledBack(k) || configSum(c.Good) == configSum(k.Spec.Config) || runVersion(k) != k.Status.CurrentVersion {
		return false
	}
	pods, err := h.pods(ctx, k)
	if err != nil {
		return false
	}
	for _, p := range pods {
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] != s.Status.UpdateRevision || s.Status.UpdateRevision == "" {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
				c.FailedSHA256 = configSum(k.Spec.Config)
				configRollbacks.WithLabelValues(k.Namespace, k.Name).Inc()
				h.warn(k, ReasonConfigRolledBack, "Pod %s crash-loops on the new spec.config (container %s: %s); rolling back to the last config that ran",
					p.Name, cs.Name, w.Message)
				return true
			}
		}
	}
	return false
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
