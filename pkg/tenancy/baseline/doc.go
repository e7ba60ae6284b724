// Package baseline is the shipped policy every tenant's operator may hold
// without a ClusterRole of the platform's: the rules the tenancy controller
// grants by default and holds so that it may pass them on, and the
// built-in ClusterRoles a release may bind by name. The tenancy controller
// grants by it and opctl validate's tenant-ready check judges by it, so
// both read this one copy, as they do what a binding may name
// (SubjectsOutside) and why a cluster-scoped object is refused
// (ClusterObjectRefused). docs/tenancy-threat-model.md ("The shipped
// baseline") says what a tenant could learn or do with each rule.
//
// It depends on nothing but the RBAC API types.
package baseline
