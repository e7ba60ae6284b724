package helmrelease

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The release engine's metrics.
var (
	releaseOps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opctl_tenancy_release_operations_total",
		Help: "Helm release operations by operation (install, upgrade, rollback, uninstall, recover) and result.",
	}, []string{"operation", "result"})
	releaseDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "opctl_tenancy_release_operation_duration_seconds",
		Help:    "Duration of Helm release operations.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
	}, []string{"operation"})
	driftCorrections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opctl_tenancy_drift_corrections_total",
		Help: "Release objects restored from the release manifest after a change or deletion outside the controller, by kind.",
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(releaseOps, releaseDuration, driftCorrections)
	// Every operation's series exists from the start at 0, so increase()
	// and rate() see the first operation and alerts need no absent().
	for _, op := range []string{"install", "upgrade", "rollback", "uninstall"} {
		releaseOps.WithLabelValues(op, "ok")
		releaseOps.WithLabelValues(op, "error")
		releaseDuration.WithLabelValues(op)
	}
	releaseOps.WithLabelValues("recover", "ok")
	releaseOps.WithLabelValues("verify", "refused")
}
