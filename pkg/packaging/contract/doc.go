// Package contract holds the keys and value formats that opctl package
// writes into what it ships, for those that install it: the annotations of
// a chart's Chart.yaml and of a bundle's ClusterServiceVersion that say
// which install modes the operator supports, which watch-namespace setting
// its manager reads, and the Pod Security level its pods meet. The tenancy
// controller reads them to refuse, before anything is installed, an
// operator that cannot run for a tenant; opctl validate grades them.
//
// Keys and formats (values are plain strings, as annotations are):
//
//	opctl.dev/install-modes: OwnNamespace,SingleNamespace,MultiNamespace,AllNamespaces
//	  the supported OLM install mode types, comma-separated, in that order
//	  (Chart.yaml only; a CSV says it in spec.installModes)
//	opctl.dev/watch-namespace: env:WATCH_NAMESPACE,flag:--watch-namespaces
//	  the settings the manager reads its watched namespaces from, each
//	  kind:name (kinds env, flag, cache); "none" when opctl parsed the
//	  manager's code and found none; "unknown" when it found no code
//	opctl.dev/pod-security: restricted
//	  the Pod Security Standards level (privileged, baseline, restricted)
//	  that every pod template shipped meets with the default values
//	opctl.dev/pod-security-reasons: baseline: Deployment/op-controller-manager: host namespaces (hostNetwork=true); restricted: ...
//	  below restricted, why each stricter level refuses which pod
//	  template, as the Pod Security admission evaluator words it: entries
//	  "level: Kind/name: reasons", least strict level first, joined by
//	  "; "; absent at restricted
//
//	opctl.dev/required-values: conversion.release,placeholders.NAMESPACE
//	  the value paths, comma-separated, that the chart's templates require
//	  (Helm's required): a chart that a release must be told something to
//	  render, such as a CRD chart whose conversion webhook is another
//	  release's, a project's placeholder without a default or its ko
//	  image (Chart.yaml only); validate renders and the release record is
//	  measured with StandIns of them
//
//	opctl.dev/crd-charts: my-operator-crds,my-operator-crds-2
//	  the CRD charts written beside a chart whose CRDs are in charts of
//	  their own (--crds separate-chart, or packed for size), in install
//	  order (Chart.yaml of the main chart only): found beside the chart
//	  (its directory or .tgz's), or by that name at the chart's
//	  repository and version, the tenancy controller applies their CRDs
//	  as a chart's own
//
// It has no dependencies beyond the standard library, so every producer
// and consumer can import it.
package contract
