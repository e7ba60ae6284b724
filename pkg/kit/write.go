package kit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Report says what a run did with each file.
type Report struct {
	// Written files were created or changed.
	Written []string
	// Unchanged generated files already had these bytes.
	Unchanged []string
	// Skipped user-owned files exist, and were left as they are.
	Skipped []string
}

// Write writes files under dir: generated files when their bytes differ,
// user-owned files only when they do not exist.
func Write(dir string, files []File) (Report, error) {
	var r Report
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		old, err := os.ReadFile(path)
		switch {
		case err == nil && f.Owner == User:
			r.Skipped = append(r.Skipped, f.Path)
			continue
		case err == nil && bytes.Equal(old, f.Content):
			r.Unchanged = append(r.Unchanged, f.Path)
			continue
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return r, fmt.Errorf("reading %s: %w", f.Path, err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return r, fmt.Errorf("creating the directory of %s: %w", f.Path, err)
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			return r, fmt.Errorf("writing %s: %w", f.Path, err)
		}
		r.Written = append(r.Written, f.Path)
	}
	return r, nil
}
