package operatorkit

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HashFieldsAnnotation, set on a desired object to a comma-separated list
// of dotted paths, restricts change detection to those fields (see
// Resource.HashFields). The Applier reads it and never sends it.
const HashFieldsAnnotation = "operatorkit.opctl.dev/hash-fields"

// Base is the part of a Handler that a Registry does not assemble from
// its resources: the check of the custom resource and its own status.
type Base[T Object] interface {
	Check(ctx context.Context, obj T) error
	Status(ctx context.Context, obj T, applied []ApplyResult) (Observation, error)
}

// RegistryOptions tune a Registry.
type RegistryOptions struct {
	// MaxCreates bounds the objects created per reconcile; the others are
	// created by the next reconciles. Zero is unbounded.
	MaxCreates int
}

// Registry is a Handler assembled from a list of resources: every one
// goes through the same create, update or unchanged decision of the
// Reconciler. Build one with NewRegistry.
type Registry[T Object] struct {
	client    client.Client
	base      Base[T]
	resources []Resource[T]
	jobs      []JobResource[T]
	opts      RegistryOptions
}

// NewRegistry returns the Handler of base and resources, which reads the
// live objects through c (the manager's client).
func NewRegistry[T Object](c client.Client, base Base[T], opts RegistryOptions, resources ...Resource[T]) *Registry[T] {
	return &Registry[T]{client: c, base: base, resources: resources, opts: opts}
}

// MaxCreates is RegistryOptions.MaxCreates; the Reconciler uses it when
// its own Options do not set one.
func (r *Registry[T]) MaxCreates() int { return r.opts.MaxCreates }

// Check runs the base's check.
func (r *Registry[T]) Check(ctx context.Context, obj T) error { return r.base.Check(ctx, obj) }

// Build returns one object per resource, named, with its initial data.
func (r *Registry[T]) Build(ctx context.Context, obj T) ([]client.Object, error) {
	objs := make([]client.Object, len(r.resources))
	for i, res := range r.resources {
		o := res.New(obj)
		if err := res.InitialData(ctx, obj, o); err != nil {
			return nil, fmt.Errorf("initial data of %s: %w", o.GetName(), err)
		}
		objs[i] = o
	}
	return objs, nil
}

// Mutate keeps the initial data of the objects that exist, copies the
// custom resource's fields into every object, and marks the fields that
// go into the change detection.
func (r *Registry[T]) Mutate(ctx context.Context, obj T, objs []client.Object) error {
	if len(objs) != len(r.resources) {
		return fmt.Errorf("mutate: %d objects for %d resources", len(objs), len(r.resources))
	}
	for i, res := range r.resources {
		o := objs[i]
		if err := r.keepLive(ctx, obj, res, o); err != nil {
			return err
		}
		if err := res.FromCR(ctx, obj, o); err != nil {
			return fmt.Errorf("%s from the custom resource: %w", o.GetName(), err)
		}
		if paths := res.HashFields(); len(paths) > 0 {
			ann := o.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[HashFieldsAnnotation] = strings.Join(paths, ",")
			o.SetAnnotations(ann)
		}
	}
	return nil
}

// keepLive sets the initial data of o to the live object's, if it exists.
func (r *Registry[T]) keepLive(ctx context.Context, owner T, res Resource[T], o client.Object) error {
	live := res.New(owner)
	if err := r.client.Get(ctx, r.key(owner, live), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading %s: %w", o.GetName(), err)
	}
	return keepInitial(o, live)
}

// key is where o lives: in the owner's namespace unless it names another.
func (r *Registry[T]) key(owner T, o client.Object) client.ObjectKey {
	key := client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetName()}
	if key.Namespace == "" {
		key.Namespace = owner.GetNamespace()
	}
	return key
}

// Status runs the base's status and the wanted long actions, then
// reports the owner not Ready while a resource with readiness is not.
func (r *Registry[T]) Status(ctx context.Context, obj T, applied []ApplyResult) (Observation, error) {
	o, err := r.base.Status(ctx, obj, applied)
	if err != nil {
		return o, err
	}
	if err := r.runJobs(ctx, obj, &o); err != nil {
		return o, err
	}
	for _, res := range r.resources {
		rr, ok := res.(ResourceReadiness)
		if !ok {
			continue
		}
		live := res.New(obj)
		key := r.key(obj, live)
		waiting := ""
		if err := r.client.Get(ctx, key, live); apierrors.IsNotFound(err) {
			waiting = "to be created"
		} else if err != nil {
			return o, fmt.Errorf("reading %s: %w", key, err)
		} else if ready, why := rr.Ready(live); !ready {
			waiting = why
		}
		if waiting != "" && o.Ready {
			o.Ready, o.Progressing = false, true
			o.Message = fmt.Sprintf("waiting for %s %s", live.GetName(), waiting)
		}
	}
	return o, nil
}
