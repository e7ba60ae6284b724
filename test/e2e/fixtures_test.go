package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
)

// packagingFixtures are the project shapes of pkg/packaging/testdata, by
// directory, with the chart name and whether the bundle carries what the
// OperatorHub validator asks for.
var packagingFixtures = []struct {
	dir, chart  string
	operatorHub bool
	// values are set on both installs.
	values map[string]any
}{
	{"legacy", "legacy-operator", false, nil},
	{"webhook", "hook-operator", false, nil},
	{"operatorcerts", "ocert-operator", false, nil},
	{"sdk", "memcache-operator", true, nil},
	{"conversion", "conv-operator", false, nil},
	{"workloads", "fleet-operator", false, nil},
	{"multigroup", "maritime-cargo-routing-planner-operator1", false, nil},
	{"manycrds", "many-operator", false, nil},
	// An APIService nothing serves would break discovery for the tests
	// sharing this cluster; TestAPIServiceChartInstallsTwice installs it
	// on a cluster of its own.
	{"aggregated", "agg-operator", false, map[string]any{"apiService": map[string]any{"enabled": false}}},
}

// Every fixture packages deterministically; its chart passes strict lint
// with the longest release name (Helm SDK, helm 3 and helm 4 CLIs) and
// installs into two namespaces with every workload Ready; its outputs
// pass opctl validate (with the OperatorHub suite where the metadata is
// there).
func TestPackagingFixtures(t *testing.T) {
	c := testcluster.Require(t, cluster)
	bin := testcluster.RequireBinDir(t)
	for _, fx := range packagingFixtures {
		t.Run(fx.dir, func(t *testing.T) {
			project := filepath.Join("..", "..", "pkg", "packaging", "testdata", fx.dir)
			out := packageTwice(t, project)
			chartDir := filepath.Join(out, "charts", fx.chart)
			bundleDir := filepath.Join(out, "bundle", fx.chart)

			values := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(values, []byte("crds:\n  install: true\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, helm := range []string{"helm", "helm4"} {
				cmd := exec.Command(filepath.Join(bin, helm), "lint", "--strict", "--namespace", "ns-"+strings.Repeat("x", 60), "-f", values, chartDir)
				if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "0 chart(s) failed") {
					t.Errorf("%s lint --strict: %v\n%s", helm, err, b)
				}
				// helm template renders under the longest release name.
				cmd = exec.Command(filepath.Join(bin, helm), "template", longRelease, chartDir, "--namespace", "ns")
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s template %s: %v\n%s", helm, longRelease, err, b)
				}
			}
			lint := action.NewLint()
			lint.Strict, lint.Namespace = true, "ns"
			if res := lint.Run([]string{chartDir}, map[string]any{}); len(res.Errors) > 0 {
				t.Errorf("Helm SDK strict lint: %v", res.Errors)
			}
			ch, err := loader.Load(chartDir)
			if err != nil {
				t.Fatal(err)
			}
			renderNames(t, ch, longRelease, "ns-"+strings.Repeat("x", 60))

			suite := "default"
			if fx.operatorHub {
				suite = "operatorhub"
			}
			for _, dir := range []string{bundleDir, chartDir} {
				if code, stdout, stderr := opctl(t, "validate", "--suite", suite, dir); code != 0 {
					t.Errorf("opctl validate --suite %s %s: exit %d\n%s%s", suite, dir, code, stdout, stderr)
				}
			}

			installCRDsOf(t, c, project)
			for _, base := range []string{"fx-a", "fx-b"} {
				ns := c.Namespace(t, base, nil)
				install := action.NewInstall(helmConfig(t, ns))
				install.ReleaseName, install.Namespace = longRelease, ns
				install.Wait, install.WaitForJobs, install.Timeout = true, true, 2*time.Minute
				vals := map[string]any{"crds": map[string]any{"install": false}}
				for k, v := range fx.values {
					vals[k] = v
				}
				rel, err := install.RunWithContext(context.Background(), ch, vals)
				if err != nil {
					t.Fatalf("helm install %s into %s: %v", longRelease, ns, err)
				}
				t.Cleanup(func() { _, _ = action.NewUninstall(helmConfig(t, ns)).Run(longRelease) })
				checkWorkloadsReady(t, c, ns, rel.Manifest)
			}
		})
	}
}

// packageTwice runs opctl package twice and requires the same bytes.
func packageTwice(t *testing.T, project string) string {
	t.Helper()
	var outs []string
	for range 2 {
		out := t.TempDir()
		if b, err := exec.Command(opctlBin, "package", project, "--out", out).CombinedOutput(); err != nil {
			t.Fatalf("opctl package %s: %v\n%s", project, err, b)
		}
		outs = append(outs, out)
	}
	a, b := readTree(t, outs[0]), readTree(t, outs[1])
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("two runs wrote %d and %d files", len(a), len(b))
	}
	for name, content := range a {
		if !bytes.Equal(content, b[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
	return outs[0]
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// installCRDsOf installs the project's CRDs once and removes them after
// the test.
func installCRDsOf(t *testing.T, c *testcluster.Cluster, project string) {
	t.Helper()
	crds := filepath.Join(project, "config", "crd", "bases")
	if err := c.InstallCRDs(context.Background(), crds); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ext := apiextensionsclient.NewForConfigOrDie(c.Config)
		entries, _ := os.ReadDir(crds)
		for _, e := range entries {
			var crd struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			if b, err := os.ReadFile(filepath.Join(crds, e.Name())); err == nil && yaml.Unmarshal(b, &crd) == nil {
				_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Metadata.Name, metav1.DeleteOptions{})
			}
		}
	})
}

// checkWorkloadsReady reads back every Deployment, StatefulSet and
// DaemonSet of the release and requires all its pods Ready within 30 s:
// Helm's wait reads a Deployment's new ReplicaSet, whose status the
// Deployment's own status follows a moment later.
func checkWorkloadsReady(t *testing.T, c *testcluster.Cluster, ns, manifest string) {
	t.Helper()
	var n int
	var notReady []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if n, notReady = workloadsReady(t, c, ns, manifest); len(notReady) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range notReady {
		t.Error(w)
	}
	if n == 0 {
		t.Errorf("no workload in the release in %s", ns)
	}
	t.Logf("%s: %d workloads Ready", ns, n)
}

// workloadsReady counts the release's workloads and says which are not
// Ready.
func workloadsReady(t *testing.T, c *testcluster.Cluster, ns, manifest string) (n int, notReady []string) {
	t.Helper()
	ctx := context.Background()
	for _, doc := range strings.Split(manifest, "\n---") {
		var m struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if yaml.Unmarshal([]byte(doc), &m) != nil {
			continue
		}
		var ready, want int32
		switch m.Kind {
		case "Deployment":
			d, err := c.Client.AppsV1().Deployments(ns).Get(ctx, m.Metadata.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ready, want = d.Status.ReadyReplicas, *d.Spec.Replicas
		case "StatefulSet":
			s, err := c.Client.AppsV1().StatefulSets(ns).Get(ctx, m.Metadata.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ready, want = s.Status.ReadyReplicas, *s.Spec.Replicas
		case "DaemonSet":
			var d *appsv1.DaemonSet
			d, err := c.Client.AppsV1().DaemonSets(ns).Get(ctx, m.Metadata.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ready, want = d.Status.NumberReady, d.Status.DesiredNumberScheduled
		default:
			continue
		}
		n++
		if want == 0 || ready != want {
			notReady = append(notReady, fmt.Sprintf("%s %s/%s: %d of %d pods Ready", m.Kind, ns, m.Metadata.Name, ready, want))
		}
	}
	return n, notReady
}
