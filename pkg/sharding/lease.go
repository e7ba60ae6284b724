package sharding

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lease timings of a shard, as controller-runtime's leader election: a
// shard that cannot renew within RenewDeadline stops, before its Lease
// expires and the sharder moves its objects.
const (
	LeaseDuration = 15 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
)

// shardLease holds the Lease named for the shard, labelled with the ring,
// for as long as the process runs. It is a manager Runnable that every
// replica runs, leader or not.
type shardLease struct {
	ring, id, namespace string
	config              *rest.Config
	guard               *Guard
}

func (l *shardLease) NeedLeaderElection() bool { return false }

// Start holds the Lease until ctx ends, then waits for the shard's running
// reconciles to end before releasing it, so that the sharder never moves an
// object that is still being reconciled. Losing the Lease is an error,
// which stops the manager.
func (l *shardLease) Start(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(l.config)
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: l.id, Namespace: l.namespace},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: l.id},
		Labels:     map[string]string{LabelRing: l.ring},
	}
	lost := make(chan struct{})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
			l.guard.wait(RenewDeadline)
			cancel()
		case <-lost:
		}
	}()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: l.id, ReleaseOnCancel: true,
		LeaseDuration: LeaseDuration, RenewDeadline: RenewDeadline, RetryPeriod: RetryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { leaseHeld.WithLabelValues(l.ring).Set(1) },
			OnStoppedLeading: func() { leaseHeld.WithLabelValues(l.ring).Set(0); close(lost) },
		},
	})
	if err != nil {
		return fmt.Errorf("shard Lease %s/%s: %w", l.namespace, l.id, err)
	}
	le.Run(runCtx)
	if ctx.Err() == nil {
		return fmt.Errorf("shard %s lost its Lease %s/%s", l.id, l.namespace, l.id)
	}
	return nil
}
