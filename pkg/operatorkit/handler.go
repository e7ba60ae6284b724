package operatorkit

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Handler is what an operator writes: the steps of a reconcile that are
// specific to its kind. The Reconciler calls them in order:
//
//	Check → Build → Mutate → (apply) → Status
//
// and, on deletion, Build to find the objects to remove or disconnect.
type Handler[T Object] interface {
	// Check validates the object before anything is touched. Return a
	// Terminal error for a spec that cannot work (an unsupported version,
	// say): nothing is applied and the object reports Degraded and Stalled.
	Check(ctx context.Context, obj T) error
	// Build returns the objects obj owns, named and with their defaults.
	Build(ctx context.Context, obj T) ([]client.Object, error)
	// Mutate sets the fields of the built objects that come from obj's
	// spec.
	Mutate(ctx context.Context, obj T, objs []client.Object) error
	// Status reads the cluster after the apply, fills in obj's own status
	// fields and returns what it observed.
	Status(ctx context.Context, obj T, applied []ApplyResult) (Observation, error)
}

// Repairer is an optional Handler step that runs after the apply, for
// fixes an apply cannot make, such as deleting pods stuck on a revision
// that was rolled back.
type Repairer[T Object] interface {
	Repair(ctx context.Context, obj T, applied []ApplyResult) error
}

// Finalizing is an optional Handler step for deletion: it runs before the
// managed objects are deleted or disconnected, for things that are not
// objects the Reconciler manages (a Helm release, say). It returns done
// once it has finished; until then the deletion waits and retries.
type Finalizing[T Object] interface {
	Finalize(ctx context.Context, obj T, policy DeletionPolicy) (done bool, err error)
}

// Pausable is an optional Object interface: a paused object is not
// reconciled, as with the PausedAnnotation.
type Pausable interface {
	KitPaused() bool
}

// Observation is what Handler.Status observed. The Reconciler turns it
// into conditions and a lifecycle transition.
type Observation struct {
	// Ready: the application serves as specified.
	Ready bool
	// Available: the application serves, at whatever version.
	Available bool
	// Progressing: a change is rolling out.
	Progressing bool
	// Reason and Message explain Ready and Progressing.
	Reason, Message string
	// Degraded, when set, is a problem that needs attention.
	Degraded *Problem
	// RequestPhase, when set, asks for a specific lifecycle transition
	// instead of the one the guards pick.
	RequestPhase string
	// Stopped: the application has stopped, as a wish for Stopping asked
	// (see Wisher); the lifecycle then goes from Stopping to Ended.
	Stopped bool
	// RequeueAfter asks for another reconcile, for timers such as an
	// upgrade deadline.
	RequeueAfter time.Duration
}

// Problem is a Degraded condition. Stalled problems need a spec change.
type Problem struct {
	Reason, Message string
	Stalled         bool
}
