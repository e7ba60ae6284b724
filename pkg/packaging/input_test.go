package packaging

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

const sdkDir = "testdata/sdk"

func sdkCSV(t *testing.T, dir string, opts Options, bopts BundleOptions) (*Project, *operatorsv1alpha1.ClusterServiceVersion) {
	t.Helper()
	p, err := Load(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.analyze()
	if err != nil {
		t.Fatal(err)
	}
	csv, err := p.CSV(bopts, a.grants, a.pacs)
	if err != nil {
		t.Fatal(err)
	}
	return p, csv
}

// An operator-sdk project with no opctl.yaml keeps its base CSV, markers,
// PROJECT and Makefile.
func TestOperatorSDKInputs(t *testing.T) {
	p, csv := sdkCSV(t, sdkDir, Options{}, BundleOptions{})
	if p.Name != "memcache-operator" || p.Version != "0.3.1" {
		t.Errorf("name %s version %s, want memcache-operator 0.3.1 (base CSV, Makefile VERSION)", p.Name, p.Version)
	}
	if img := managerContainer(p.Manager).Image; img != "registry.example.com/memcache/memcache-operator:v0.3.1" {
		t.Errorf("manager image %s, want the Makefile's IMG expanded", img)
	}
	s := csv.Spec
	checks := []struct{ what, got, want string }{
		{"displayName", s.DisplayName, "Memcache Operator"},
		{"maturity", s.Maturity, "beta"},
		{"minKubeVersion", s.MinKubeVersion, "1.29.0"},
		{"provider", s.Provider.Name, "Example Caches"},
		{"capabilities", csv.Annotations["capabilities"], "Full Lifecycle"},
		{"categories", csv.Annotations["categories"], "Database, Developer Tools"},
		{"repository", csv.Annotations["repository"], "https://example.com/memcache-operator"},
		{"summary", csv.Annotations["description"], "Memcached clusters that size and tune themselves."},
		{"containerImage", csv.Annotations["containerImage"], "registry.example.com/memcache/memcache-operator:v0.3.1"},
		{"builder", csv.Annotations["operators.operatorframework.io/builder"], "opctl"},
		{"layout", csv.Annotations["operators.operatorframework.io/project_layout"], "go.kubebuilder.io/v4"},
		{"createdAt", csv.Annotations["createdAt"], ""},
		{"keywords", strings.Join(s.Keywords, ","), "memcached,cache"},
		{"icon", string(s.Icon[0].MediaType), "image/svg+xml"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	// The base CSV claims OwnNamespace and SingleNamespace, as the
	// scaffold's does, but cmd/main.go reads no watch-namespace setting.
	for _, m := range s.InstallModes {
		if want := m.Type == operatorsv1alpha1.InstallModeTypeAllNamespaces; m.Supported != want {
			t.Errorf("install mode %s supported=%t, want %t: the manager reads no namespace", m.Type, m.Supported, want)
		}
	}
	owned := s.CustomResourceDefinitions.Owned
	if len(owned) != 1 {
		t.Fatalf("owned CRDs %v", owned)
	}
	d := owned[0]
	if d.DisplayName != "Memcache Cluster" || d.Description != "A memcached cluster, sized and tuned by the operator." {
		t.Errorf("owned CRD display name %q (marker), description %q (base CSV)", d.DisplayName, d.Description)
	}
	if len(d.Resources) != 2 || d.Resources[0].Kind != "Deployment" || d.Resources[0].Name != "memcache-deployment" {
		t.Errorf("resources %v, want the marker's", d.Resources)
	}
	var paths []string
	for _, sd := range d.SpecDescriptors {
		paths = append(paths, sd.Path+"="+sd.DisplayName+":"+strings.Join(sd.XDescriptors, "|"))
	}
	want := []string{
		"size=Pod count:urn:alm:descriptor:com.tectonic.ui:podCount",
		"memory=Memory:urn:alm:descriptor:com.tectonic.ui:number",
		"threads=Worker threads:", // inlined struct: no path prefix
		"exporter.enabled=Metrics exporter:urn:alm:descriptor:com.tectonic.ui:booleanSwitch|urn:alm:descriptor:com.tectonic.ui:advanced",
	}
	if !slices.Equal(paths, want) {
		t.Errorf("spec descriptors\n got %q\nwant %q", paths, want)
	}
	if len(d.StatusDescriptors) != 2 || d.StatusDescriptors[0].Path != "conditions" || d.StatusDescriptors[0].Description != "Conditions of the Memcache." {
		t.Errorf("status descriptors %+v", d.StatusDescriptors)
	}
	files, _, err := p.Bundle(BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ann := string(files["bundle/memcache-operator/metadata/annotations.yaml"]); !strings.Contains(ann, "channels.v1: alpha,beta") || !strings.Contains(ann, "channel.default.v1: beta") {
		t.Errorf("channels are not the Makefile's:\n%s", ann)
	}
}

// Flags win over opctl.yaml, which wins over the base CSV and the
// Makefile.
func TestInputPrecedence(t *testing.T) {
	dir := copyProject(t, sdkDir)
	mustWrite(t, filepath.Join(dir, ConfigFile), "displayName: From opctl.yaml\nversion: 0.4.0\nchannels: [stable]\nannotations:\n  support: Own support\noperands:\n  memcaches.cache.example.com:\n    composition: [StatefulSet]\n")
	p, csv := sdkCSV(t, dir, Options{}, BundleOptions{})
	if csv.Spec.DisplayName != "From opctl.yaml" || p.Version != "0.4.0" || csv.Annotations["support"] != "Example Caches" {
		t.Errorf("displayName %q version %s support %q: opctl.yaml must win over the base CSV and the Makefile, provider.name over annotations",
			csv.Spec.DisplayName, p.Version, csv.Annotations["support"])
	}
	if r := csv.Spec.CustomResourceDefinitions.Owned[0].Resources; len(r) != 1 || r[0].Kind != "StatefulSet" {
		t.Errorf("resources %v: opctl.yaml's composition must win over the markers", r)
	}
	p, csv = sdkCSV(t, dir, Options{Version: "1.0.0", Image: "example.com/flag:1"}, BundleOptions{Channels: []string{"fast"}})
	if p.Version != "1.0.0" || csv.Annotations["containerImage"] != "example.com/flag:1" {
		t.Errorf("version %s image %s: flags must win", p.Version, csv.Annotations["containerImage"])
	}
	files, _, err := p.Bundle(BundleOptions{Channels: []string{"fast"}})
	if err != nil {
		t.Fatal(err)
	}
	if ann := string(files["bundle/memcache-operator/metadata/annotations.yaml"]); !strings.Contains(ann, "channel.default.v1: fast") {
		t.Errorf("--channels fast: default channel not fast:\n%s", ann)
	}
}

func TestMakeDefaults(t *testing.T) {
	cases := []struct {
		name, makefile string
		want           MakeDefaults
	}{
		{"operator-sdk scaffold", "VERSION ?= 0.0.1\nIMAGE_TAG_BASE ?= example.com/op\nIMG ?= $(IMAGE_TAG_BASE):v$(VERSION)\n# CHANNELS = \"candidate,fast\"\n",
			MakeDefaults{Version: "0.0.1", Image: "example.com/op:v0.0.1"}},
		{"kubebuilder placeholder image", "IMG ?= controller:latest\n", MakeDefaults{}},
		{"image with an empty tag", "TAG ?=\nIMG ?= quay.io/x/op:$(TAG)\n", MakeDefaults{badImage: "quay.io/x/op:"}},
		{"first ?= wins, = overrides", "VERSION ?= 1.0.0\nVERSION ?= 2.0.0\nCHANNELS = a, b\nCHANNELS = c\nDEFAULT_CHANNEL := c\n",
			MakeDefaults{Version: "1.0.0", Channels: []string{"c"}, DefaultChannel: "c"}},
		{"shell and unknown variables are ignored", "VERSION ?= $(shell git describe)\nIMG ?= ${REGISTRY}/op:1\n", MakeDefaults{}},
		{"expansion is bounded", "A = " + strings.Repeat("x", 600) + "\nB = $(A)$(A)\nC = $(B)$(B)\nD = $(C)$(C)\nVERSION ?= $(D)\n", MakeDefaults{}},
		{"recipes and comments are ignored", "build:\n\tVERSION=9.9.9 go build\nIMG ?= example.com/op:2 # the image\n", MakeDefaults{Image: "example.com/op:2"}},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		mustWrite(t, filepath.Join(dir, "Makefile"), tc.makefile)
		got, err := loadMakeDefaults(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != tc.want.Version || got.Image != tc.want.Image || !slices.Equal(got.Channels, tc.want.Channels) || got.DefaultChannel != tc.want.DefaultChannel {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// Go that does not parse and bad base CSVs are refused with the file (and
// line); markers that do not parse are warnings (TestWarnings).
func TestBadOperatorSDKInputs(t *testing.T) {
	cases := []struct {
		name, file, from, to, want string
	}{
		{"Go syntax error", "api/v1alpha1/memcache_types.go", "type MemcacheList struct {", "type MemcacheList struct", "memcache_types.go:"},
		{"base CSV kind", "config/manifests/bases/memcache-operator.clusterserviceversion.yaml", "kind: ClusterServiceVersion", "kind: Deployment", "want ClusterServiceVersion"},
		{"base CSV not YAML", "config/manifests/bases/memcache-operator.clusterserviceversion.yaml", "kind: ClusterServiceVersion", "kind: [ClusterServiceVersion", "memcache-operator.clusterserviceversion.yaml: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyProject(t, sdkDir)
			path := filepath.Join(dir, tc.file)
			b := readFile(t, path)
			if !strings.Contains(string(b), tc.from) {
				t.Fatalf("%s has no %q", tc.file, tc.from)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(string(b), tc.from, tc.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSDKBundlePassesOperatorHubValidators(t *testing.T) {
	out, res := packageTo(t, sdkDir, PackageOptions{})
	for _, e := range validateBundle(t, filepath.Join(out, "bundle", "memcache-operator")) {
		t.Error(e)
	}
	if slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "OperatorHub") }) {
		t.Errorf("warnings %v: the base CSV sets provider and icon", res.Warnings)
	}
}

// The shapes of operator-sdk's own scaffold: type markers a blank line
// above the doc comment, and an empty placeholder icon in the base CSV.
func TestOperatorSDKScaffoldShapes(t *testing.T) {
	dir := copyProject(t, sdkDir)
	types := filepath.Join(dir, "api", "v1alpha1", "memcache_types.go")
	b := string(readFile(t, types))
	marker := "// +operator-sdk:csv:customresourcedefinitions:displayName=\"Memcache Cluster\",resources={{Deployment,v1,memcache-deployment},{Service,v1,\"\"}}\n"
	if !strings.Contains(b, marker) {
		t.Fatal("fixture changed")
	}
	b = strings.Replace(b, "// Memcache runs a memcached cluster.\n// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status\n"+marker,
		"// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status\n"+marker+"\n// Memcache runs a memcached cluster.\n", 1)
	mustWrite(t, types, b)
	csvPath := filepath.Join(dir, "config", "manifests", "bases", "memcache-operator.clusterserviceversion.yaml")
	c := string(readFile(t, csvPath))
	i, j := strings.Index(c, "  icon:\n"), strings.Index(c, "  install:\n")
	mustWrite(t, csvPath, c[:i]+"  icon:\n  - base64data: \"\"\n    mediatype: \"\"\n"+c[j:])

	_, csv := sdkCSV(t, dir, Options{}, BundleOptions{})
	d := csv.Spec.CustomResourceDefinitions.Owned[0]
	if d.DisplayName != "Memcache Cluster" || len(d.Resources) != 2 {
		t.Errorf("type markers above the doc comment were missed: display name %q, resources %v", d.DisplayName, d.Resources)
	}
	if len(csv.Spec.Icon) != 0 {
		t.Errorf("icons %+v: the empty placeholder must not be shipped", csv.Spec.Icon)
	}
	out, res := packageTo(t, dir, PackageOptions{})
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "icon (a warning)") }) {
		t.Errorf("warnings %v: want the missing icon named", res.Warnings)
	}
	for _, e := range validateBundle(t, filepath.Join(out, "bundle", "memcache-operator")) {
		t.Error(e)
	}
}

// A base CSV's spec.version that is not SemVer (operator-sdk projects keep
// `master` there for `make bundle VERSION=…` to overwrite) is a warning
// when the version comes from elsewhere, and an error naming the field and
// value when nothing else gives one.
func TestBaseCSVVersionNotSemVer(t *testing.T) {
	for _, tc := range []struct {
		name, makeVersion, flag string
		wantWarning, wantErr    string
	}{
		{name: "Makefile VERSION", makeVersion: "VERSION ?= 0.3.1", wantWarning: `spec.version "master" is not SemVer; the package's version is 0.3.1`},
		{name: "--version", makeVersion: "VERSION ?=", flag: "1.2.3", wantWarning: `spec.version "master" is not SemVer; the package's version is 1.2.3`},
		{name: "nothing else", makeVersion: "VERSION ?=", wantErr: `spec.version "master" is not SemVer (like 1.2.3)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyProject(t, sdkDir)
			for file, edit := range map[string][2]string{
				"config/manifests/bases/memcache-operator.clusterserviceversion.yaml": {"  version: 0.0.0", "  version: master"},
				"Makefile": {"VERSION ?= 0.3.1", tc.makeVersion},
			} {
				path := filepath.Join(dir, file)
				b := readFile(t, path)
				if !strings.Contains(string(b), edit[0]) {
					t.Fatalf("%s has no %q", file, edit[0])
				}
				if err := os.WriteFile(path, []byte(strings.Replace(string(b), edit[0], edit[1], 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Load(dir, Options{Version: tc.flag})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "clusterserviceversion.yaml") {
					t.Fatalf("error %v, want one naming the file and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !slices.ContainsFunc(p.inputs.warningList(), func(w string) bool { return strings.Contains(w, tc.wantWarning) }) {
				t.Errorf("warnings %v lack %q", p.inputs.warningList(), tc.wantWarning)
			}
		})
	}
}
