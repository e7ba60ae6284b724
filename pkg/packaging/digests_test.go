package packaging

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testregistry"
)

// push uploads a random image as ref and returns its digest.
func push(t *testing.T, ref string) string {
	t.Helper()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

func TestPinDigestsThroughARegistry(t *testing.T) {
	reg := testregistry.Start(t)
	project := copyProject(t, "testdata/legacy")
	replaceInTree(t, project, "example.com/legacy", reg.Host+"/legacy")
	want := map[string]string{}
	for _, img := range []string{"manager:1.2.3", "init:1.2.3", "worker:1.2.3", "sidecar:1.2.3", "exporter:1.2.3"} {
		want[reg.Host+"/legacy/"+strings.Split(img, ":")[0]] = push(t, reg.Host+"/legacy/"+img)
	}
	// The sample's image is not pushed: pinning must fail and name it.
	_, err := Package(context.Background(), project, PackageOptions{Out: t.TempDir(), PinDigests: true})
	if err == nil || !strings.Contains(err.Error(), "widget-runtime:2.0.0") || !strings.Contains(err.Error(), "--pin-digests") {
		t.Fatalf("err = %v, want a failure naming the unresolvable image", err)
	}
	want[reg.Host+"/legacy/widget-runtime"] = push(t, reg.Host+"/legacy/widget-runtime:2.0.0")

	out, _ := packageTo(t, project, PackageOptions{PinDigests: true})
	var csv operatorsv1alpha1.ClusterServiceVersion
	if err := yaml.Unmarshal(readFile(t, filepath.Join(out, "bundle", "legacy-operator", "manifests", "legacy-operator.clusterserviceversion.yaml")), &csv); err != nil {
		t.Fatal(err)
	}
	if len(csv.Spec.RelatedImages) != 6 {
		t.Fatalf("relatedImages %v", csv.Spec.RelatedImages)
	}
	for _, ri := range csv.Spec.RelatedImages {
		repo, _, digest := splitImage(ri.Image)
		if digest == "" || want[repo] != digest {
			t.Errorf("relatedImage %s = %s, want %s@%s", ri.Name, ri.Image, repo, want[repo])
		}
	}
	if img := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image; !strings.Contains(img, "@"+want[reg.Host+"/legacy/manager"]) {
		t.Errorf("CSV deployment image %s is not pinned", img)
	}
	// The operand images passed in an env var and a flag are pinned too.
	mgr := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	for _, img := range OperandImages(mgr) {
		if repo, _, digest := splitImage(img.Image); digest == "" || want[repo] != digest {
			t.Errorf("CSV operand image %s = %s, not pinned", img.Key, img.Image)
		}
	}
	if n := len(OperandImages(mgr)); n != 3 {
		t.Errorf("%d operand images in the CSV's manager, want worker, sidecar and exporter", n)
	}
	values := string(readFile(t, filepath.Join(out, "charts", "legacy-operator", "values.yaml")))
	if !strings.Contains(values, "digest: "+want[reg.Host+"/legacy/manager"]) {
		t.Errorf("chart values do not carry the manager digest")
	}
}

func replaceInTree(t *testing.T, dir, old, new string) {
	t.Helper()
	for rel, b := range tree(t, dir) {
		if s := string(b); strings.Contains(s, old) {
			mustWrite(t, filepath.Join(dir, rel), strings.ReplaceAll(s, old, new))
		}
	}
}
