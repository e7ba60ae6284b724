package publish

import (
	"fmt"
	"io/fs"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"opctl.dev/opctl/internal/ocilayer"
)

// file is one regular file of an artifact, by slash path.
type file = ocilayer.File

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

// tarFilesOnly is tarFiles without directory entries, as Helm archives are.
func tarFilesOnly(prefix string, files []file, mtime time.Time) ([]byte, error) {
	return ocilayer.Tar(prefix, files, mtime, false)
}

// newLayer makes a gzip-compressed OCI layer of files under prefix.
func newLayer(prefix string, files []file, mtime time.Time) (v1.Layer, error) {
	return ocilayer.Layer(prefix, files, mtime)
}
