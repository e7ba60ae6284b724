package publish

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// chartArchive is a packaged chart.
type chartArchive struct {
	Name, Version string
	Data          []byte // .tgz
	Digest        string // sha256:<hex> of Data
	Metadata      *chart.Metadata
}

// packChart packages the chart in dir like `helm package`, but
// reproducibly: files sorted, fixed modification time, no gzip timestamp.
// The archive is loaded back to prove Helm accepts it.
func packChart(dir string, mtime time.Time) (*chartArchive, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	if err := ch.Validate(); err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	files := make([]file, 0, len(ch.Raw))
	for _, f := range ch.Raw {
		files = append(files, file{Path: f.Name, Data: f.Data})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	tarball, err := tarFilesOnly(ch.Name(), files, mtime)
	if err != nil {
		return nil, fmt.Errorf("archiving chart %s: %w", dir, err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(tarball); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if _, err := loader.LoadArchive(bytes.NewReader(gz.Bytes())); err != nil {
		return nil, fmt.Errorf("chart archive of %s does not load back: %w", dir, err)
	}
	sum := sha256.Sum256(gz.Bytes())
	return &chartArchive{
		Name: ch.Name(), Version: ch.Metadata.Version, Data: gz.Bytes(),
		Digest: "sha256:" + hex.EncodeToString(sum[:]), Metadata: ch.Metadata,
	}, nil
}

// FileName is the archive's conventional file name.
func (c *chartArchive) FileName() string {
	return fmt.Sprintf("%s-%s.tgz", c.Name, c.Version)
}
