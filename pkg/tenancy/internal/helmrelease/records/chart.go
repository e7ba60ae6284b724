package records

import (
	"crypto/sha256"
	"encoding/json"
	"slices"

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
	last, err := chartMember(chartJSON, level)
	if err != nil {
		return nil, err
	}
	return append(first, last...), nil
}

// chartMembers holds the gzip members of the charts most recently
// written, by content and level: a chart's JSON and the closing brace of
// its record.
var chartMembers = NewFIFO[memberKey, []byte](16)

type memberKey struct {
	sum   [sha256.Size]byte
	level int
}

// chartMember is chartJSON followed by "}", gzipped at level, compressed
// only when chartMembers does not hold it.
func chartMember(chartJSON []byte, level int) ([]byte, error) {
	return chartMembers.Get(memberKey{sha256.Sum256(chartJSON), level}, func() ([]byte, error) {
		gz, err := gzipped(append(slices.Clip(chartJSON), '}'), level)
		return slices.Clip(gz), err
	})
}
