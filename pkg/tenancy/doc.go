// Package tenancy is the tenancy controller: for each Tenant it creates
// the namespaces with quota, limits, isolation and owner access, applies
// the shared CRDs of the tenant's operators (refusing version skew that
// would break another tenant), and installs each operator either as a
// Helm release (install, upgrade, rollback, uninstall) or from an OLM
// catalog (OperatorGroup, CatalogSource, Subscription, InstallPlan
// approval).
//
// Tenants are untrusted: Helm release records live in the controller's
// storage namespace (storage.go, migrate.go), every stored and rendered
// manifest is checked against the tenant before Helm acts on it
// (tamper.go), release objects changed outside the controller are
// restored from the release (drift.go), egress to the API server is
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
// The quota is computed by ComputeQuota, a pure function, from the
// operator's own workloads and the platform-as-code figures of its CRDs.
package tenancy
