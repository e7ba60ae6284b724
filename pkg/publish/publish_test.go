package publish

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sirupsen/logrus"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/repo"

	"opctl.dev/opctl/internal/testregistry"
	"opctl.dev/opctl/pkg/packaging"
)

const sampleProject = "../../operators/sample"

// packageSample runs opctl package on the sample with a version and
// operator image, into a temporary directory.
func packageSample(t testing.TB, version, image string) string {
	t.Helper()
	out := t.TempDir()
	_, err := packaging.Package(context.Background(), sampleProject, packaging.PackageOptions{
		Out: out, Load: packaging.Options{Version: version, Image: image},
	})
	if err != nil {
		t.Fatalf("packaging the sample %s: %v", version, err)
	}
	return out
}

// snapshot is the observable state publish may change: the catalog files
// and every tag of the package's repositories.
func snapshot(t *testing.T, reg *testregistry.Registry, catalog string) map[string]string {
	t.Helper()
	s := map[string]string{}
	files, err := readCatalogDir(catalog)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		s["file "+f.Path] = string(f.Data)
	}
	for _, repo := range []string{"sample-operator-bundle", "sample-operator-catalog", "charts/sample-operator"} {
		r, err := name.NewRepository(reg.Host+"/ops/"+repo, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		tags, err := remote.List(r)
		if err != nil {
			continue // repository not created yet
		}
		for _, tag := range tags {
			d, err := remote.Head(r.Tag(tag))
			if err != nil {
				t.Fatal(err)
			}
			s["tag "+repo+":"+tag] = d.Digest.String()
		}
	}
	return s
}

func TestPublishRefusesAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	reg := testregistry.Start(t)
	catalog := filepath.Join(t.TempDir(), "catalog")
	opts := func(mod func(*Options)) Options {
		o := Options{Registry: reg.Host + "/ops", CatalogDir: catalog}
		if mod != nil {
			mod(&o)
		}
		return o
	}
	v1 := packageSample(t, "0.1.0", "opctl/kvstore-operator:0.1.0")
	if _, err := Publish(ctx, v1, opts(nil)); err != nil {
		t.Fatalf("publishing 0.1.0: %v", err)
	}
	v1changed := packageSample(t, "0.1.0", "opctl/kvstore-operator:0.1.0-rebuilt")
	v2 := packageSample(t, "0.2.0", "opctl/kvstore-operator:0.2.0")
	older := packageSample(t, "0.0.9", "opctl/kvstore-operator:0.0.9")

	tests := []struct {
		name string
		dir  string
		opts Options
		want string
	}{
		{"same version, other content", v1changed, opts(nil), "already published with different content"},
		{"replaces a missing bundle", v2, opts(func(o *Options) { o.Replaces = "sample-operator.v9.9.9" }), "the catalog has no earlier bundle sample-operator.v9.9.9 in package sample-operator (it has sample-operator.v0.1.0)"},
		{"a second channel head", v2, opts(func(o *Options) { o.Replaces = ReplacesNone }), "channel stable has 2 heads (sample-operator.v0.1.0, sample-operator.v0.2.0)"},
		{"older than the head", older, opts(nil), "is not newer than the channel head sample-operator.v0.1.0"},
		{"unreachable registry", v2, opts(func(o *Options) { o.Registry = closedPort(t) + "/ops" }), "is unreachable"},
		{"registry URL instead of host", v2, opts(func(o *Options) { o.Registry = "https://" + reg.Host }), "without a URL scheme"},
		{"username without password", v2, opts(func(o *Options) { o.Username = "me" }), "needs a password"},
		{"not a package output", t.TempDir(), opts(nil), "holds no bundle/ directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, reg, catalog)
			_, err := Publish(ctx, tt.dir, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			t.Logf("refused: %v", err)
			if after := snapshot(t, reg, catalog); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused publish changed the catalog or the registry:\nbefore %v\nafter  %v", keys(before), keys(after))
			}
		})
	}

	t.Run("dry run", func(t *testing.T) {
		before := snapshot(t, reg, catalog)
		res, err := Publish(ctx, v2, opts(func(o *Options) { o.DryRun = true }))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Artifacts {
			if a.Action != ActionWouldPush {
				t.Errorf("%s: action %q, want %q", a.Kind, a.Action, ActionWouldPush)
			}
		}
		if res.Catalog == nil || len(res.Catalog.Changes) != 1 || res.Catalog.Changes[0].Replaces != "sample-operator.v0.1.0" {
			t.Errorf("dry run catalog changes = %+v, want stable: v0.2.0 replaces v0.1.0", res.Catalog)
		}
		if after := snapshot(t, reg, catalog); !reflect.DeepEqual(before, after) {
			t.Errorf("a dry run changed something: before %v after %v", keys(before), keys(after))
		}
	})

	t.Run("force overwrites", func(t *testing.T) {
		before := snapshot(t, reg, catalog)
		res, err := Publish(ctx, v1changed, opts(func(o *Options) { o.Force = true }))
		if err != nil {
			t.Fatal(err)
		}
		if res.Catalog.Bundle != "replaced" {
			t.Errorf("catalog bundle %q, want replaced", res.Catalog.Bundle)
		}
		after := snapshot(t, reg, catalog)
		if before["tag sample-operator-bundle:v0.1.0"] == after["tag sample-operator-bundle:v0.1.0"] {
			t.Errorf("--force left the bundle tag at %s", before["tag sample-operator-bundle:v0.1.0"])
		}
	})
}

