package validate

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Probes (OPC-C001) wants liveness and readiness probes on long-running containers.
var Probes = register(Check{ID: "OPC-C001", Severity: SeverityWarning, Relayed: false,
	Rationale: "Workloads need liveness and readiness probes so Kubernetes can restart and route around unhealthy pods.",
	Hint:      "Add livenessProbe and readinessProbe to every container."}, eachContainer(checkProbes))

func checkProbes(c *Check, r *Report, w workload, ctr corev1.Container) {
	if !w.job && slices.ContainsFunc(w.spec.Containers, func(x corev1.Container) bool { return x.Name == ctr.Name }) &&
		(ctr.LivenessProbe == nil || ctr.ReadinessProbe == nil) {
		r.add(c, "container "+ctr.Name+" lacks a liveness or readiness probe", w.template, w.id)
	}
}
