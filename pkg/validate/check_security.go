package validate

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// RestrictedSecurity (OPC-C003) wants containers that meet Pod Security restricted.
var RestrictedSecurity = register(Check{ID: "OPC-C003", Severity: SeverityWarning, Relayed: false,
	Rationale: "Containers should run as non-root with a read-only root filesystem, no privilege escalation and all capabilities dropped (Pod Security restricted).",
	Hint:      "Set runAsNonRoot, readOnlyRootFilesystem, allowPrivilegeEscalation=false and capabilities.drop=[ALL]."}, eachContainer(checkRestrictedSecurity))

func checkRestrictedSecurity(c *Check, r *Report, w workload, ctr corev1.Container) {
	podNonRoot := w.spec.SecurityContext != nil && w.spec.SecurityContext.RunAsNonRoot != nil && *w.spec.SecurityContext.RunAsNonRoot
	if msg := securityGaps(ctr.SecurityContext, podNonRoot); msg != "" {
		r.add(c, "container "+ctr.Name+": "+msg, w.template, w.id)
	}
}

func securityGaps(sc *corev1.SecurityContext, podNonRoot bool) string {
	var gaps []string
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	if !podNonRoot && (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) {
		gaps = append(gaps, "runAsNonRoot is not true")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		gaps = append(gaps, "readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		gaps = append(gaps, "allowPrivilegeEscalation is not false")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		gaps = append(gaps, "capabilities do not drop ALL")
	}
	return strings.Join(gaps, ", ")
}
