package records

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

// releaseSummary is a release whose chart is read for its metadata only:
// the templates, values and files, most of a record, are skipped.
type releaseSummary struct {
	release.Release
	Chart *struct {
		Metadata *chart.Metadata `json:"metadata"`
	} `json:"chart,omitempty"`
}

// chartField ends the first gzip member of a record of ours: the chart,
// the release's last field, is the second member (gzippedRelease).
var chartField = []byte(`"chart":`)

// DecodeRecordSummary reads a record into a release whose chart has its
// metadata only. Of a record of ours it inflates the first member alone,
// and reads the chart's metadata once per chart member (chartMetadata):
// the chart is most of a record, the same for all its tenants, and
// reading a summary is part of every reconcile. A record Helm wrote (one
// member, or no gzip at all) is read whole.
func DecodeRecordSummary(data []byte) (*release.Release, error) {
	raw, err := unbase64(data)
	if err != nil {
		return nil, err
	}
	if !isGzip(raw) {
		return SummaryOf(raw)
	}
	// The inflated member is garbage once decoded: its buffer is reused.
	head := headBuffers.Get().(*bytes.Buffer)
	defer headBuffers.Put(head)
	head.Reset()
	member, err := inflate(raw, head, false) // the first member
	switch {
	case err != nil:
		return nil, err
	case len(member) == 0: // Helm's: one member
		return SummaryOf(head.Bytes())
	case !bytes.HasSuffix(head.Bytes(), chartField):
		whole, err := Gunzip(raw)
		if err != nil {
			return nil, err
		}
		return SummaryOf(whole)
	}
	head.WriteString("null}")
	var rel release.Release
	if err := json.Unmarshal(head.Bytes(), &rel); err != nil {
		return nil, err
	}
	md, err := chartMetadata(member)
	if errors.Is(err, errAfterChart) {
		whole, err := Gunzip(raw)
		if err != nil {
			return nil, err
		}
		return SummaryOf(whole)
	}
	if err != nil {
		return nil, err
	}
	rel.Chart = &chart.Chart{Metadata: md}
	return &rel, nil
}

// errAfterChart is a chart member with more than the record's closing
// brace after the chart: not ours. Such a record is read whole, as Helm
// reads it, so that its summary says what the record says.
var errAfterChart = errors.New("the record's chart member goes on after the chart")

// headBuffers are the buffers first members inflate into.
var headBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// SummaryOf reads a record's whole JSON into a summary.
func SummaryOf(b []byte) (*release.Release, error) {
	var s releaseSummary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	rel := s.Release
	if s.Chart != nil {
		rel.Chart = &chart.Chart{Metadata: s.Chart.Metadata}
	}
	return &rel, nil
}

// chartMetadatas holds the metadata of the chart members most recently
// read, by their compressed bytes' digest.
var chartMetadatas = NewFIFO[[sha256.Size]byte, *chart.Metadata](16)

// chartMetadata is the metadata of a record's chart member (the chart's
// JSON and the record's closing brace), a copy of its own.
func chartMetadata(member []byte) (*chart.Metadata, error) {
	md, err := chartMetadatas.Get(sha256.Sum256(member), func() (*chart.Metadata, error) {
		b, err := Gunzip(member)
		if err != nil {
			return nil, err
		}
		var c struct {
			Metadata *chart.Metadata `json:"metadata"`
		}
		// The chart is the member's first value: the brace after it closes
		// the record.
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&c); err != nil {
			return nil, err
		}
		if !bytes.Equal(bytes.TrimSpace(b[dec.InputOffset():]), []byte("}")) {
			return nil, errAfterChart
		}
		return c.Metadata, nil
	})
	if err != nil || md == nil {
		return nil, err
	}
	own := *md
	return &own, nil
}
