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

// Check is one kind of finding. Every check is a package variable below,
// made by register, and code passes the variable, never its ID.
type Check struct {
	ID        string   `json:"id"`
	Severity  Severity `json:"severity"`
	Rationale string   `json:"rationale"`
	Hint      string   `json:"hint"`
	// Relayed checks pass on another tool's findings at the severity that
	// tool gives (an error, warning or info).
	Relayed bool `json:"-"`
}

// Checks lists every check opctl runs, in registration order.
// docs/checks.md is generated from it.
var Checks []*Check

// register adds a check to Checks; an ID used twice is a programming error.
func register(c Check) *Check {
	if _, dup := CheckByID(c.ID); dup {
		panic("validate: check " + c.ID + " registered twice")
	}
	Checks = append(Checks, &c)
	return &c
}

// The checks.
var (
	FrameworkValidators = register(Check{ID: "OPC-B000", Severity: SeverityError, Relayed: true,
		Rationale: "The operator-framework validators (the ones operator-sdk and OperatorHub run) reported a problem.",
		Hint:      "Follow the validator's message; the finding names the validator."})
	CRDSchemas = register(Check{ID: "OPC-B001", Severity: SeverityWarning, Relayed: false,
		Rationale: "Every CRD version needs a structural openAPIV3Schema with descriptions, so the API server validates and prunes and users can read what each field means.",
		Hint:      "Generate CRDs with controller-gen and document every field of the Go types."})
	OwnedCRDDescriptors = register(Check{ID: "OPC-B002", Severity: SeverityWarning, Relayed: false,
		Rationale: "Owned CRDs in the CSV need the resources they create and spec/status descriptors, so consoles and tools can show them.",
		Hint:      "List the operand kinds (opctl.yaml operands composition) and describe spec and status fields."})
	ALMExamples = register(Check{ID: "OPC-B003", Severity: SeverityError, Relayed: false,
		Rationale: "Every alm-examples entry must be valid against its CRD schema; users copy them.",
		Hint:      "Fix the sample in config/samples or the schema."})
	RelatedImages = register(Check{ID: "OPC-B004", Severity: SeverityError, Relayed: false,
		Rationale: "spec.relatedImages must list every image the deployments run, or disconnected installs break.",
		Hint:      "Add the image to relatedImages (opctl package does it) or to a RELATED_IMAGE_* variable."})
	BundleSize = register(Check{ID: "OPC-B005", Severity: SeverityWarning, Relayed: false,
		Rationale: "A bundle must stay under 1 MiB (with margin) to fit in a ConfigMap and in etcd.",
		Hint:      "Trim CRD descriptions or move large objects out of the bundle."})
	CapabilityClaim = register(Check{ID: "OPC-G001", Severity: SeverityWarning, Relayed: false,
		Rationale: "The capabilities annotation claims more than the bundle shows evidence for.",
		Hint:      "Lower the claim, or add what the missing criteria of the claimed level ask for."})
	CatalogModel = register(Check{ID: "OPC-K000", Severity: SeverityError, Relayed: true,
		Rationale: "operator-registry's own validation (what opm validate runs) refused the catalog.",
		Hint:      "Follow the message; the catalog must load into a valid model."})
	DefaultChannel = register(Check{ID: "OPC-K001", Severity: SeverityError, Relayed: false,
		Rationale: "Every package needs a default channel that exists, or OLM cannot pick a channel for a Subscription without one.",
		Hint:      "Set defaultChannel on the olm.package to one of its channels."})
	ChannelHead = register(Check{ID: "OPC-K002", Severity: SeverityError, Relayed: false,
		Rationale: "A channel needs exactly one head (the bundle nothing replaces or skips), or upgrades have no target.",
		Hint:      "Make every other bundle of the channel replaced or skipped by a newer one."})
	ReachableBundles = register(Check{ID: "OPC-K003", Severity: SeverityWarning, Relayed: false,
		Rationale: "Every bundle of a channel should be reachable from its head, or installs of it can never upgrade.",
		Hint:      "Add a replaces or skips edge (or an olm.skipRange) to the orphaned bundle."})
	ChartLint = register(Check{ID: "OPC-C000", Severity: SeverityError, Relayed: true,
		Rationale: "helm lint --strict reported a problem.",
		Hint:      "Follow the lint message."})
	Probes = register(Check{ID: "OPC-C001", Severity: SeverityWarning, Relayed: false,
		Rationale: "Workloads need liveness and readiness probes so Kubernetes can restart and route around unhealthy pods.",
		Hint:      "Add livenessProbe and readinessProbe to every container."})
	ResourceBounds = register(Check{ID: "OPC-C002", Severity: SeverityWarning, Relayed: false,
		Rationale: "Containers need CPU and memory requests and limits, so quotas and scheduling work and one tenant cannot starve another.",
		Hint:      "Set resources.requests and resources.limits for cpu and memory."})
	RestrictedSecurity = register(Check{ID: "OPC-C003", Severity: SeverityWarning, Relayed: false,
		Rationale: "Containers should run as non-root with a read-only root filesystem, no privilege escalation and all capabilities dropped (Pod Security restricted).",
		Hint:      "Set runAsNonRoot, readOnlyRootFilesystem, allowPrivilegeEscalation=false and capabilities.drop=[ALL]."})
	HostIsolation = register(Check{ID: "OPC-C004", Severity: SeverityError, Relayed: false,
		Rationale: "Workloads must not use host namespaces or hostPath volumes: they break isolation between tenants.",
		Hint:      "Remove hostNetwork, hostPID, hostIPC and hostPath volumes."})
	PinnedImages = register(Check{ID: "OPC-C005", Severity: SeverityError, Relayed: false,
		Rationale: "Images must be pinned to a tag other than latest, or a digest, so installs are reproducible.",
		Hint:      "Use a versioned tag or a digest."})
	DisruptionBudget = register(Check{ID: "OPC-C006", Severity: SeverityWarning, Relayed: false,
		Rationale: "Workloads with more than one replica need a PodDisruptionBudget so voluntary disruptions keep them available.",
		Hint:      "Add a PodDisruptionBudget that selects the pods."})
	RBACWildcards = register(Check{ID: "OPC-C007", Severity: SeverityError, Relayed: false,
		Rationale: "RBAC rules must not use wildcard verbs, resources or API groups: least privilege.",
		Hint:      "List the verbs and resources the operator needs."})
	ClusterRBAC = register(Check{ID: "OPC-C008", Severity: SeverityWarning, Relayed: false,
		Rationale: "With rbac.scope=namespace the chart should need no cluster-scoped RBAC; every ClusterRole is a grant across tenants.",
		Hint:      "Drop the cluster-scoped rule, or document why it is needed."})
	CRDUpgrades = register(Check{ID: "OPC-C009", Severity: SeverityWarning, Relayed: false,
		Rationale: "CRDs only in the chart's crds/ directory are never upgraded by helm upgrade.",
		Hint:      "Template them (opctl package --crds templated) or ship a CRD chart."})
)

// CheckByID returns the check with id.
func CheckByID(id string) (*Check, bool) {
	i := slices.IndexFunc(Checks, func(c *Check) bool { return c.ID == id })
	if i < 0 {
		return nil, false
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

// add records a finding of c at its severity.
func (r *Report) add(c *Check, message, file, object string) {
	r.Findings = append(r.Findings, Finding{Check: c.ID, Severity: c.Severity, Message: message, File: file, Object: object, Source: "opctl"})
}

// relay records a finding of another tool (source) at the severity it
// gives, under a relayed check.
func (r *Report) relay(c *Check, sev Severity, message, file, source string) {
	if !c.Relayed {
		panic("validate: " + c.ID + " is not a relayed check")
	}
	r.Findings = append(r.Findings, Finding{Check: c.ID, Severity: sev, Message: message, File: file, Source: source})
}
