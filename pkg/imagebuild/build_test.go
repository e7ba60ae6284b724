package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"opctl.dev/opctl/internal/testregistry"
)

var created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func buildHello(t *testing.T, mod func(*Options)) *Result {
	t.Helper()
	o := Options{Dir: "testdata/hello", Main: "./cmd", Binary: "/manager", Created: created,
		Labels: map[string]string{"org.opencontainers.image.version": "1.2.3"}}
	if mod != nil {
		mod(&o)
	}
	res, err := Build(context.Background(), o)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return res
}

// fileOf reads one file from the image's flattened filesystem.
func fileOf(t *testing.T, img v1.Image, path string) (*tar.Header, []byte) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s is not in the image", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == path {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return h, b
		}
	}
}

func TestBuildTwoPlatforms(t *testing.T) {
	res := buildHello(t, nil)
	im, err := res.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 {
		t.Fatalf("index has %d manifests, want 2 (amd64, arm64)", len(im.Manifests))
	}
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for _, d := range im.Manifests {
		arch := d.Platform.Architecture
		img, err := res.Index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Architecture != arch || cfg.OS != "linux" {
			t.Errorf("%s: config says %s/%s", arch, cfg.OS, cfg.Architecture)
		}
		if cfg.Config.User != "65532" || strings.Join(cfg.Config.Entrypoint, " ") != "/manager" {
			t.Errorf("%s: user %q entrypoint %q, want 65532 and /manager", arch, cfg.Config.User, cfg.Config.Entrypoint)
		}
		if cfg.Config.Labels["org.opencontainers.image.version"] != "1.2.3" {
			t.Errorf("%s: labels %v lack the version", arch, cfg.Config.Labels)
		}
		h, bin := fileOf(t, img, "manager")
		if h.Mode&0o111 == 0 {
			t.Errorf("%s: /manager mode %o is not executable", arch, h.Mode)
		}
		f, err := elf.NewFile(bytes.NewReader(bin))
		if err != nil {
			t.Fatalf("%s: /manager: %v", arch, err)
		}
		if f.Machine != machines[arch] {
			t.Errorf("%s: /manager is an ELF for %s", arch, f.Machine)
		}
		info, err := buildinfo.Read(bytes.NewReader(bin))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(moduleList(info), " "); got != strings.Join(res.Modules, " ") {
			t.Errorf("%s: modules %s, want %s", arch, got, strings.Join(res.Modules, " "))
		}
		if _, ca := fileOf(t, img, caBundlePath); !bytes.Equal(ca, DefaultCABundle()) {
			t.Errorf("%s: the CA bundle is not the pinned one", arch)
		}
		if _, pw := fileOf(t, img, "etc/passwd"); !strings.Contains(string(pw), "nonroot:x:65532:65532:") {
			t.Errorf("%s: /etc/passwd has no nonroot 65532:\n%s", arch, pw)
		}
	}
	if !strings.Contains(strings.Join(res.Modules, " "), "example.com/greet@") {
		t.Errorf("modules %v lack the dependency example.com/greet", res.Modules)
	}
	var doc spdxDoc
	if err := json.Unmarshal(res.SBOM, &doc); err != nil {
		t.Fatalf("SBOM is not JSON: %v", err)
	}
	names := map[string]bool{}
	for _, p := range doc.Packages {
		names[p.Name] = true
	}
	if doc.SPDXVersion != "SPDX-2.3" || !names["example.com/hello"] || !names["example.com/greet"] || !names["go"] {
		t.Errorf("SBOM %s lists %v, want the main module, its dependency and go", doc.SPDXVersion, names)
	}
}

