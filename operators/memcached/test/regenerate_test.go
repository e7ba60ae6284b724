package test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"opctl.dev/opctl/pkg/kit"
)

// operator is the memcached operator's directory, and root opctl's.
const operator, root = "..", "../../.."

// TestRegeneratesByteForByte runs the generator on a copy of the operator
// and compares every file with the committed one: generated files are
// current, and no user-owned file is touched.
func TestRegeneratesByteForByte(t *testing.T) {
	p, err := kit.Load(operator)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	want := map[string][]byte{}
	err = filepath.WalkDir(operator, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(operator, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		want[rel] = b
		return writeFile(filepath.Join(dir, rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Outside opctl's module, the copy needs a go.mod to load its
	// packages: the one a scaffold outside the module gets, under another
	// module path (opctl's holds the original's import paths). Imports of
	// the original's paths reach the original, whose API is the same.
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	outside := *p
	outside.OpctlPath = abs
	outside.Repo = "example.com/memcached-regenerated"
	gomod, gosum, err := kit.GoMod(&outside, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "go.mod"), gomod); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "go.sum"), gosum); err != nil {
		t.Fatal(err)
	}

	rep, err := kit.Generate(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Written) != 0 {
		t.Errorf("regeneration wrote %v: run opctl kit generate --dir operators/memcached", rep.Written)
	}
	for rel, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s differs after regeneration: run opctl kit generate --dir operators/memcached", rel)
		}
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if _, ok := want[rel]; !ok && rel != "go.mod" && rel != "go.sum" {
			t.Errorf("regeneration added %s, which is not committed", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
