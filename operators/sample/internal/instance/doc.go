// Package instance is the KVStore operator's data path: what it does to a
// running Redis-protocol server (Valkey, or Redis 7 in tests) over the
// network, and the programs its Jobs and init containers run.
//
// The seam between the controller and the data path is one interface,
// Manager: the controller decides (which pod is primary, when to fail
// over, how many replicas), and a Manager reads a server's state and
// changes its role. RESP implements it over the Redis protocol; tests
// point it at real servers started as local processes, so the controller's
// decisions and the server's behaviour are tested together.
//
// The pure decisions live here too, beside the facts they read:
// ChoosePrimary (failover: the most advanced replica) and Autoscale
// (replicas from operations per second, with hysteresis and a cool-down).
//
// Backup and Restore are the bodies of the operator binary's backup and
// restore subcommands: an RDB snapshot taken over the replication
// protocol (SYNC) and verified by SHA-256, and its installation into an
// empty data directory before the server starts.
package instance
