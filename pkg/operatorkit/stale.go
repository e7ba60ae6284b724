package operatorkit

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// staleVersions remembers, per object, the resourceVersions a reconcile
// read and then wrote past (its finalizer and status patches). Until the
// cache shows another version, a reconcile would decide from state older
// than the controller's own last write: a status that records what was
// done, such as a version already rolled back, would be missing, and the
// work would be done again.
type staleVersions struct {
	mu sync.Mutex
	m  map[types.NamespacedName][]string
}

// behind reports whether rv is a version this controller wrote past. A
// version it did not write past is the cache catching up (or another
// writer's): the entry is done with.
func (s *staleVersions) behind(key types.NamespacedName, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.m[key], rv) {
		return true
	}
	delete(s.m, key)
	return false
}

// wrote records that a reconcile of key wrote past the versions passed.
func (s *staleVersions) wrote(key types.NamespacedName, passed []string) {
	if len(passed) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.NamespacedName][]string{}
	}
	s.m[key] = passed
}

// forget drops key, once its object is gone.
func (s *staleVersions) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}
