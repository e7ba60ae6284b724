package operatorkit

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestStaleVersions(t *testing.T) {
	a, b := types.NamespacedName{Name: "a"}, types.NamespacedName{Name: "b"}
	now := time.Unix(0, 0)
	s := staleVersions{now: func() time.Time { return now }}
	if s.behind(a, "1") {
		t.Fatal("nothing written: behind")
	}
	s.wrote(a, []string{"1", "2"}) // read 1, patched to 2, then to 3
	s.wrote(b, nil)                // wrote nothing
	steps := []struct {
		key    types.NamespacedName
		rv     string
		behind bool
	}{
		{a, "1", true}, // the cache still has the version read
		{a, "2", true}, // or the one between the writes
		{b, "1", false},
		{a, "3", false}, // caught up: done with
		{a, "1", false}, // so an old version no longer counts
	}
	for i, st := range steps {
		if got := s.behind(st.key, st.rv); got != st.behind {
			t.Errorf("step %d: behind(%s, %s) = %v, want %v", i, st.key.Name, st.rv, got, st.behind)
		}
	}
	s.wrote(a, []string{"7"})
	s.forget(a)
	if s.behind(a, "7") {
		t.Error("forgotten, still behind")
	}
	// A cache that does not catch up holds the object back for staleWait
	// at most.
	s.wrote(a, []string{"8"})
	now = now.Add(staleWait - time.Millisecond)
	if !s.behind(a, "8") {
		t.Error("within staleWait: not behind")
	}
	now = now.Add(time.Millisecond)
	if s.behind(a, "8") {
		t.Error("past staleWait: still behind")
	}
}
