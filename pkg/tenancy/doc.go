// Package tenancy is the tenancy controller. For each Tenant it creates
// the namespaces with quota, limits, isolation and owner access, applies
// the shared CRDs of the tenant's operators (refusing version skew that
// would break another tenant), and installs each operator through the
// backend of its source.
//
// The Controller is an operatorkit ScopedHandler: Check works out a plan,
// the scope of one reconcile, which Build (the namespaces' objects),
// Repair (the shared CRDs, then each operator) and Status receive;
// Finalize serves both deletion policies. Setup wires it into a manager,
// with a cache that holds only what the controller reads.
//
// A backend implements one interface (backend.go): plan, objects,
// reconcile, remove, disconnect and watch. Each registers itself in its
// _setup.go with a constructor that takes exactly what it uses:
//
//   - chart (chart_*.go): a Helm chart, installed as a Helm release;
//   - olm (olm_*.go): OLM v0, an OperatorGroup and a Subscription whose
//     InstallPlans the controller approves after checking their rights;
//   - bundle (bundle_*.go): a registry+v1 bundle from a catalog, rendered
//     in process (internal/registryv1) and installed as a Helm release,
//     with no OLM on the cluster.
//
// The chart and bundle backends share the release engine
// (internal/helmrelease) through a releaser, which gives each release its
// tenant's scope: the guard (internal/guard) checks every rendered and
// stored manifest against it before Helm acts. Release records live in
// the controller's storage namespace (internal/helmrelease/records),
// never in a tenant's. Quotas are computed by package quota from the
// operators' workloads and platform-as-code figures.
//
// Everything in a tenant namespace is the tenant's: every Helm action
// impersonates the tenant's actor (actor.go), egress to the API server is
// narrowed to its addresses (apiserver.go), and the guardrail
// ValidatingAdmissionPolicies of config/guardrails read the labels this
// package sets. With Options.Shard the controller is one shard of a ring
// (package sharding) and caches only its own tenants' objects.
package tenancy
