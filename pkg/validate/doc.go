// Package validate is opctl's CI gate: it checks OLM bundles, Helm charts
// (directories or .tgz archives), file-based catalogs and operator projects
// (packaged in memory first), and reports Findings.
//
// Every finding belongs to a Check: a package variable (FrameworkValidators,
// ChartLint, ChannelHead, …) registered in checks.go with a stable ID
// (OPC-xxx), a severity, a rationale and a fix hint. Code passes the
// variable, never the ID; relayed checks pass on another tool's findings at
// that tool's severity. docs/checks.md is generated from the registry.
//
// Validate (validate.go) detects the kind and dispatches:
//   - bundles: every operator-framework validator (OPC-B000) plus opctl's
//     own checks of CRD schemas, descriptors, alm-examples, relatedImages and
//     size, the Capability Level grade (grade.go) and the maturity
//     guidelines (maturity.go);
//   - charts: Helm's strict lint, renders with default values and with
//     rbac.scope=namespace, and checks of every workload and RBAC object;
//   - catalogs: operator-registry's own validation (OPC-K000) and the
//     upgrade graph of package fbc (OPC-K001..K003).
//
// Reports render as text, JSON, SARIF or JUnit (output.go, sarif.go,
// junit.go).
package validate
