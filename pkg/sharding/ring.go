package sharding

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sort"
	"strings"
)

// Tokens is the number of points each shard has on a Ring: enough that
// three shards each get within a few percent of a third.
const Tokens = 100

// Ring is a consistent-hash ring: a key belongs to the shard of the first
// point at or after the key's hash. Adding or removing a shard moves only
// the keys of the arcs it gains or loses.
type Ring struct {
	points []uint64
	owners []string
}

// NewRing places Tokens points for each shard. The result depends only on
// the set of shards, not on their order.
func NewRing(shards []string) *Ring {
	type point struct {
		hash  uint64
		shard string
	}
	pts := make([]point, 0, len(shards)*Tokens)
	for _, s := range shards {
		for i := range Tokens {
			pts = append(pts, point{hashOf(s, i), s})
		}
	}
	slices.SortFunc(pts, func(a, b point) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash), strings.Compare(a.shard, b.shard))
	})
	r := &Ring{points: make([]uint64, len(pts)), owners: make([]string, len(pts))}
	for i, p := range pts {
		r.points[i], r.owners[i] = p.hash, p.shard
	}
	return r
}

// Owner is the shard of key, or "" on an empty ring.
func (r *Ring) Owner(key string) string {
	if len(r.points) == 0 {
		return ""
	}
	h := hashOf(key, -1)
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i] >= h })
	if i == len(r.points) {
		i = 0
	}
	return r.owners[i]
}

// hashOf is the first 8 bytes of sha256(s) (with token i when i >= 0):
// stable across processes and versions, and evenly spread.
func hashOf(s string, i int) uint64 {
	h := sha256.New()
	h.Write([]byte(s))
	if i >= 0 {
		// A zero byte separates the shard name from its token number.
		var b [9]byte
		binary.BigEndian.PutUint64(b[1:], uint64(i))
		h.Write(b[:])
	}
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}