func TestBuildReproducible(t *testing.T) {
	one := buildHello(t, func(o *Options) { o.Platforms = []v1.Platform{{OS: "linux", Architecture: "arm64"}} })
	two := buildHello(t, func(o *Options) { o.Platforms = []v1.Platform{{OS: "linux", Architecture: "arm64"}} })
	d1, _ := one.Index.Digest()
	d2, _ := two.Index.Digest()
	if d1 != d2 || !bytes.Equal(one.SBOM, two.SBOM) {
		t.Errorf("two builds of one source differ: %s and %s", d1, d2)
	}
	other := buildHello(t, func(o *Options) {
		o.Platforms = []v1.Platform{{OS: "linux", Architecture: "arm64"}}
		o.Created = created.Add(time.Second)
	})
	if d3, _ := other.Index.Digest(); d3 == d1 {
		t.Errorf("a build stamped at another time has the same digest %s: Created is not used", d3)
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"no such package", func(o *Options) { o.Main = "./nope" }, "go build ./nope for linux/amd64"},
		{"relative binary", func(o *Options) { o.Binary = "manager" }, "must be absolute"},
		{"bad base", func(o *Options) { o.Base = "UPPER/Case:bad" }, "--base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Dir: "testdata/hello", Main: "./cmd", Created: created, Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}}
			tc.mod(&o)
			_, err := Build(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParsePlatforms(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "linux/amd64,linux/arm64", want: "linux/amd64 linux/arm64"},
		{in: "linux/arm/v7, linux/arm/v7", want: "linux/arm/v7"},
		{in: "windows/amd64", err: "want linux/ARCH"},
		{in: "linux/mips", err: "not one Go builds for here"},
		{in: ",", err: "is empty"},
	} {
		ps, err := ParsePlatforms(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%q: %v %v, want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckCABundle(t *testing.T) {
	if err := CheckCABundle("default", DefaultCABundle()); err != nil {
		t.Fatalf("the default bundle: %v", err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "holds no PEM certificate"},
		{"key", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE " + "KEY", Bytes: []byte{0, 0, 0}})), "not a CERTIFICATE"},
		{"trailing", string(DefaultCABundle()) + "junk\n", "is not PEM"},
	} {
		if err := CheckCABundle(tc.name, []byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSBOMArtifact(t *testing.T) {
	res := buildHello(t, func(o *Options) { o.Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}} })
	d, _ := res.Index.Digest()
	sz, _ := res.Index.Size()
	mt, _ := res.Index.MediaType()
	art, err := SBOMArtifact(v1.Descriptor{MediaType: mt, Digest: d, Size: sz}, res.SBOM)
	if err != nil {
		t.Fatal(err)
	}
	m, err := art.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.ArtifactType != SBOMMediaType || m.Subject == nil || m.Subject.Digest != d || len(m.Layers) != 1 || m.Config.MediaType != emptyConfigType {
		t.Fatalf("artifact manifest %+v does not refer to %s with the SBOM", m, d)
	}
	ls, err := art.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := ls[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	if !bytes.Equal(b, res.SBOM) {
		t.Error("the artifact's blob is not the SBOM")
	}
}

// A base given by reference is resolved to a digest, reported, and its
// layers kept under the program's.
func TestBuildOnBase(t *testing.T) {
	reg := testregistry.Start(t)
	base := buildHello(t, func(o *Options) { o.Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}} })
	ref, err := name.ParseReference(reg.Host+"/base/hello:1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, base.Index); err != nil {
		t.Fatal(err)
	}
	want, _ := base.Index.Digest()
	res := buildHello(t, func(o *Options) {
		o.Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}}
		o.Base, o.Binary = ref.String(), "/other"
	})
	if res.Base != ref.String() || res.BaseDigest != reg.Host+"/base/hello@"+want.String() || res.CADigest != "" {
		t.Errorf("base %q digest %q CA %q, want %s resolved to %s and no CA bundle of ours", res.Base, res.BaseDigest, res.CADigest, ref, want)
	}
	im, _ := res.Index.IndexManifest()
	img, err := res.Index.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	fileOf(t, img, "manager") // the base's program
	fileOf(t, img, "other")   // this build's
	layers, _ := img.Layers()
	if len(layers) != 3 {
		t.Errorf("%d layers, want the base's two and the program's", len(layers))
	}
	missing := buildErr(t, func(o *Options) { o.Base = reg.Host + "/base/hello:nope" })
	if !strings.Contains(missing, "--base") || !strings.Contains(missing, "resolving it to a digest") {
		t.Errorf("a missing base: %s", missing)
	}
}

func buildErr(t *testing.T, mod func(*Options)) string {
	t.Helper()
	o := Options{Dir: "testdata/hello", Main: "./cmd", Created: created, Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}}
	mod(&o)
	if _, err := Build(context.Background(), o); err != nil {
		return err.Error()
	}
	return "no error"
}
