package kit

import (
	"strings"
	"testing"
)

func TestProjectValidate(t *testing.T) {
	ok := func() *Project {
		return &Project{Name: "cache-operator", Repo: "example.com/cache-operator", Domain: "example.com",
			Kinds: []Kind{{Group: "cache", Version: "v1alpha1", Kind: "Memcached", Resources: []Resource{{Name: "server", Kind: "StatefulSet"}}}}}
	}
	tests := []struct {
		name    string
		change  func(*Project)
		wantErr string
	}{
		{"valid", func(*Project) {}, ""},
		{"name not a DNS label", func(p *Project) { p.Name = "Cache_Operator" }, "name"},
		{"domain without a dot", func(p *Project) { p.Domain = "localhost" }, "domain"},
		{"lower case kind", func(p *Project) { p.Kinds[0].Kind = "memcached" }, "kind"},
		{"bad version", func(p *Project) { p.Kinds[0].Version = "1" }, "version"},
		{"unknown resource kind", func(p *Project) { p.Kinds[0].Resources[0].Kind = "CronJob" }, "not one of"},
		{"resource name with a dot", func(p *Project) { p.Kinds[0].Resources[0].Name = "a.b" }, "DNS label"},
		{"template injection in the repo", func(p *Project) { p.Repo = "example.com/x\"\n" }, "repo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok()
			tt.change(p)
			err := p.Validate()
			if (err != nil) != (tt.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestAddKindAndResource(t *testing.T) {
	p := &Project{Name: "x", Repo: "example.com/x", Domain: "example.com"}
	if err := p.AddResource("Memcached", Resource{Name: "web", Kind: "Deployment"}); err == nil {
		t.Error("a resource for a kind that does not exist was added")
	}
	if err := p.AddKind(Kind{Group: "cache", Version: "v1alpha1", Kind: "Memcached"}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddKind(Kind{Group: "cache", Version: "v1", Kind: "Memcached"}); err == nil {
		t.Error("a kind was added twice")
	}
	if err := p.AddResource("Memcached", Resource{Name: "web", Kind: "Deployment"}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddResource("Memcached", Resource{Name: "web", Kind: "Service"}); err == nil {
		t.Error("two resources of one kind share a name")
	}
}

func TestRenderDeterministic(t *testing.T) {
	p := &Project{Name: "x", Repo: "example.com/x", Domain: "example.com",
		Kinds: []Kind{{Group: "a", Version: "v1", Kind: "B", Resources: []Resource{{Name: "c", Kind: "PersistentVolumeClaim"}, {Name: "d", Kind: "Service"}, {Name: "e", Kind: "Deployment"}, {Name: "f", Kind: "ConfigMap"}}}}}
	first, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(second) {
		t.Fatalf("%d files, then %d", len(first), len(second))
	}
	for i := range first {
		if first[i].Path != second[i].Path || string(first[i].Content) != string(second[i].Content) {
			t.Errorf("%s rendered differently twice", first[i].Path)
		}
	}
}
