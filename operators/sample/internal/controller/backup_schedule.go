package controller

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/robfig/cron/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// checkSchedule refuses a spec.backup.schedule that is not a cron
// expression.
func checkSchedule(k *kvv1.KVStore) error {
	if k.Spec.Backup == nil || k.Spec.Backup.Schedule == "" {
		return nil
	}
	if _, err := cron.ParseStandard(k.Spec.Backup.Schedule); err != nil {
		return fmt.Errorf("spec.backup.schedule %q: %w; use five cron fields, such as \"0 3 * * *\", or @daily", k.Spec.Backup.Schedule, err)
	}
	return nil
}

// nextBackup is when the next scheduled backup is due, or zero.
func nextBackup(k *kvv1.KVStore) time.Time {
	if k.Spec.Backup == nil || k.Spec.Backup.Schedule == "" {
		return time.Time{}
	}
	sched, err := cron.ParseStandard(k.Spec.Backup.Schedule)
	if err != nil {
		return time.Time{}
	}
	from := k.CreationTimestamp.Time
	if b := k.Status.Backup; b != nil && b.LastScheduleTime != nil {
		from = b.LastScheduleTime.Time
	}
	return sched.Next(from)
}

// scheduleBackups creates the KVBackup that is due, if any (one, however
// many schedule times were missed, as a CronJob does), and deletes the
// backups past spec.backup.retention.
func (h *Handler) scheduleBackups(ctx context.Context, k *kvv1.KVStore) error {
	if k.Spec.Backup == nil {
		return nil
	}
	if next := nextBackup(k); !next.IsZero() && !h.now().Before(next) {
		// A scheduled backup carries the store's labels, and names it.
		labels := maps.Clone(k.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[StoreLabel] = k.Name
		b := &kvv1.KVBackup{
			ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: fmt.Sprintf("%s-%s", k.Name, next.UTC().Format("20060102-150405")),
				Labels: labels},
			Spec: kvv1.KVBackupSpec{Store: k.Name},
		}
		if err := h.Client.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating scheduled KVBackup %s: %w", b.Name, err)
		}
		if k.Status.Backup == nil {
			k.Status.Backup = &kvv1.BackupStatus{}
		}
		k.Status.Backup.LastScheduleTime = &metav1.Time{Time: next}
		h.event(k, b, "BackupScheduled", "Created KVBackup %s for the schedule %q", b.Name, k.Spec.Backup.Schedule)
	}
	return h.retain(ctx, k)
}

// backupsOf lists the store's KVBackups, newest first.
func (h *Handler) backupsOf(ctx context.Context, k *kvv1.KVStore) ([]kvv1.KVBackup, error) {
	list := &kvv1.KVBackupList{}
	if err := h.Client.List(ctx, list, client.InNamespace(k.Namespace)); err != nil {
		return nil, fmt.Errorf("listing KVBackups: %w", err)
	}
	var out []kvv1.KVBackup
	for _, b := range list.Items {
		if b.Spec.Store == k.Name {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreationTimestamp.Equal(&out[j].CreationTimestamp) {
			return out[j].CreationTimestamp.Before(&out[i].CreationTimestamp)
		}
		return out[i].Name > out[j].Name
	})
	return out, nil
}

// retain keeps the newest spec.backup.retention successful scheduled
// backups, and the failed ones newer than the oldest kept; the snapshots
// of the deleted ones are pruned by the next backup (its --keep).
// Backups made by hand (without the store label) are the user's.
func (h *Handler) retain(ctx context.Context, k *kvv1.KVStore) error {
	backups, err := h.backupsOf(ctx, k)
	if err != nil {
		return err
	}
	kept := int32(0)
	for i := range backups {
		b := &backups[i]
		if b.Labels[StoreLabel] != k.Name || !b.DeletionTimestamp.IsZero() {
			continue
		}
		if b.Succeeded() {
			if kept < retention(k) {
				kept++
				if k.Status.Backup == nil {
					k.Status.Backup = &kvv1.BackupStatus{}
				}
				if kept == 1 {
					k.Status.Backup.LastSuccessful = b.Name
				}
				continue
			}
		} else if kept < retention(k) || b.Status.Action == nil || !b.Status.Action.Finished() {
			continue
		}
		if err := h.Client.Delete(ctx, b); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting KVBackup %s past the retention: %w", b.Name, err)
		}
		h.event(k, b, "BackupPruned", "Deleted KVBackup %s: spec.backup.retention keeps %d", b.Name, retention(k))
	}
	return nil
}

func retention(k *kvv1.KVStore) int32 {
	if k.Spec.Backup == nil || k.Spec.Backup.Retention <= 0 {
		return 7
	}
	return k.Spec.Backup.Retention
}

// backupRunning names a KVBackup of the store that is not finished.
func (h *Handler) backupRunning(ctx context.Context, k *kvv1.KVStore) string {
	backups, err := h.backupsOf(ctx, k)
	if err != nil {
		return ""
	}
	for _, b := range backups {
		if a := b.Status.Action; a != nil && !a.Finished() && b.DeletionTimestamp.IsZero() {
			return b.Name
		}
	}
	return ""
}
