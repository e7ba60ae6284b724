// Package tenancy is the tenancy controller: for each Tenant it creates
// the namespaces with quota, limits, isolation and owner access, applies
// the shared CRDs of the tenant's operators (refusing version skew that
// would break another tenant), and installs, upgrades, rolls back and
// uninstalls one Helm release per operator and tenant.
//
// The quota is computed by ComputeQuota, a pure function, from the
// operator's own workloads and the platform-as-code figures of its CRDs.
package tenancy
