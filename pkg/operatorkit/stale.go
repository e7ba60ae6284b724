package operatorkit

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// staleWait bounds how long reconciles of an object wait for the cache to
// show a write of this controller. Past it they go ahead as they would
// without the wait: a cache that does not catch up (a watch broken for
// longer) must not stop the object's reconciles.
const staleWait = 10 * time.Second

// staleVersions remembers, per object, the resourceVersions a reconcile
// read and then wrote past (its finalizer and status patches). Until the
// cache shows another version, a reconcile would decide from state older
// than the controller's own last write: a status that records what was
// done, such as a version already rolled back, would be missing, and the
// work would be done again.
type staleVersions struct {
	mu  sync.Mutex
	m   map[types.NamespacedName]staleEntry
	now func() time.Time // time.Now; tests set it
}

type staleEntry struct {
	versions []string
	at       time.Time
}

// behind reports whether rv is a version this controller wrote past, less
// than staleWait ago. Any other version is the cache catching up (or
// another writer's): the entry is done with.
func (s *staleVersions) behind(key types.NamespacedName, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if ok && slices.Contains(e.versions, rv) && s.clock().Sub(e.at) < staleWait {
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
		s.m = map[types.NamespacedName]staleEntry{}
	}
	s.m[key] = staleEntry{versions: passed, at: s.clock()}
}

// forget drops key, once its object is gone.
func (s *staleVersions) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

func (s *staleVersions) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}
