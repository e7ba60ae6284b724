package ocilayer

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one regular file, by slash path. Mode zero means 0644.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// Tar archives files under prefix with a fixed owner (root) and mtime;
// with dirs, each parent directory gets an entry before its first file.
func Tar(prefix string, files []File, mtime time.Time, dirs bool) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	var dir func(p string) error
	dir = func(p string) error {
		if !dirs || p == "." || p == "/" || p == "" || seen[p] {
			return nil
		}
		if err := dir(path.Dir(p)); err != nil {
			return err
		}
		seen[p] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX})
	}
	for _, f := range files {
		name := path.Join(prefix, f.Path)
		if err := dir(path.Dir(name)); err != nil {
			return nil, err
		}
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(mode), Size: int64(len(f.Data)), ModTime: mtime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Layer is a gzip-compressed OCI layer of files under prefix, with
// directory entries.
func Layer(prefix string, files []File, mtime time.Time) (v1.Layer, error) {
	b, err := Tar(prefix, files, mtime, true)
	if err != nil {
		return nil, fmt.Errorf("archiving %s: %w", prefix, err)
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
