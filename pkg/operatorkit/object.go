package operatorkit

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

// The API types custom resources embed live in the leaf package kitapi,
// so that API packages do not import operatorkit; these are the same types.
type (
	// DeletionPolicy is kitapi.DeletionPolicy.
	DeletionPolicy = kitapi.DeletionPolicy
	// Status is kitapi.Status.
	Status = kitapi.Status
)

// The deletion policies.
const (
	DeletionDelete = kitapi.DeletionDelete
	DeletionOrphan = kitapi.DeletionOrphan
)

// Object is a custom resource that operatorkit reconciles.
type Object interface {
	client.Object
	// KitStatus returns the embedded operatorkit Status, for writing.
	KitStatus() *Status
	// KitDeletionPolicy returns spec.deletionPolicy; empty means Delete.
	KitDeletionPolicy() DeletionPolicy
	// KitAdoptionAllowed reports whether objects that already exist with
	// the expected names and no controller may be adopted.
	KitAdoptionAllowed() bool
}

// Wisher is an optional Object interface: the lifecycle phase the user
// wishes for in the spec (empty for none). The Reconciler moves toward it
// along the lifecycle graph, over as many reconciles as its guards take,
// and says in the Lifecycle condition what a wish waits for.
type Wisher interface {
	KitWish() lifecycle.Phase
}
