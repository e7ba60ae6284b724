package kit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// opctlRoot is this checkout, which scaffolds replace opctl.dev/opctl with.
func opctlRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// randomKind is an upper camel case kind no template was written for.
func randomKind() string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := []byte{byte('A' + rand.IntN(26))}
	for range 7 {
		b = append(b, letters[rand.IntN(len(letters))])
	}
	return string(b)
}

// goTool runs the go command in dir, offline: everything must come from
// the module cache that built opctl.
func goTool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestScaffoldBuildsAndKeepsUserEdits scaffolds a randomly named kind
// with a StatefulSet and a Secret with initial data, builds and vets it
// before any method is filled, edits every user-owned file, regenerates,
// and checks that every edit survived and was reported as skipped.
func TestScaffoldBuildsAndKeepsUserEdits(t *testing.T) {
	dir := t.TempDir()
	kind := randomKind()
	p, err := Init(dir, "", "example.com/"+strings.ToLower(kind)+"-operator", "example.com", opctlRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return nil },
		func() error { return p.AddKind(Kind{Group: "things", Version: "v1beta1", Kind: kind}) },
		func() error { return p.AddResource(kind, Resource{Name: "server", Kind: "StatefulSet"}) },
		func() error { return p.AddResource(kind, Resource{Name: "root-credentials", Kind: "Secret"}) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if _, err := Generate(dir, p); err != nil {
			t.Fatalf("generating after step %d: %v", i, err)
		}
	}
	t.Logf("scaffolded kind %s in %s", kind, dir)
	goTool(t, dir, "build", "./...")
	goTool(t, dir, "vet", "./...")

	secret, err := os.ReadFile(filepath.Join(dir, "internal/controller", strings.ToLower(kind)+"_root_credentials_resource.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(secret, []byte(`resources.SetSecretPassword(o, "password", 24)`)) {
		t.Errorf("the Secret resource sets no generated password as initial data:\n%s", secret)
	}
	for _, want := range []string{"config/crd/bases/things.example.com_" + p.Kinds[0].Plural() + ".yaml", "api/v1beta1/zz_generated.deepcopy.go", "config/rbac/role.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("controller-tools output missing (config/crd/kustomization.yaml lists the CRD by this name): %v", err)
		}
	}

	files, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	userOwned := []string{"go.mod", "go.sum"}
	generated := map[string][]byte{}
	for _, f := range files {
		if f.Owner == User {
			userOwned = append(userOwned, f.Path)
		} else {
			generated[f.Path] = f.Content
		}
	}
	slices.Sort(userOwned)
	edits := map[string]string{}
	for _, path := range userOwned {
		edit := fmt.Sprintf("\n%s edited by the user %d\n", commentFor(path), rand.Int())
		if path == "go.sum" {
			edit = fmt.Sprintf("example.com/edited v1.0.%d/go.mod h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n", rand.IntN(1000))
		}
		appendTo(t, filepath.Join(dir, path), edit)
		edits[path] = edit
	}

	rep, err := Generate(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Skipped, userOwned) {
		t.Errorf("skip report:\n%v\nwant every user-owned file:\n%v", rep.Skipped, userOwned)
	}
	if len(rep.Written) != 0 {
		t.Errorf("an unchanged project regenerated with writes: %v", rep.Written)
	}
	for path, edit := range edits {
		b, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(b, []byte(edit)) {
			t.Errorf("the user's edit of %s did not survive regeneration", path)
		}
	}
	for path, want := range generated {
		if b, err := os.ReadFile(filepath.Join(dir, path)); err != nil || !bytes.Equal(b, want) {
			t.Errorf("generated %s differs from its rendering (err %v)", path, err)
		}
	}
	goTool(t, dir, "build", "./...")
}

func commentFor(path string) string {
	if strings.HasSuffix(path, ".go") || path == "go.mod" {
		return "//"
	}
	return "#"
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