func TestPublishCatalogLayout(t *testing.T) {
	ctx := context.Background()
	reg := testregistry.Start(t)
	v1 := packageSample(t, "0.1.0", "opctl/kvstore-operator:0.1.0")
	catalog := t.TempDir()
	// The package shares a file with another package: publish refuses to
	// rewrite a file it does not own.
	shared := `{"schema":"olm.package","name":"other","defaultChannel":"stable"}
{"schema":"olm.package","name":"sample-operator","defaultChannel":"stable"}
`
	if err := os.WriteFile(filepath.Join(catalog, "index.json"), []byte(shared), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Publish(ctx, v1, Options{Registry: reg.Host + "/ops", CatalogDir: catalog})
	if err == nil || !strings.Contains(err.Error(), "index.json holds other packages besides sample-operator") {
		t.Fatalf("error %v, want a shared-file refusal", err)
	}
	if b, _ := os.ReadFile(filepath.Join(catalog, "index.json")); string(b) != shared {
		t.Errorf("index.json changed:\n%s", b)
	}
}

func TestPublishSecureRegistry(t *testing.T) {
	ctx := context.Background()
	reg := testregistry.StartSecure(t)
	out := packageSample(t, "0.1.0", "opctl/kvstore-operator:0.1.0")
	base := Options{Registry: reg.Host + "/ops", CatalogDir: filepath.Join(t.TempDir(), "catalog")}
	tests := []struct {
		name string
		mod  func(*Options)
		want string // "" for success
	}{
		{"untrusted certificate", func(o *Options) { o.Username, o.Password = reg.Username, reg.Password }, "TLS certificate this machine does not trust"},
		{"no credentials", func(o *Options) { o.CAFile = reg.CAFile }, "requires credentials"},
		{"wrong password", func(o *Options) { o.CAFile, o.Username, o.Password = reg.CAFile, reg.Username, "wrong" }, `rejected the credentials of user "publisher"`},
		{"CA and credentials", func(o *Options) { o.CAFile, o.Username, o.Password = reg.CAFile, reg.Username, reg.Password }, ""},
		{"insecure skips verification", func(o *Options) { o.Insecure, o.Username, o.Password = true, reg.Username, reg.Password }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.mod(&o)
			res, err := Publish(ctx, out, o)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want one containing %q", err, tt.want)
				}
				if _, statErr := os.Stat(o.CatalogDir); statErr == nil {
					t.Errorf("a failed publish created the catalog %s", o.CatalogDir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Artifacts) != 3 {
				t.Fatalf("artifacts = %+v, want bundle, catalog and chart", res.Artifacts)
			}
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func keys(m map[string]string) []string {
	var ks []string
	for k, v := range m {
		if strings.HasPrefix(k, "tag ") {
			ks = append(ks, k+"="+v[:19])
		} else {
			ks = append(ks, k)
		}
	}
	return ks
}

// operator-registry's bundle parser logs at info level through logrus; the
// CLI maps -v onto it, tests keep it at warnings.
func init() { logrus.SetLevel(logrus.WarnLevel) }

func TestArtifactsAreReproducible(t *testing.T) {
	out := packageSample(t, "0.1.0", "opctl/kvstore-operator:0.1.0")
	in, err := loadInput(out, "")
	if err != nil {
		t.Fatal(err)
	}
	digests := func(created time.Time) (bundle, chart string) {
		o := Options{Created: created}
		if err := o.defaults(); err != nil {
			t.Fatal(err)
		}
		img, err := buildBundleImage(in, o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		ch, err := packChart(in.ChartDir, o.Created)
		if err != nil {
			t.Fatal(err)
		}
		return d.String(), ch.Digest
	}
	b1, c1 := digests(time.Time{})
	b2, c2 := digests(time.Time{})
	if b1 != b2 || c1 != c2 {
		t.Errorf("two builds differ: bundle %s vs %s, chart %s vs %s", b1, b2, c1, c2)
	}
	b3, c3 := digests(time.Unix(1700000000, 0))
	if b3 == b1 || c3 == c1 {
		t.Errorf("a different creation time left the digests unchanged")
	}
}

func TestPublishImageLess(t *testing.T) {
	reg := testregistry.Start(t)
	out := packageSample(t, "0.1.0", "opctl/kvstore-operator:0.1.0")
	catalog := t.TempDir()
	res, err := Publish(context.Background(), out, Options{Registry: reg.Host + "/ops", CatalogDir: catalog, ImageLess: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(catalog, res.Catalog.File))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "image: \"\"\n") || !strings.Contains(string(b), "type: olm.bundle.object") {
		t.Errorf("image-less catalog lacks an empty image or the bundle objects:\n%.600s", b)
	}
}

func TestPublishChartRepoDir(t *testing.T) {
	reg := testregistry.Start(t)
	repoDir := t.TempDir()
	for _, v := range []string{"0.1.0", "0.2.0"} {
		out := packageSample(t, v, "opctl/kvstore-operator:"+v)
		res, err := Publish(context.Background(), out, Options{Registry: reg.Host + "/ops", ChartRepoDir: repoDir, ChartRepoURL: "https://charts.example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if res.ChartIndex != filepath.Join(repoDir, "index.yaml") {
			t.Errorf("chart index %q", res.ChartIndex)
		}
	}
	idx, err := repo.LoadIndexFile(filepath.Join(repoDir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0.1.0", "0.2.0"} {
		cv, err := idx.Get("sample-operator", v)
		if err != nil {
			t.Fatalf("index has no %s: %v", v, err)
		}
		if len(cv.URLs) != 1 || cv.URLs[0] != "https://charts.example.com/sample-operator-"+v+".tgz" {
			t.Errorf("%s URLs %v", v, cv.URLs)
		}
		if _, err := loader.Load(filepath.Join(repoDir, "sample-operator-"+v+".tgz")); err != nil {
			t.Errorf("archive %s: %v", v, err)
		}
	}
	// Republishing leaves the index byte for byte the same.
	before, _ := os.ReadFile(filepath.Join(repoDir, "index.yaml"))
	out := packageSample(t, "0.2.0", "opctl/kvstore-operator:0.2.0")
	if _, err := Publish(context.Background(), out, Options{Registry: reg.Host + "/ops", ChartRepoDir: repoDir, ChartRepoURL: "https://charts.example.com"}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(repoDir, "index.yaml")); string(after) != string(before) {
		t.Errorf("republishing changed index.yaml:\n%s\n---\n%s", before, after)
	}
}
