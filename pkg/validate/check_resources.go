package validate

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ResourceBounds (OPC-C002) wants CPU and memory requests and limits.
var ResourceBounds = register(Check{ID: "OPC-C002", Severity: SeverityWarning, Relayed: false,
	Rationale: "Containers need CPU and memory requests and limits, so quotas and scheduling work and one tenant cannot starve another.",
	Hint:      "Set resources.requests and resources.limits for cpu and memory."}, eachContainer(checkResourceBounds))

func checkResourceBounds(c *Check, r *Report, w workload, ctr corev1.Container) {
	var missing []string
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := ctr.Resources.Requests[res]; !ok {
			missing = append(missing, "requests."+string(res))
		}
		if _, ok := ctr.Resources.Limits[res]; !ok {
			missing = append(missing, "limits."+string(res))
		}
	}
	if len(missing) > 0 {
		r.add(c, "container "+ctr.Name+" has no "+strings.Join(missing, ", "), w.template, w.id)
	}
}
