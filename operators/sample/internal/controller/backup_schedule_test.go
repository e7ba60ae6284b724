package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// TestScheduledBackupsAndRetention drives the schedule through a day of
// hourly backups with a fake clock: one KVBackup per due time, none
// between, and only the newest three successful ones kept.
func TestScheduledBackupsAndRetention(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := kvv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 23, 0, 30, 0, 0, time.UTC)
	k := &kvv1.KVStore{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", CreationTimestamp: metav1.NewTime(start),
		Labels: map[string]string{"team": "a"}}}
	k.Spec.Backup = &kvv1.BackupSpec{Schedule: "0 * * * *", Retention: 3}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&kvv1.KVBackup{}).Build()
	now := start
	h := &Handler{Client: cl, Now: func() time.Time { return now }}
	succeed := func() {
		list := &kvv1.KVBackupList{}
		if err := cl.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			b := &list.Items[i]
			if b.Status.Action == nil {
				b.Status.Action = &kitapi.ActionStatus{Name: "backup", Key: "1", Phase: kitapi.ActionSucceeded}
				b.Status.SHA256 = "00"
				if err := cl.Status().Update(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var created []string
	for range 6 * 4 { // six hours in quarter-hour steps
		if err := h.scheduleBackups(ctx, k); err != nil {
			t.Fatal(err)
		}
		succeed()
		now = now.Add(15 * time.Minute)
	}
	list := &kvv1.KVBackupList{}
	if err := cl.List(ctx, list, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	for _, b := range list.Items {
		created = append(created, b.Name)
		if b.Labels[StoreLabel] != "db" || b.Labels["team"] != "a" || b.Spec.Store != "db" {
			t.Errorf("backup %s labels %v store %s", b.Name, b.Labels, b.Spec.Store)
		}
	}
	// Due at 01:00 … 06:00; the run at 06:15 has made six, kept three.
	want := "[db-20261123-040000 db-20261123-050000 db-20261123-060000]"
	if fmt.Sprint(created) != want {
		t.Errorf("kept %v, want %s", created, want)
	}
	if k.Status.Backup.LastScheduleTime.Time != time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC) || k.Status.Backup.LastSuccessful != "db-20261123-060000" {
		t.Errorf("status.backup %+v", k.Status.Backup)
	}
	if next := nextBackup(k); next != time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC) {
		t.Errorf("next backup %s", next)
	}
}

func TestCheckSchedule(t *testing.T) {
	for sched, ok := range map[string]bool{"0 3 * * *": true, "@daily": true, "": true, "every day": false, "61 * * * *": false} {
		k := &kvv1.KVStore{Spec: kvv1.KVStoreSpec{Backup: &kvv1.BackupSpec{Schedule: sched}}}
		if err := checkSchedule(k); (err == nil) != ok {
			t.Errorf("checkSchedule(%q) = %v", sched, err)
		}
	}
}

func TestPlainName(t *testing.T) {
	for name, ok := range map[string]bool{"db-1.rdb": true, "": false, "../x.rdb": false, "a/b.rdb": false, ".hidden": false, "..": false} {
		if plainName(name) != ok {
			t.Errorf("plainName(%q) = %v", name, !ok)
		}
	}
}
