// Package quota sizes a tenant's ResourceQuota and LimitRange.
//
// Analyze reads an operator's manifests (its Deployments and StatefulSets,
// the objects it creates, and the platform-as-code annotations of its
// CRDs with the ConfigMaps they name) into an Analysis. Compute, a pure
// function, turns an Input, the analyses of a namespace's operators plus
// the tenant's instance counts and headroom, into a Quota: hard limits
// for the quota and the defaults a LimitRange must give, so that the
// operators and the operands they run are admitted.
//
// DefaultQuota and ShippedDefaultQuota give the quota of a namespace with
// no operator analysed yet; ServedCounts adds the object counts of the
// optional APIs this cluster serves, and ObjectCounts is the table of the
// kinds counted. Every quantity read from an operator is bounded
// (BoundedQuantities), so a manifest cannot make the arithmetic stall.
package quota
