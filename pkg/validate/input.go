package validate

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxFileBytes is the largest file opctl validate reads.
const MaxFileBytes = 10 << 20

// maxArchiveBytes bounds the uncompressed size of a chart archive.
const maxArchiveBytes = 100 << 20

// projectSkipped are the folders of an operator project that opctl
// package never reads: tool binaries (make's bin/), build output, vendored
// modules and version control. A manager binary or a git pack there is
// routinely over MaxFileBytes.
var projectSkipped = map[string]bool{".git": true, "bin": true, "dist": true, "testbin": true, "vendor": true, "node_modules": true}

// checkProjectTree is checkTree of an operator project: the folders in
// projectSkipped are not looked at.
func checkProjectTree(root string) error { return walkBounded(root, projectSkipped) }

// checkTree refuses a directory holding files over MaxFileBytes or links
// that point outside it.
func checkTree(root string) error { return walkBounded(root, nil) }

func walkBounded(root string, skip map[string]bool) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", root, err)
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", p, err)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fmt.Errorf("%s is a broken symlink: %w", p, err)
			}
			if rel, err := filepath.Rel(realRoot, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fmt.Errorf("%s is a symlink to %s, outside %s: refused", p, target, root)
			}
			return nil
		}
		if d.IsDir() {
			if skip[d.Name()] && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() > MaxFileBytes {
			return fmt.Errorf("%s is %d bytes, over the 10 MiB limit for one file", p, fi.Size())
		}
		return nil
	})
}

// checkArchive refuses a chart archive with absolute or parent paths,
// links of any kind, files over MaxFileBytes or more than 100 MiB in all.
func checkArchive(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", file, err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s is not a gzip chart archive: %w", file, err)
	}
	tr := tar.NewReader(gz)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		name := filepath.ToSlash(h.Name)
		switch {
		case path.IsAbs(name) || strings.HasPrefix(name, "../") || strings.Contains(name, "/../") || name == "..":
			return fmt.Errorf("%s: entry %q leaves the archive root: refused", file, h.Name)
		case h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink:
			return fmt.Errorf("%s: entry %q is a link to %q: charts carry no links, refused", file, h.Name, h.Linkname)
		case h.Size > MaxFileBytes:
			return fmt.Errorf("%s: entry %q is %d bytes, over the 10 MiB limit for one file", file, h.Name, h.Size)
		}
		total += h.Size
		if total > maxArchiveBytes {
			return fmt.Errorf("%s unpacks to more than 100 MiB: refused", file)
		}
	}
}
