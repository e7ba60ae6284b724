// Package records stores the tenancy controller's Helm release records.
//
// Records live as Secrets in the controller's own storage namespace,
// labelled with the tenant and the release namespace they belong to, never
// in a tenant's namespace. Store reads them through a metadata index
// (WithIndex) and GETs of the records a reconcile needs; it remembers the
// writes of this process that the index does not show yet, so a reconcile
// never acts on a stale history. Driver is the helm storage driver of one
// tenant's release namespace on top of a Store: it checks every record's
// labels against the tenant before Helm sees it and writes with
// resourceVersion preconditions.
//
// A record is the release gzipped (EncodeRecord, DecodeRecord), with the
// chart in a member of its own that is compressed once per chart
// (chart.go); reconciles read summaries that skip the chart
// (DecodeRecordSummary). Every inflate is bounded. Pack and Unpack keep
// the manifests the drift memo holds gzipped, and FIFO is the small
// forgetting cache of what is derived once per chart.
package records
