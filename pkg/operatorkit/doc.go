// Package operatorkit is a reconcile toolkit that makes operator best
// practices the default. An operator implements a Handler for its kind;
// a Reconciler runs every reconcile through the same named steps, each
// logged at V(1) with its name:
//
//	fetch → (deleting? finalize) → check → build → mutate → apply → [repair] → status → success | error
//
// Scope. A ScopedHandler's Check returns the scope of one reconcile (a
// plan: what it read and decided), and Build, Mutate, Repair and Status
// of the same reconcile receive it; Scoped adapts it to a Handler.
//
// Resources. Instead of one Build and one Mutate for all of a kind's
// objects, a Handler can be assembled by NewRegistry from a list of
// Resources, one per managed object, each with the three places of the
// OKT proposal: InitialData (defaults and data set once at creation, such
// as a generated password: once the object exists the live values are
// kept), FromCR (the fields copied from the custom resource) and
// HashFields (the fields whose change writes the object), plus an
// optional readiness. Every resource goes through the same create,
// update or unchanged decision; RegistryOptions.MaxCreates creates at
// most N objects per reconcile, and JobResources run long actions through
// package action. Package resources has the helpers per kind.
//
// Change detection. Desired objects are applied with server-side apply
// under one field manager, with the custom resource as controller owner.
// An object is written only when the desired state differs from the live
// one: a sha256 of the desired object's canonical JSON is kept in the
// operatorkit.opctl.dev/desired-hash annotation, and every desired field is
// compared with the live object, so server-side defaults and fields of
// other managers never cause a write while edits to managed fields (drift)
// are restored. A steady-state reconcile makes no write requests.
//
// Status. Ready, Progressing, Degraded and Lifecycle conditions with
// reasons, plus status.observedGeneration and status.phase, written only
// when they change. Reconciling and Stalled mirror Progressing and stalled
// Degraded so kstatus-based tools (kubectl wait, Helm v4, flux) read the
// same state; package kstatustest asserts it in tests. An error's text
// reaches conditions, Events and logs cut to MaxMessage (BoundText), since
// errors quote what users wrote. A reconcile that
// finds in the cache a version of the object this controller has already
// written past waits for the cache (10 s at most) instead of deciding
// from the older state (a status can record what was done, such as a
// rollback).
//
// Errors. Returned errors are retried through controller-runtime's rate
// limiter with exponential backoff and reported as Degraded. Errors marked
// with Terminal stop retrying and report Degraded and Stalled with their
// reason. Events are recorded for every create, update, adoption, deletion,
// orphaning and failure.
//
// Deletion. A finalizer applies spec.deletionPolicy: Delete removes every
// managed object and waits until they are gone; Orphan removes the owner
// references and leaves the workload running. The phase Stopping is
// written before anything is removed and Ended before the finalizer goes,
// so both can be seen.
//
// Adoption. Objects that already exist with the expected names and no
// controller are adopted in place when the object allows it
// (Object.KitAdoptionAllowed); otherwise the reconcile reports an
// OwnershipConflict. Fields written by the managers of older operator
// builds (Options.LegacyFieldManagers) are taken over, so fields the new
// build no longer sets are removed.
//
// Lifecycle. Package lifecycle declares the phases Starting, Running,
// Servicing, Stopping, Ended and Failed as a graph with guarded
// transitions; a Handler may request a transition, and one the graph does
// not allow is refused with a clear reason in the Lifecycle condition.
// An Object that implements Wisher declares the phase its user wishes for
// in the spec: the Reconciler moves toward it over as many reconciles as
// the guards take (Observation.Stopped ends a wished stop), and the
// Lifecycle condition says what a wish not reached yet waits for.
//
// Long actions. Package action runs a backup, a restore or a failover as
// a Job started from one reconcile and observed over the next ones
// (Pending, Running, Succeeded, Failed with the pod's termination
// message), idempotent by a key, bounded by a deadline, retried with
// backoff and cleaned up by TTL by the Job controller; the status type is
// kitapi.ActionStatus.
//
// Metrics. operatorkit_apply_total{kind,result} and
// operatorkit_lifecycle_transitions_total{kind,from,to,result} are
// registered with controller-runtime's metrics registry.
package operatorkit
