package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
)

// A 40-character project name and Helm's longest release name (53).
const (
	longProject = "payments-ledger-reconciliation-operator1"
	longRelease = "tenant-platform-team-payments-production-eu-west-1-ab"
)

// labelKinds need names that are DNS-1123 labels (63 characters); every
// other name must be a DNS-1123 subdomain.
var labelKinds = map[string]bool{"Service": true, "Deployment": true, "StatefulSet": true, "DaemonSet": true, "Namespace": true, "CronJob": true, "Job": true}

// shortKinds have controllers that derive longer names from theirs: a
// CronJob's Jobs and a StatefulSet's revision label add 11 characters.
var shortKinds = map[string]int{"CronJob": 52, "StatefulSet": 52}

// Every name a chart renders fits, for a 40-character project and a
// 53-character release name; the chart passes strict lint and installs
// into two namespaces with every workload Ready.
func TestLongNames(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	if len(longProject) != 40 || len(longRelease) != 53 {
		t.Fatalf("fixture names are %d and %d characters", len(longProject), len(longRelease))
	}
	for _, tc := range []struct{ name, src, group, from string }{
		{"sample", "../../operators/sample", "longnames.opctl.dev", "kv.opctl.dev"},
		{"webhooks", "../../pkg/packaging/testdata/webhook", "longhooks.example.com", "hook.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testproject.Copy(t, tc.src, tc.from, tc.group)
			testproject.Edit(t, filepath.Join(dir, "opctl.yaml"), func(s string) string {
				return regexp.MustCompile(`(?m)^name: .*$`).ReplaceAllString(s, "name: "+longProject)
			})
			ch := packageChart(t, dir)
			rendered := renderNames(t, ch, longRelease, "ns-"+strings.Repeat("x", 60))
			if len(rendered) < 5 {
				t.Fatalf("only %d objects rendered", len(rendered))
			}
			lintStrict(t, dir)
			// A real install, twice, with the longest release name.
			installCRDsOf(t, c, dir)
			for _, base := range []string{"long-a", "long-b"} {
				ns := c.Namespace(t, base, restricted)
				install := action.NewInstall(helmConfig(t, ns))
				install.ReleaseName, install.Namespace = longRelease, ns
				install.Wait, install.Timeout = true, 2*time.Minute
				if _, err := install.RunWithContext(ctx, ch, map[string]any{"crds": map[string]any{"install": false}}); err != nil {
					t.Fatalf("helm install %s into %s: %v", longRelease, ns, err)
				}
				t.Cleanup(func() { _, _ = action.NewUninstall(helmConfig(t, ns)).Run(longRelease) })
			}
		})
	}
}

// renderNames renders the chart with every optional part on, checks each
// object's name, and returns the names by kind/name.
func renderNames(t *testing.T, ch *chart.Chart, release, namespace string) map[string]bool {
	t.Helper()
	var all map[string]bool
	vals := map[string]any{"crds": map[string]any{"install": true}, "rbac": map[string]any{"scope": "cluster"}}
	if _, webhooks := ch.Values["webhooks"]; webhooks {
		vals["webhooks"] = map[string]any{"enabled": true}
	}
	_, certs := ch.Values["certManager"]
	for _, certManager := range []bool{false, true} {
		if certs {
			vals["certManager"] = map[string]any{"enabled": certManager}
		}
		top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
		if err != nil {
			t.Fatal(err)
		}
		out, err := engine.Render(ch, top)
		if err != nil {
			t.Fatalf("rendering with release %s: %v", release, err)
		}
		seen := map[string]bool{}
		for file, text := range out {
			for _, doc := range releaseutil.SplitManifests(text) {
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || len(u.Object) == 0 {
					continue
				}
				name, kind := u.GetName(), u.GetKind()
				check := validation.IsDNS1123Subdomain
				if labelKinds[kind] {
					check = validation.IsDNS1123Label
				}
				if errs := check(name); len(errs) > 0 {
					t.Errorf("%s: %s %q: %s", file, kind, name, strings.Join(errs, "; "))
				}
				if max, ok := shortKinds[kind]; ok && len(name) > max {
					t.Errorf("%s: %s %q is longer than %d characters", file, kind, name, max)
				}
				key := kind + "/" + name
				if seen[key] {
					t.Errorf("%s: two objects named %s", file, key)
				}
				seen[key] = true
			}
		}
		t.Logf("certManager.enabled=%t: %d objects checked", certManager, len(seen))
		all = seen
	}
	return all
}

// lintStrict runs the helm CLI's and the SDK's strict lint on the
// project's packaged chart.
func lintStrict(t *testing.T, project string) {
	t.Helper()
	out := t.TempDir()
	if b, err := exec.Command(opctlBin, "package", project, "--out", out, "--chart-only").CombinedOutput(); err != nil {
		t.Fatalf("opctl package: %v\n%s", err, b)
	}
	dir := filepath.Join(out, "charts", longProject)
	bin := testcluster.RequireBinDir(t)
	if b, err := exec.Command(filepath.Join(bin, "helm"), "lint", "--strict", dir).CombinedOutput(); err != nil || !strings.Contains(string(b), "0 chart(s) failed") {
		t.Errorf("helm lint --strict: %v\n%s", err, b)
	}
	lint := action.NewLint()
	lint.Strict = true
	if res := lint.Run([]string{dir}, map[string]any{}); len(res.Errors) > 0 {
		t.Errorf("Helm SDK strict lint: %v", res.Errors)
	}
	if _, err := loader.Load(dir); err != nil {
		t.Error(err)
	}
}
