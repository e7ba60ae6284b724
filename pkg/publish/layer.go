package publish

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

// file is one regular file of an artifact, by slash path.
type file struct {
	Path string
	Data []byte
}

// readTree returns the regular files under root, sorted by path (fs.WalkDir
// walks in lexical order). Symlinks and other special files are refused:
// they would not survive into an image reproducibly.
func readTree(root fs.FS) ([]file, error) {
	var files []file
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file: remove it or replace it with a copy", p)
		}
		b, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		files = append(files, file{Path: p, Data: b})
		return nil
	})
	return files, err
}

// tarFiles writes files under prefix as a reproducible tar: parent
// directories first, fixed owner, modes and modification time.
func tarFiles(prefix string, files []file, mtime time.Time) ([]byte, error) {
	return writeTar(prefix, files, mtime, true)
}

// tarFilesOnly is tarFiles without directory entries, as Helm archives are.
func tarFilesOnly(prefix string, files []file, mtime time.Time) ([]byte, error) {
	return writeTar(prefix, files, mtime, false)
}

func writeTar(prefix string, files []file, mtime time.Time, dirs bool) ([]byte, error) {
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
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(f.Data)), ModTime: mtime, Format: tar.FormatPAX}
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

// newLayer makes a gzip-compressed OCI layer of files under prefix.
func newLayer(prefix string, files []file, mtime time.Time) (v1.Layer, error) {
	b, err := tarFiles(prefix, files, mtime)
	if err != nil {
		return nil, fmt.Errorf("archiving %s: %w", prefix, err)
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
