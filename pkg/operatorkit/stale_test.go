package operatorkit

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestStaleVersions(t *testing.T) {
	a, b := types.NamespacedName{Name: "a"}, types.NamespacedName{Name: "b"}
	var s staleVersions
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
}
