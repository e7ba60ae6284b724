package operatorkit

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ScopedHandler is a Handler whose Check works out a value of type S, the
// scope of one reconcile (a plan, in cluster-api's terms), which the later
// steps of the same reconcile receive. Nothing outlives the reconcile, so
// there is no map of plans to keep or to clean up. Wrap it with Scoped.
type ScopedHandler[T Object, S any] interface {
	Check(ctx context.Context, obj T) (S, error)
	Build(ctx context.Context, obj T, scope S) ([]client.Object, error)
	Mutate(ctx context.Context, obj T, scope S, objs []client.Object) error
	Status(ctx context.Context, obj T, scope S, applied []ApplyResult) (Observation, error)
}

// ScopedRepairer is the optional repair step of a ScopedHandler.
type ScopedRepairer[T Object, S any] interface {
	Repair(ctx context.Context, obj T, scope S, applied []ApplyResult) error
}

// Scoped adapts h to a Handler. The Reconciler keeps the scope Check
// returns for the steps of that reconcile; on deletion Check does not run
// and Build gets the zero S. An optional Finalizing step of h is kept.
func Scoped[T Object, S any](h ScopedHandler[T, S]) Handler[T] {
	return scoped[T, S]{h}
}

type scoped[T Object, S any] struct{ h ScopedHandler[T, S] }

// scopeSlot holds one reconcile's scope; the Reconciler puts a fresh one
// in the context of each reconcile.
type scopeSlot struct{ v any }

type scopeKey struct{}

func withScopeSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, scopeKey{}, &scopeSlot{})
}

func scopeOf[S any](ctx context.Context) S {
	var zero S
	if slot, ok := ctx.Value(scopeKey{}).(*scopeSlot); ok {
		if s, ok := slot.v.(S); ok {
			return s
		}
	}
	return zero
}

func (a scoped[T, S]) Check(ctx context.Context, obj T) error {
	s, err := a.h.Check(ctx, obj)
	if slot, ok := ctx.Value(scopeKey{}).(*scopeSlot); ok {
		slot.v = s
	}
	return err
}

func (a scoped[T, S]) Build(ctx context.Context, obj T) ([]client.Object, error) {
	return a.h.Build(ctx, obj, scopeOf[S](ctx))
}

func (a scoped[T, S]) Mutate(ctx context.Context, obj T, objs []client.Object) error {
	return a.h.Mutate(ctx, obj, scopeOf[S](ctx), objs)
}

func (a scoped[T, S]) Status(ctx context.Context, obj T, applied []ApplyResult) (Observation, error) {
	return a.h.Status(ctx, obj, scopeOf[S](ctx), applied)
}

func (a scoped[T, S]) Repair(ctx context.Context, obj T, applied []ApplyResult) error {
	if r, ok := a.h.(ScopedRepairer[T, S]); ok {
		return r.Repair(ctx, obj, scopeOf[S](ctx), applied)
	}
	return nil
}

func (a scoped[T, S]) Finalize(ctx context.Context, obj T, policy DeletionPolicy) (bool, error) {
	if f, ok := a.h.(Finalizing[T]); ok {
		return f.Finalize(ctx, obj, policy)
	}
	return true, nil
}
