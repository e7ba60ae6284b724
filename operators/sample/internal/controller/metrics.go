package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The operator's metrics of its stores, served with controller-runtime's
// on the manager's metrics endpoint; the operand's own come from the
// exporter sidecar. The PrometheusRule alerts on both.
var (
	failovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kvstore_failovers_total",
		Help: "Replicas promoted because the primary was lost.",
	}, []string{"namespace", "kvstore"})
	backupLastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kvstore_backup_last_success_timestamp_seconds",
		Help: "When the newest successful backup of a store completed.",
	}, []string{"namespace", "kvstore"})
	backupFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kvstore_backup_failures_total",
		Help: "Backups that failed for good.",
	}, []string{"namespace", "kvstore"})
	configRollbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kvstore_config_rollbacks_total",
		Help: "Config changes rolled back because they crash-looped the pods.",
	}, []string{"namespace", "kvstore"})
)

// Collectors are the operator's own metrics of its stores.
var Collectors = []prometheus.Collector{failovers, backupLastSuccess, backupFailures, configRollbacks}

func init() { metrics.Registry.MustRegister(Collectors...) }
