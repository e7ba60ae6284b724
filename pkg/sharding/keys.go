package sharding

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// LabelRing marks a shard Lease with the name of its ring.
const LabelRing = "sharding.opctl.dev/ring"

// ShardLabel is the label that assigns an object to a shard of ring.
func ShardLabel(ring string) string { return "shard.sharding.opctl.dev/" + ring }

// DrainLabel, set on an object, asks its shard to let it go.
func DrainLabel(ring string) string { return "drain.sharding.opctl.dev/" + ring }

// Selector selects the objects assigned to shard id of ring.
func Selector(ring, id string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{ShardLabel(ring): id})
}

// Requirement is Selector as one requirement, to add to another selector.
func Requirement(ring, id string) labels.Requirement {
	r, _ := labels.NewRequirement(ShardLabel(ring), selection.Equals, []string{id})
	return *r
}
