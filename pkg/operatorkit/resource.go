package operatorkit

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Resource is one object that a custom resource of type T owns, in the
// shape every resource of every operator shares: where it is (New), what
// it starts with (InitialData), what it takes from the custom resource
// (FromCR) and which of its fields decide whether it must be written
// (HashFields). A Registry assembles a Handler from a list of them.
type Resource[T Object] interface {
	// New returns the empty object of this resource for owner: its type
	// and name, and its namespace when it is not the owner's.
	New(owner T) client.Object
	// HashFields lists the fields, as dotted paths such as "spec" or
	// "data", whose change writes the object; a change elsewhere does not.
	// Nil means every field.
	HashFields() []string
	// InitialData fills obj with what it has at creation: defaults, and
	// data that must never change afterwards (a generated password). Once
	// the object exists, the fields InitialData sets keep their live
	// values (a list is kept whole), and FromCR runs on them.
	InitialData(ctx context.Context, owner T, obj client.Object) error
	// FromCR copies the fields that come from the custom resource into
	// obj, after InitialData.
	FromCR(ctx context.Context, owner T, obj client.Object) error
}

// ResourceReadiness is an optional Resource method: whether the live
// object serves, and if not, what it waits for. A Registry reports its
// owner Ready only when every such resource is.
type ResourceReadiness interface {
	Ready(live client.Object) (ready bool, waitingFor string)
}
