package publish

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"

	"opctl.dev/opctl/internal/testregistry"
	"opctl.dev/opctl/pkg/packaging"
	"opctl.dev/opctl/pkg/validate"
)

// The sample operator published from its source: the manager's image
// built for two platforms and pushed first, the chart and bundle naming
// it by digest, an SBOM referrer in the fallback tag, and a second
// publish changing nothing.
func TestPublishBuildsManagerImage(t *testing.T) {
	ctx := context.Background()
	reg := testregistry.Start(t)
	out := t.TempDir()
	opts := func() Options {
		return Options{Registry: reg.Host + "/ops", Source: sampleProject, Created: time.Unix(1700000000, 0).UTC(),
			Package: packaging.PackageOptions{Load: packaging.Options{Version: "0.3.0"}}}
	}
	res, err := Publish(ctx, out, opts())
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if res.Image == nil || res.Image.Skipped != "" || res.Artifacts[0].Kind != "image" || res.Artifacts[0].Action != ActionPushed {
		t.Fatalf("the image was not built and pushed first: %+v %+v", res.Image, res.Artifacts)
	}
	img := res.Artifacts[0]
	if res.Image.Binary != "/manager" || res.Image.Main != "cmd" {
		t.Errorf("built %s from %s, want /manager from cmd (the Deployment's command, the sample's main)", res.Image.Binary, res.Image.Main)
	}
	repo := "ops/kvstore-operator"
	if !strings.HasPrefix(img.Ref, reg.Host+"/"+repo+":0.3.0") {
		t.Errorf("image pushed as %s, want %s/%s:0.3.0 (the Makefile IMG's name, the version)", img.Ref, reg.Host, repo)
	}

	idx := reg.Manifest(t, repo, "0.3.0")
	if idx["mediaType"] != "application/vnd.oci.image.index.v1+json" {
		t.Fatalf("the tag holds %v, not an OCI index", idx["mediaType"])
	}
	var archs []string
	for _, m := range idx["manifests"].([]any) {
		d := m.(map[string]any)
		archs = append(archs, d["platform"].(map[string]any)["architecture"].(string))
		man := reg.Manifest(t, repo, d["digest"].(string))
		cfg := reg.BlobJSON(t, repo, man["config"].(map[string]any)["digest"].(string))["config"].(map[string]any)
		labels, _ := cfg["Labels"].(map[string]any)
		if cfg["User"] != "65532" || cfg["Entrypoint"].([]any)[0] != "/manager" || labels["org.opencontainers.image.version"] != "0.3.0" {
			t.Errorf("%s: user %v entrypoint %v labels %v", d["platform"], cfg["User"], cfg["Entrypoint"], labels)
		}
	}
	if strings.Join(archs, ",") != "amd64,arm64" {
		t.Errorf("index platforms %v, want amd64,arm64", archs)
	}
	// No referrers API in this registry: the SBOM is in the fallback tag.
	refs := reg.Manifest(t, repo, strings.Replace(img.Digest, ":", "-", 1))
	found := false
	for _, m := range refs["manifests"].([]any) {
		if m.(map[string]any)["artifactType"] == "application/spdx+json" {
			found = true
			sbom := reg.Manifest(t, repo, m.(map[string]any)["digest"].(string))
			if sbom["subject"].(map[string]any)["digest"] != img.Digest {
				t.Errorf("the SBOM's subject is %v, not the image %s", sbom["subject"], img.Digest)
			}
		}
	}
	if !found {
		t.Errorf("the fallback tag lists no SPDX referrer: %v", refs)
	}

	// The packaged chart and bundle name the pushed image by digest.
	pinned := reg.Host + "/" + repo + "@" + img.Digest
	ch, err := loader.LoadDir(filepath.Join(out, "charts", "sample-operator"))
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := json.Marshal(ch.Values)
	if !strings.Contains(string(vals), img.Digest) {
		t.Errorf("chart values do not name the image digest %s: %s", img.Digest, vals)
	}
	csv, err := os.ReadFile(filepath.Join(out, "bundle", "sample-operator", "manifests", "sample-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(csv), pinned) < 2 {
		t.Errorf("the CSV names %s fewer than twice (Deployment, relatedImages)", pinned)
	}
	for _, sub := range []string{"bundle/sample-operator", "charts/sample-operator"} {
		var rep *validate.Report
		if strings.HasPrefix(sub, "bundle") {
			rep, err = validate.ValidateBundle(filepath.Join(out, sub), validate.Options{})
		} else {
			rep, err = validate.ValidateChart(filepath.Join(out, sub), validate.Options{})
		}
		if err != nil || rep.Count(validate.SeverityError) > 0 {
			t.Errorf("validate %s after publish: %v %+v", sub, err, rep)
		}
	}

	again, err := Publish(ctx, out, opts())
	if err != nil {
		t.Fatalf("second publish: %v", err)
	}
	if !again.Unchanged() || again.Artifacts[0].Digest != img.Digest {
		t.Errorf("a second publish of the same source changed something: %+v", again.Artifacts)
	}

	// Other content under the published version: refused before anything
	// is written, unless forced.
	other := opts()
	other.Created = other.Created.Add(time.Hour)
	before, _ := os.ReadFile(filepath.Join(out, "bundle", "sample-operator", "manifests", "sample-operator.clusterserviceversion.yaml"))
	if _, err := Publish(ctx, out, other); err == nil || !strings.Contains(err.Error(), "kvstore-operator:0.3.0 is already published with different content") {
		t.Fatalf("republishing other image content: %v, want a refusal naming the image", err)
	}
	after, _ := os.ReadFile(filepath.Join(out, "bundle", "sample-operator", "manifests", "sample-operator.clusterserviceversion.yaml"))
	if string(before) != string(after) {
		t.Error("a refused publish rewrote the packaged CSV")
	}
	other.Force = true
	forced, err := Publish(ctx, out, other)
	if err != nil || forced.Artifacts[0].Action != ActionForced || forced.Artifacts[0].Digest == img.Digest {
		t.Fatalf("--force: %v %+v", err, forced)
	}
}
