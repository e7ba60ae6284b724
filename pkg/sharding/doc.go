// Package sharding spreads the objects of one controller over several
// replicas with the API server's own Leases, after the design of
// kubernetes-controller-sharding:
//
//   - every replica (a shard) holds a Lease of its own in the ring's
//     namespace, labelled with the ring's name (lease.go), through
//     client-go's leader election, and stops when it cannot renew it;
//   - the replica that holds the sharder Lease (the manager's own leader
//     election) runs the Sharder (sharder.go): a consistent-hash Ring
//     (ring.go) over the live shard Leases (members.go) picks each object's
//     shard, and Plan (plan.go), a pure function, decides the label change;
//   - the assignment is the label shard.sharding.opctl.dev/<ring> on the
//     object, and each shard's cache selects only its own value (keys.go);
//   - an object moves between two live shards only after the old one let
//     it go: the sharder sets drain.sharding.opctl.dev/<ring>, the old
//     shard's Guard (guard.go) removes both labels from inside its own
//     reconcile queue, so no reconcile of the object is still running, and
//     only then does the sharder assign the new shard. An object of a shard
//     whose Lease expired moves at once.
package sharding
