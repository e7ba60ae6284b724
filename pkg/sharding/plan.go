package sharding

// Object is what Plan reads of an object: its name, the shard its label
// names ("" when unassigned) and whether it is draining.
type Object struct {
	Name     string
	Shard    string
	Draining bool
}

// Change is one label change of an object: assign it to To (removing any
// drain label), or, when Drain is set, ask its shard to let it go.
type Change struct {
	Name  string
	To    string
	Drain bool
}

// Plan decides the label changes that bring objects to the shards ring
// assigns over the live shards:
//   - an unassigned object, or one of a shard that is gone, is assigned at
//     once;
//   - an object of a live shard that the ring gives to another is drained
//     first, and assigned once its shard has removed the labels;
//   - a draining object is left to its shard.
//
// With no live shard nothing changes.
func Plan(objects []Object, ring *Ring, live []string) []Change {
	if len(live) == 0 {
		return nil
	}
	alive := make(map[string]bool, len(live))
	for _, s := range live {
		alive[s] = true
	}
	var changes []Change
	for _, o := range objects {
		want := ring.Owner(o.Name)
		switch {
		case o.Shard == "" || !alive[o.Shard]:
			changes = append(changes, Change{Name: o.Name, To: want})
		case o.Draining, o.Shard == want:
		default:
			changes = append(changes, Change{Name: o.Name, Drain: true})
		}
	}
	return changes
}
