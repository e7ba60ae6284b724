package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart/loader"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testregistry"
	"opctl.dev/opctl/pkg/publish"
)

// Three versions of the sample are packaged and published to a real
// registry; opm, helm and the control plane then consume what was pushed.
func TestPublishRoundTrip(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	reg := testregistry.Start(t)
	bin := testcluster.RequireBinDir(t)
	repo := reg.Host + "/ops"
	catalog := filepath.Join(t.TempDir(), "catalog")
	versions := []string{"0.1.0", "0.2.0", "0.3.0"}
	// An image of this test's own: the tenancy tests hold
	// opctl/kvstore-operator:0.3.0 never ready on the shared control plane.
	const image = "opctl/kvstore-operator-published:"
	outs := map[string]string{}
	bundleDigests := map[string]string{}
	for _, v := range versions {
		out := t.TempDir()
		if code, _, errOut := opctl(t, "package", "../../operators/sample", "--out", out, "--version", v, "--image", image+v); code != 0 {
			t.Fatalf("opctl package %s: exit %d: %s", v, code, errOut)
		}
		res := publishJSON(t, out, "--registry", repo, "--catalog", catalog)
		for _, a := range res.Artifacts {
			if a.Action != publish.ActionPushed {
				t.Errorf("%s %s: action %q, want pushed", v, a.Kind, a.Action)
			}
			if a.Kind == "bundle" {
				bundleDigests["sample-operator.v"+v] = a.Digest
			}
		}
		outs[v] = out
	}

	t.Run("opm renders the channel from the catalog image", func(t *testing.T) {
		metas := opmJSON(t, bin, "render", repo+"/sample-operator-catalog:latest", "--use-http", "-o", "json")
		edges := map[string]string{}
		for _, m := range metas {
			switch m["schema"] {
			case "olm.channel":
				for _, e := range m["entries"].([]any) {
					entry := e.(map[string]any)
					r, _ := entry["replaces"].(string)
					edges[entry["name"].(string)] = r
				}
			case "olm.bundle":
				want := repo + "/sample-operator-bundle@" + bundleDigests[m["name"].(string)]
				if m["image"] != want {
					t.Errorf("bundle %s image %v, want %s", m["name"], m["image"], want)
				}
			}
		}
		want := map[string]string{"sample-operator.v0.1.0": "", "sample-operator.v0.2.0": "sample-operator.v0.1.0", "sample-operator.v0.3.0": "sample-operator.v0.2.0"}
		if len(edges) != len(want) {
			t.Fatalf("channel entries %v, want %v", edges, want)
		}
		for k, v := range want {
			if edges[k] != v {
				t.Errorf("%s replaces %q, want %q", k, edges[k], v)
			}
		}
	})

	t.Run("opm validates the catalog directory", func(t *testing.T) {
		if b, err := exec.Command(filepath.Join(bin, "opm"), "validate", catalog).CombinedOutput(); err != nil {
			t.Fatalf("opm validate: %v\n%s", err, b)
		}
	})

	t.Run("the bundle image holds exactly the bundle's files", func(t *testing.T) {
		for _, v := range versions {
			got := imageFiles(t, repo+"/sample-operator-bundle:v"+v)
			want := map[string]string{}
			dir := filepath.Join(outs[v], "bundle", "sample-operator")
			for _, sub := range []string{"manifests", "metadata"} {
				err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					b, err := os.ReadFile(p)
					rel, _ := filepath.Rel(dir, p)
					want[filepath.ToSlash(rel)] = string(b)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if len(got) != len(want) {
				t.Errorf("v%s: image has %d files, bundle %d: %v", v, len(got), len(want), keysOf(got))
			}
			for p, data := range want {
				if got[p] != data {
					t.Errorf("v%s: %s differs in the image (or is missing)", v, p)
				}
			}
		}
	})

	// Helm pulls every version; the last one installs and becomes Ready.
	pulled := t.TempDir()
	for _, v := range versions {
		cmd := exec.Command(filepath.Join(bin, "helm"), "pull", "oci://"+repo+"/charts/sample-operator", "--version", v, "--plain-http", "--destination", pulled)
		cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm pull %s: %v\n%s", v, err, b)
		}
	}
	ch, err := loader.Load(filepath.Join(pulled, "sample-operator-0.3.0.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.Version != "0.3.0" {
		t.Fatalf("pulled chart version %s", ch.Metadata.Version)
	}
	installSampleCRDs(t, c)
	ns := c.Namespace(t, "published", restricted)
	helmInstall(t, ch, ns, true, map[string]any{"crds": map[string]any{"install": false}})
	deps, err := c.Client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(deps.Items) != 1 {
		t.Fatalf("deployments in %s: %v, %v", ns, deps, err)
	}
	d := deps.Items[0]
	if d.Status.ReadyReplicas < 1 || d.Spec.Template.Spec.Containers[0].Image != image+"0.3.0" {
		t.Errorf("deployment %s: ready %d, image %s", d.Name, d.Status.ReadyReplicas, d.Spec.Template.Spec.Containers[0].Image)
	}

	t.Run("republishing is a no-op", func(t *testing.T) {
		code, out, errOut := opctl(t, "publish", outs["0.3.0"], "--registry", repo, "--catalog", catalog)
		if code != 0 || !strings.Contains(out, "already published, nothing to do") {
			t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
		}
		if errOut != "" { // not a terminal, -v 0: no progress
			t.Errorf("progress off a terminal at -v 0:\n%s", errOut)
		}
	})
	t.Run("progress at -v 1", func(t *testing.T) {
		code, _, errOut := opctl(t, "publish", outs["0.3.0"], "--registry", repo, "--catalog", catalog, "-v", "1")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
		for _, want := range []string{"building the bundle image of", "...\n", "published in "} {
			if !strings.Contains(errOut, want) {
				t.Errorf("progress lacks %q:\n%s", want, errOut)
			}
		}
	})
}

func publishJSON(t *testing.T, args ...string) publish.Result {
	t.Helper()
	code, out, errOut := opctl(t, append([]string{"publish"}, append(args, "-o", "json")...)...)
	if code != 0 {
		t.Fatalf("opctl publish %v: exit %d: %s", args, code, errOut)
	}
	var res publish.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("publish -o json: %v\n%s", err, out)
	}
	return res
}

