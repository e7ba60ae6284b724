package sharding

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	leaseHeld = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "opctl_sharding_lease_held",
		Help: "1 while this replica holds its shard Lease of the ring.",
	}, []string{"ring"})
	liveShards = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "opctl_sharding_live_shards",
		Help: "Live shards of the ring, as the sharder last read them (set in the sharder's replica only).",
	}, []string{"ring"})
	assignments = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opctl_sharding_assignments_total",
		Help: "Objects the sharder assigned to a shard.",
	}, []string{"ring"})
	drains = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opctl_sharding_drains_total",
		Help: "Objects the sharder asked their shard to let go of.",
	}, []string{"ring"})
	releases = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opctl_sharding_releases_total",
		Help: "Draining objects this shard let go of.",
	}, []string{"ring"})
)

func init() {
	metrics.Registry.MustRegister(leaseHeld, liveShards, assignments, drains, releases)
}
