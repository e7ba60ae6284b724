// Package validate is opctl's CI gate: it checks OLM bundles and Helm
// charts and reports Findings, each tied to a Check with a stable ID
// (OPC-xxx), a severity, a rationale and a fix hint.
//
// Bundle checks run every operator-framework validator (reported as
// findings of check OPC-B000 with the validator named) plus opctl's own:
// CRD schemas and descriptions, descriptors, alm-examples against the CRD
// schema, relatedImages coverage and bundle size. Chart checks run Helm's
// strict lint, render the chart with default values and with
// rbac.scope=namespace, and check every rendered workload and RBAC object.
package validate
