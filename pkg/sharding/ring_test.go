package sharding

import (
	"fmt"
	"testing"
)

func keys(n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = fmt.Sprintf("tenant-%04d", i)
	}
	return k
}

func TestRingBalance(t *testing.T) {
	ring := NewRing([]string{"a", "b", "c"})
	count := map[string]int{}
	for _, k := range keys(3000) {
		count[ring.Owner(k)]++
	}
	for _, s := range []string{"a", "b", "c"} {
		// Within 20% of an even third.
		if count[s] < 800 || count[s] > 1200 {
			t.Errorf("shard %s owns %d of 3000 keys, want 800..1200 (all: %v)", s, count[s], count)
		}
	}
}

func TestRingOrderAndEmpty(t *testing.T) {
	a, b := NewRing([]string{"x", "y", "z"}), NewRing([]string{"z", "x", "y"})
	for _, k := range keys(500) {
		if a.Owner(k) != b.Owner(k) {
			t.Fatalf("key %s: %s in one order, %s in another", k, a.Owner(k), b.Owner(k))
		}
	}
	if got := NewRing(nil).Owner("k"); got != "" {
		t.Errorf("an empty ring gave %q", got)
	}
}

// A change of membership moves only the keys of the shard that left or
// to the shard that joined.
func TestRingMinimalMoves(t *testing.T) {
	three := NewRing([]string{"a", "b", "c"})
	tests := []struct {
		name    string
		ring    *Ring
		movedTo func(from, to string) bool // an allowed move
	}{
		{"join d", NewRing([]string{"a", "b", "c", "d"}), func(_, to string) bool { return to == "d" }},
		{"leave b", NewRing([]string{"a", "c"}), func(from, _ string) bool { return from == "b" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			moved := 0
			for _, k := range keys(2000) {
				from, to := three.Owner(k), tc.ring.Owner(k)
				if from == to {
					continue
				}
				moved++
				if !tc.movedTo(from, to) {
					t.Fatalf("key %s moved from %s to %s", k, from, to)
				}
			}
			if moved == 0 {
				t.Fatal("no key moved")
			}
		})
	}
}
