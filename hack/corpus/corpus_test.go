package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReadList(t *testing.T) {
	commit := strings.Repeat("a", 40)
	tests := []struct {
		name, text, err string
		want            []project
	}{
		{"lines, comments and an overlay", "# header\no/r " + commit + " sub go-v4,webhooks overlay=config/prod # why\n\no/s " + commit + " . go-v3\n", "",
			[]project{{Repo: "o/r", Commit: commit, Subdir: "sub", Classes: []string{"go-v4", "webhooks"}, Overlay: "config/prod"},
				{Repo: "o/s", Commit: commit, Subdir: ".", Classes: []string{"go-v3"}, Overlay: "config/default"}}},
		{"short commit", "o/r abc . x\n", "is not 40 hex digits", nil},
		{"no owner", "r " + commit + " . x\n", "is not owner/name", nil},
		{"too few fields", "o/r " + commit + "\n", "got 2 fields", nil},
		{"bad fifth field", "o/r " + commit + " . x dir=y\n", "want overlay=dir", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "projects.txt")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readList(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one holding %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d projects, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i].ID() != tt.want[i].ID() || got[i].Overlay != tt.want[i].Overlay || strings.Join(got[i].Classes, ",") != strings.Join(tt.want[i].Classes, ",") {
					t.Errorf("project %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func obj(kind, name string, labels map[string]any) *unstructured.Unstructured {
	m := map[string]any{"name": name}
	if labels != nil {
		m["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{"kind": kind, "metadata": m}}
}

func TestCheckNames(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		o   *unstructured.Unstructured
		bad bool
	}{
		{obj("Service", "web", nil), false},
		{obj("Service", long, nil), true},
		{obj("Service", "1web", nil), true},
		{obj("ConfigMap", long, nil), false},
		{obj("ClusterRole", "system:auth-delegator", nil), false},
		{obj("StatefulSet", strings.Repeat("s", 53), nil), true},
		{obj("ConfigMap", "c", map[string]any{"app": long}), true},
	}
	for _, tt := range tests {
		if got := len(checkNames([]*unstructured.Unstructured{tt.o})) > 0; got != tt.bad {
			t.Errorf("%s %.20s labels %v: bad %v, want %v", tt.o.GetKind(), tt.o.GetName(), tt.o.GetLabels(), got, tt.bad)
		}
	}
}

func TestDropped(t *testing.T) {
	ref := []*unstructured.Unstructured{obj("Service", "op-metrics", nil), obj("ClusterRole", "op-reader", nil), obj("Ingress", "op-web", nil), obj("Namespace", "op-system", nil)}
	rendered := []*unstructured.Unstructured{obj("Service", "r-op-metrics", nil), obj("Role", "r-reader", nil)}
	chart, _ := dropped(ref, rendered, nil, "op-", nil, []string{"Ingress op-web: left out"})
	if strings.Join(chart, ",") != "" {
		t.Errorf("dropped from the chart: %v, want none (renamed, Role for ClusterRole, warned, Namespace)", chart)
	}
	chart, _ = dropped(ref, rendered[:1], nil, "op-", nil, nil)
	if strings.Join(chart, ",") != "ClusterRole op-reader,Ingress op-web" {
		t.Errorf("dropped from the chart: %v", chart)
	}
}

// The runner archives the Go sources of the project's module (and of the
// modules it replaces with local directories) so opctl package can read
// which namespaces the manager watches; never tests, vendor or testdata.
func TestCheckoutArchivesModuleSources(t *testing.T) {
	repo := t.TempDir()
	files := map[string]string{
		"go.mod":                         "module example.com/op\n\nreplace example.com/shared => ./shared\n",
		"operator/config/default/k.yaml": "resources: []\n",
		"operator/Dockerfile":            "FROM scratch\n",
		"operator/cmd/main.go":           "package main\n",
		"internal/env/env.go":            "package env\n",
		"internal/env/env_test.go":       "package env\n",
		"internal/env/testdata/x.go":     "package x\n",
		"vendor/example.com/v/v.go":      "package v\n",
		"shared/go.mod":                  "module example.com/shared\n",
		"shared/ns/ns.go":                "package ns\n",
		"docs/readme.md":                 "not Go\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	run("add", ".")
	run("commit", "-q", "-m", "x")
	commit := run("rev-parse", "HEAD")
	dest := t.TempDir()
	if err := checkout(filepath.Join(repo, ".git"), project{Repo: "o/r", Commit: commit, Subdir: "operator"}, dest, false); err != nil {
		t.Fatal(err)
	}
	got := tree(t, dest)
	want := []string{"go.mod", "operator/config/default/k.yaml", "operator/Dockerfile", "operator/cmd/main.go", "internal/env/env.go", "shared/go.mod", "shared/ns/ns.go"}
	if strings.Join(got, ",") != strings.Join(sorted(want), ",") {
		t.Errorf("archived %v, want %v", got, sorted(want))
	}
}

func tree(t *testing.T, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sorted(out)
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}
