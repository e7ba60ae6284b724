// Package tenancy is the tenancy controller: for each Tenant it creates
// the namespaces with quota, limits, isolation and owner access, applies
// the shared CRDs of the tenant's operators (refusing version skew that
// would break another tenant), and installs each operator through the
// backend of its source.
//
// The Controller is an operatorkit ScopedHandler: Check returns a plan,
// the scope of one reconcile, which Build, Repair and Status receive.
// Each backend implements one interface (backend.go): its check step
// (plan, with the quota input), build (objects added to the tenant's
// namespaces), repair (install, upgrade, roll back, recover), remove and
// disconnect for the deletion policies, and its cache and watch setup. Its
// files are named for it and for the step (<backend>_check.go, _build.go,
// _repair.go, _status.go, _finalize.go, _setup.go), and it registers
// itself in its _setup.go: a new backend is a new file set. The backends:
//
//   - chart (helm_*.go): a Helm chart installed as a Helm release of the
//     tenant;
//   - olm (olm_*.go): OLM v0, through an OperatorGroup whose ServiceAccount
//     holds only the tenant's rights, a CatalogSource, a Subscription and
//     InstallPlans the controller approves after writing their cluster-wide
//     RBAC itself;
//   - bundle (bundle_*.go): a registry+v1 bundle from a file-based catalog
//     (a catalog image, an operator-registry gRPC address, an HTTP URL or
//     a ConfigMap), resolved in the catalog's upgrade graph, rendered by
//     the controller as OLM would install it into the tenant's namespaces,
//     and installed as a Helm release: no OLM runs on the cluster.
//
// The chart and bundle backends share the release path (releases.go,
// release_*.go), so history, rollback, recovery, tamper checks and drift
// correction are the same for both.
//
// Tenants are untrusted: Helm release records live in the controller's
// storage namespace (storage.go, record_driver.go), never read from a
// tenant namespace (legacy.go: records there are deleted unread), read
// through a metadata index of the records (with this process's writes it
// does not show yet in their place) and GETs of the ones needed, and written with resourceVersion preconditions, gzipped with the chart
// in a member of its own that is compressed once per chart
// (record_chart.go), and read by reconciles as summaries that skip the
// chart (record_summary.go); every stored and rendered
// manifest is checked against the tenant before Helm acts on it
// (tamper.go), release objects changed outside the controller are
// restored from the release (drift.go: four kinds watched, the others read
// every drift interval, ignore rules in drift_ignore.go; the cache holds
// them slimmed and the memo their manifest gzipped, packed.go; what Helm just created
// counts as matching, helm_kube.go), an uninstall deletes only the
// objects that carry the release's marks, so a failed install's cleanup
// keeps an object it did not make (helm_kube.go), egress to the API server is
// narrowed to its addresses (apiserver.go), and the guardrail
// ValidatingAdmissionPolicies in config/guardrails read the namespace
// labels this package sets.
//
// A Helm release is reconciled in two steps: releaseState
// (release_state.go), a pure function of the release's records, the spec
// and the status, decides its phase (stuck pending, absent, failed, held
// after a rollback, out of sync, progressing, timed out or ready), and one
// action acts on it, each in its own file: release_recover.go,
// release_install.go, release_upgrade.go, release_rollback.go and
// release_await.go.
//
// With Options.Shard the controller is one shard of a ring (package
// sharding): every object it makes for a Tenant, the release's objects
// included (the render guard's labels), carries the Tenant's shard label,
// and its cache holds only the Tenants and objects of its own shard
// (owned.go reads a just-moved Tenant's objects live until drift
// correction and the next apply relabel them). Its reconciles run behind
// the shard's Guard, and reads that must see every Tenant (unused CRDs) go
// to the API server. The release records' metadata index is not sharded.
//
// The quota is computed by ComputeQuota, a pure function, from the
// operator's own workloads and the platform-as-code figures of its CRDs.
package tenancy
