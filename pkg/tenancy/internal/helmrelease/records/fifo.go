package records

import "sync"

// FIFO is a small concurrent map that forgets its oldest entry past max:
// for what the controller derives from a chart once (a record's chart
// member, a compiled values schema), while a few charts are in use.
type FIFO[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order []K
	byKey map[K]V
}

func NewFIFO[K comparable, V any](max int) *FIFO[K, V] {
	return &FIFO[K, V]{max: max, byKey: map[K]V{}}
}

// Get returns the value of key, made by build when it is not held. build
// runs outside the lock; when two build one at once, the first kept wins.
func (f *FIFO[K, V]) Get(key K, build func() (V, error)) (V, error) {
	f.mu.Lock()
	v, ok := f.byKey[key]
	f.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if held, ok := f.byKey[key]; ok {
		return held, nil
	}
	if len(f.order) == f.max {
		delete(f.byKey, f.order[0])
		f.order = f.order[1:]
	}
	f.order = append(f.order, key)
	f.byKey[key] = v
	return v, nil
}
