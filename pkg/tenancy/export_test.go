package tenancy

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"

	"helm.sh/helm/v3/pkg/release"
)

// For the external tests and benchmarks.
var (
	QuotaCounted  = quotaCounted
	RolledOut     = rolledOut
	DecodeRelease = decodeRelease
)

// decodeRelease reads a release record's data as Helm's Secrets driver
// writes it: base64 of gzipped JSON.
func decodeRelease(data string) (*release.Release, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b, 0x08}) {
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if b, err = io.ReadAll(r); err != nil {
			return nil, err
		}
	}
	var rel release.Release
	return &rel, json.Unmarshal(b, &rel)
}