// opmJSON runs opm with a containers policy that accepts local images and
// decodes its stream of JSON objects.
func opmJSON(t *testing.T, bin string, args ...string) []map[string]any {
	t.Helper()
	home := t.TempDir()
	policy := filepath.Join(home, ".config", "containers", "policy.json")
	if err := os.MkdirAll(filepath.Dir(policy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "opm"), args...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("opm %v: %v\n%s", args, err, stderr.String())
	}
	var metas []map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding opm output: %v", err)
		}
		metas = append(metas, m)
	}
	return metas
}

// imageFiles pulls an image and returns its regular files by path.
func imageFiles(t *testing.T, ref string) map[string]string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatalf("pulling %s: %v", ref, err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[strings.TrimPrefix(h.Name, "/")] = string(b)
		}
	}
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// The CLI reads the password from stdin and trusts --ca-file; without the
// CA it explains the certificate problem and exits non-zero.
func TestPublishSecureRegistryCLI(t *testing.T) {
	reg := testregistry.StartSecure(t)
	out := t.TempDir()
	if code, _, errOut := opctl(t, "package", "../../operators/sample", "--out", out); code != 0 {
		t.Fatalf("opctl package: exit %d: %s", code, errOut)
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(opctlBin, append([]string{"publish", out, "--registry", reg.Host + "/ops", "--username", reg.Username, "--password-stdin"}, args...)...)
		cmd.Stdin = strings.NewReader(reg.Password + "\n")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}
	if code, _, errOut := run(); code == 0 || !strings.Contains(errOut, "pass --ca-file") {
		t.Errorf("without --ca-file: exit %d, stderr %q", code, errOut)
	}
	code, stdout, errOut := run("--ca-file", reg.CAFile)
	if code != 0 || !strings.Contains(stdout, "published sample-operator.v0.1.0") {
		t.Fatalf("with --ca-file: exit %d\n%s\n%s", code, stdout, errOut)
	}
}
