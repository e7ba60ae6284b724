package validate

// HostIsolation (OPC-C004) refuses host namespaces and hostPath volumes.
var HostIsolation = register(Check{ID: "OPC-C004", Severity: SeverityError, Relayed: false,
	Rationale: "Workloads must not use host namespaces or hostPath volumes: they break isolation between tenants.",
	Hint:      "Remove hostNetwork, hostPID, hostIPC and hostPath volumes."}, eachRender(checkHostIsolation))

func checkHostIsolation(c *Check, r *Report, rd *chartRender) {
	for _, w := range rd.workloads {
		if w.spec.HostNetwork || w.spec.HostPID || w.spec.HostIPC {
			r.add(c, "the pod uses a host namespace (hostNetwork, hostPID or hostIPC)", w.template, w.id)
		}
		for _, v := range w.spec.Volumes {
			if v.HostPath != nil {
				r.add(c, "volume "+v.Name+" is a hostPath", w.template, w.id)
			}
		}
	}
}
