package validate

import "slices"

// Severity of a finding. Errors fail the gate by default.
type Severity string

// Severities, most severe first.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// rank orders severities: higher is more severe.
func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 2
	case SeverityWarning:
		return 1
	}
	return 0
}

// AtLeast reports whether s is as severe as min.
func (s Severity) AtLeast(min Severity) bool { return s.rank() >= min.rank() }

// Check is one kind of finding.
type Check struct {
	ID        string   `json:"id"`
	Severity  Severity `json:"severity"`
	Rationale string   `json:"rationale"`
	Hint      string   `json:"hint"`
}

// Checks lists every check opctl runs, by ID. docs/checks.md is generated
// from it.
var Checks = []Check{
	{"OPC-B000", SeverityError, "The operator-framework validators (the ones operator-sdk and OperatorHub run) reported a problem.", "Follow the validator's message; the finding names the validator."},
	{"OPC-B001", SeverityWarning, "Every CRD version needs a structural openAPIV3Schema with descriptions, so the API server validates and prunes and users can read what each field means.", "Generate CRDs with controller-gen and document every field of the Go types."},
	{"OPC-B002", SeverityWarning, "Owned CRDs in the CSV need the resources they create and spec/status descriptors, so consoles and tools can show them.", "List the operand kinds (opctl.yaml operands composition) and describe spec and status fields."},
	{"OPC-B003", SeverityError, "Every alm-examples entry must be valid against its CRD schema; users copy them.", "Fix the sample in config/samples or the schema."},
	{"OPC-B004", SeverityError, "spec.relatedImages must list every image the deployments run, or disconnected installs break.", "Add the image to relatedImages (opctl package does it) or to a RELATED_IMAGE_* variable."},
	{"OPC-B005", SeverityWarning, "A bundle must stay under 1 MiB (with margin) to fit in a ConfigMap and in etcd.", "Trim CRD descriptions or move large objects out of the bundle."},
	{"OPC-G001", SeverityWarning, "The capabilities annotation claims more than the bundle shows evidence for.", "Lower the claim, or add what the missing criteria of the claimed level ask for."},
	{"OPC-K000", SeverityError, "operator-registry's own validation (what opm validate runs) refused the catalog.", "Follow the message; the catalog must load into a valid model."},
	{"OPC-K001", SeverityError, "Every package needs a default channel that exists, or OLM cannot pick a channel for a Subscription without one.", "Set defaultChannel on the olm.package to one of its channels."},
	{"OPC-K002", SeverityError, "A channel needs exactly one head (the bundle nothing replaces or skips), or upgrades have no target.", "Make every other bundle of the channel replaced or skipped by a newer one."},
	{"OPC-K003", SeverityWarning, "Every bundle of a channel should be reachable from its head, or installs of it can never upgrade.", "Add a replaces or skips edge (or an olm.skipRange) to the orphaned bundle."},
	{"OPC-C000", SeverityError, "helm lint --strict reported a problem.", "Follow the lint message."},
	{"OPC-C001", SeverityWarning, "Workloads need liveness and readiness probes so Kubernetes can restart and route around unhealthy pods.", "Add livenessProbe and readinessProbe to every container."},
	{"OPC-C002", SeverityWarning, "Containers need CPU and memory requests and limits, so quotas and scheduling work and one tenant cannot starve another.", "Set resources.requests and resources.limits for cpu and memory."},
	{"OPC-C003", SeverityWarning, "Containers should run as non-root with a read-only root filesystem, no privilege escalation and all capabilities dropped (Pod Security restricted).", "Set runAsNonRoot, readOnlyRootFilesystem, allowPrivilegeEscalation=false and capabilities.drop=[ALL]."},
	{"OPC-C004", SeverityError, "Workloads must not use host namespaces or hostPath volumes: they break isolation between tenants.", "Remove hostNetwork, hostPID, hostIPC and hostPath volumes."},
	{"OPC-C005", SeverityError, "Images must be pinned to a tag other than latest, or a digest, so installs are reproducible.", "Use a versioned tag or a digest."},
	{"OPC-C006", SeverityWarning, "Workloads with more than one replica need a PodDisruptionBudget so voluntary disruptions keep them available.", "Add a PodDisruptionBudget that selects the pods."},
	{"OPC-C007", SeverityError, "RBAC rules must not use wildcard verbs, resources or API groups: least privilege.", "List the verbs and resources the operator needs."},
	{"OPC-C008", SeverityWarning, "With rbac.scope=namespace the chart should need no cluster-scoped RBAC; every ClusterRole is a grant across tenants.", "Drop the cluster-scoped rule, or document why it is needed."},
	{"OPC-C009", SeverityWarning, "CRDs only in the chart's crds/ directory are never upgraded by helm upgrade.", "Template them (opctl package --crds templated) or ship a CRD chart."},
}

// CheckByID returns the check with id.
func CheckByID(id string) (Check, bool) {
	i := slices.IndexFunc(Checks, func(c Check) bool { return c.ID == id })
	if i < 0 {
		return Check{}, false
	}
	return Checks[i], true
}

// Finding is one problem found.
type Finding struct {
	// Check is the ID of the check that found it.
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// File is relative to the validated path; Line is 1-based, 0 when
	// unknown.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Object is "Kind/name" of the object concerned, if any.
	Object string `json:"object,omitempty"`
	// Source names who found it: opctl, helm-lint, or an
	// operator-framework validator.
	Source string `json:"source"`
}

// Report is the result of validating one path.
type Report struct {
	Path     string    `json:"path"`
	Kind     string    `json:"kind"`
	Findings []Finding `json:"findings"`
	// Grade is the Capability Level of a bundle.
	Grade *Grade `json:"grade,omitempty"`
	// Maturity grades the maturity-model guidelines a bundle can show.
	Maturity []Guideline `json:"maturity,omitempty"`
}

// Count returns how many findings have exactly severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Fails reports whether any finding is at least failOn.
func (r *Report) Fails(failOn Severity) bool {
	return slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Severity.AtLeast(failOn) })
}

// add records a finding of check id.
func (r *Report) add(id, message, file, object string) {
	c, _ := CheckByID(id)
	r.Findings = append(r.Findings, Finding{Check: id, Severity: c.Severity, Message: message, File: file, Object: object, Source: "opctl"})
}
