package tenancy

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"sync"

	"helm.sh/helm/v3/pkg/release"
)

// gzippedRelease is rel's JSON, gzipped as two members of one gzip stream
// (RFC 1952 allows several; Go's and so Helm's readers read them as one):
// the release without its chart and then the chart, as the object's last
// field. Every tenant of a chart stores the same chart, so its member is
// compressed once (chartMembers) instead of on every record write, where
// it was most of the work.
func gzippedRelease(rel *release.Release, level int) ([]byte, error) {
	if rel.Chart == nil {
		b, err := json.Marshal(rel)
		if err != nil {
			return nil, err
		}
		return gzipped(b, level)
	}
	chartJSON, err := json.Marshal(rel.Chart)
	if err != nil {
		return nil, err
	}
	bare := *rel
	bare.Chart = nil
	head, err := json.Marshal(&bare)
	if err != nil {
		return nil, err
	}
	// head is {...}: the chart follows its last field.
	head = append(head[:len(head)-1], `,"chart":`...)
	if len(head) == len(`{,"chart":`) {
		head = append(head[:1], `"chart":`...)
	}
	first, err := gzipped(head, level)
	if err != nil {
		return nil, err
	}
	last, err := chartMembers.get(chartJSON, level)
	if err != nil {
		return nil, err
	}
	return append(first, last...), nil
}

// chartMembers holds the gzip members of the charts most recently
// written, by content: a chart's JSON and the closing brace of its record.
var chartMembers = &memberCache{max: 16, byKey: map[memberKey][]byte{}}

type memberKey struct {
	sum   [sha256.Size]byte
	level int
}

// memberCache is a small map of gzip members that forgets the oldest.
type memberCache struct {
	mu    sync.Mutex
	max   int
	order []memberKey
	byKey map[memberKey][]byte
}

// get returns chartJSON followed by "}" gzipped at level, compressing it
// only when it is not held.
func (m *memberCache) get(chartJSON []byte, level int) ([]byte, error) {
	key := memberKey{sha256.Sum256(chartJSON), level}
	m.mu.Lock()
	gz, ok := m.byKey[key]
	m.mu.Unlock()
	if ok {
		return gz, nil
	}
	gz, err := gzipped(append(slices.Clip(chartJSON), '}'), level)
	if err != nil {
		return nil, err
	}
	gz = slices.Clip(gz)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[key]; !ok {
		if len(m.order) == m.max {
			delete(m.byKey, m.order[0])
			m.order = m.order[1:]
		}
		m.order = append(m.order, key)
		m.byKey[key] = gz
	}
	return gz, nil
}
