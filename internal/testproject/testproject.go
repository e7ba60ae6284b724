// Package testproject makes variants of the sample operator project for
// tests: a copy under an API group of its own (so that a test owns its CRD
// on a shared control plane) and edits of that CRD.
package testproject

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SampleGroup is the sample operator's API group.
const SampleGroup = "kv.opctl.dev"

// specProps is where the KVStore CRD lists its spec fields.
const specProps = "            properties:\n              adoptExisting:"

// UnderGroup copies the sample project at src into a temporary directory
// with its API group renamed to group, and returns the copy and the path
// of its KVStore CRD.
func UnderGroup(t testing.TB, src, group string) (dir, crdFile string) {
	t.Helper()
	dir = Copy(t, src, SampleGroup, group)
	return dir, filepath.Join(dir, "config", "crd", "bases", group+"_kvstores.yaml")
}

// Copy copies the project at src into a temporary directory with every
// occurrence of from, in contents and in file names, replaced by to (an
// API group of the test's own, say), and returns the copy.
func Copy(t testing.TB, src, from, to string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(filepath.Clean(src)))
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if s := strings.ReplaceAll(string(b), from, to); s != string(b) {
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				return err
			}
		}
		if base := filepath.Base(p); strings.Contains(base, from) {
			return os.Rename(p, filepath.Join(filepath.Dir(p), strings.ReplaceAll(base, from, to)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Edit rewrites path with edit; an edit that changes nothing fails the
// test.
func Edit(t testing.TB, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := edit(string(b))
	if edited == string(b) {
		t.Fatalf("the edit of %s changed nothing", path)
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
}

// AddSpecField adds a string field to the KVStore CRD's spec.
func AddSpecField(crd, name, description string) string {
	return strings.Replace(crd, specProps, "            properties:\n              "+name+
		":\n                description: "+description+"\n                type: string\n              adoptExisting:", 1)
}
