// Package operatorkit is a reconcile toolkit that makes operator best
// practices the default. An operator implements a Handler for its kind,
// or assembles one from a Registry of Resources, and a Reconciler runs
// every reconcile through the same named steps:
//
//	fetch → (deleting? finalize) → check → build → mutate → apply → [repair] → status → success | error
//
// A ScopedHandler's Check returns the scope of one reconcile, which the
// later steps receive. A Resource is one managed object with three places
// to fill: HashFields (what change detection compares), InitialData (set
// once at creation and never changed, such as a generated password) and
// FromCR (copied from the custom resource on every reconcile); package
// resources has helpers per kind, and JobResources run long actions
// through package action.
//
// Objects are applied with server-side apply under one field manager and
// written only when the desired state differs from the live one, so a
// steady-state reconcile makes no write requests. Status carries Ready,
// Progressing, Degraded and Lifecycle conditions that kstatus reads
// (package kstatustest checks them), written only when they change.
// Errors are retried with backoff, Terminal ones stop and say why, and
// messages are bounded (BoundText). A finalizer applies
// spec.deletionPolicy (Delete or Orphan); objects that exist without a
// controller are adopted when the kind allows it. Package lifecycle holds
// the phase graph (Starting, Running, Servicing, Stopping, Ended, Failed);
// a kind may let its users wish for a phase in the spec (Wisher), and the
// CRD refuses a wish the graph forbids.
//
// docs/operatorkit.md explains each guarantee in full, and opctl kit
// (docs/kit.md) scaffolds an operator on this package.
package operatorkit
