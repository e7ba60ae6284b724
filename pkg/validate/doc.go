// Package validate is opctl's CI gate: it checks OLM bundles, Helm charts
// (directories or .tgz archives), file-based catalogs and operator projects,
// and reports Findings, which render as text, JSON, SARIF or JUnit.
//
// A Check is one kind of finding: a stable ID (OPC-xxx), a severity, a
// rationale, a fix hint, the Kind of input it reads, and the function that
// looks. Each check is a package variable that register makes from the two
// together, in a file of its own; the function reports through the *Check
// it is given, so code passes the variable and never the ID. Relayed checks
// pass on another tool's findings (the operator-framework validators, helm
// lint, operator-registry) at that tool's severity. docs/checks.md is
// generated from the registry, Checks.
//
// Validate detects the kind of a path, refuses what must not be read
// (oversized files, links out of the tree, unsafe archives) and builds that
// kind's input once: for a bundle its manifests and Capability Level grade,
// for a chart its renders (default values, and rbac.scope=namespace when
// the chart has the value) and their workloads, for a catalog its
// declarative config and upgrade-graph problems (package fbc). It then runs
// every registered check of the kind, in registry order; no call site names
// a check. Bundles are also graded against the maturity guidelines, and the
// maturity suite keeps only the findings of graded checks.
//
// A project is packaged in memory first; the outputs of its chart and
// bundle targets, found through packaging's target folders, are validated
// as a chart and a bundle.
//
// A new check is one new file: its Check and its function, given to
// register. eachRender and eachContainer walk a chart's renders for checks
// of objects and containers. TestEveryCheckFires wants every check to fire
// on some fixture.
package validate
