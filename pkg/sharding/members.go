package sharding

import (
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Members are the shards whose Lease is held and not expired at now, in
// name order, and the earliest time one of them expires (zero if none),
// when membership must be read again. A Lease is live when its holder is
// the shard it is named for, so a Lease released on shutdown (no holder)
// leaves the ring at once.
func Members(leases []coordinationv1.Lease, now time.Time) (live []string, next time.Time) {
	for _, l := range leases {
		s := l.Spec
		if s.HolderIdentity == nil || *s.HolderIdentity != l.Name || s.LeaseDurationSeconds == nil {
			continue
		}
		var renewed time.Time
		switch {
		case s.RenewTime != nil:
			renewed = s.RenewTime.Time
		case s.AcquireTime != nil:
			renewed = s.AcquireTime.Time
		default:
			continue
		}
		expires := renewed.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second)
		if !expires.After(now) {
			continue
		}
		live = append(live, l.Name)
		if next.IsZero() || expires.Before(next) {
			next = expires
		}
	}
	slices.Sort(live)
	return live, next
}
