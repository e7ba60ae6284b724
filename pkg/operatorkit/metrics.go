package operatorkit

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	applyTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "operatorkit_apply_total",
		Help: "Managed objects applied by operatorkit, by kind and result (created, updated, unchanged, adopted, deferred, failed).",
	}, []string{"kind", "result"})
	transitionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "operatorkit_lifecycle_transitions_total",
		Help: "Lifecycle phase transitions, by owner kind, from and to phase; refused transitions have result=refused.",
	}, []string{"kind", "from", "to", "result"})
)

func init() {
	metrics.Registry.MustRegister(applyTotal, transitionsTotal)
}
