package packaging

import (
	"bytes"
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// tree reads every file under dir, by slash-separated relative path.
func tree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffTrees(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("missing %s", name)
		case !bytes.Equal(g, w):
			t.Errorf("%s differs from the golden file (run go test -update to refresh)", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected %s", name)
		}
	}
}

func packageTo(t testing.TB, project string, opts PackageOptions) (string, *Result) {
	t.Helper()
	opts.Out = t.TempDir()
	res, err := Package(context.Background(), project, opts)
	if err != nil {
		t.Fatal(err)
	}
	return opts.Out, res
}

func TestGoldenProjects(t *testing.T) {
	tests := []struct {
		fixture  string
		opts     PackageOptions
		warnings int
		// hubGaps is what the OperatorHub warning must name; "" for none.
		hubGaps string
		// mentions are texts some warning must hold.
		mentions []string
	}{
		{"legacy", PackageOptions{PerTarget: map[string]TargetOptions{"bundle": &BundleOptions{Channels: []string{"stable", "fast"}}}}, 4, "provider.name (an error for the validator), icon (a warning)", nil},
		{"webhook", PackageOptions{PerTarget: map[string]TargetOptions{"chart": &ChartOptions{CRDs: CRDsSeparateChart}}}, 2, "does not set: icon (a warning);", nil},
		// The operator issues its own webhook certificates: no certificate
		// objects, volumes or caBundle; OLM is told to step in.
		{"operatorcerts", PackageOptions{}, 3, "does not set: icon (a warning);", nil},
		// operator-sdk: base CSV, markers, PROJECT and Makefile, no opctl.yaml.
		{"sdk", PackageOptions{}, 2, "", nil},
		// Validating webhooks that call two Services on two Deployments.
		{"twohooks", PackageOptions{}, 3, "does not set: icon (a warning);", nil},
		// Conversion webhooks next to admission webhooks.
		{"conversion", PackageOptions{}, 3, "does not set: icon (a warning);", nil},
		// Several workloads and kinds beside the manager.
		{"workloads", PackageOptions{}, 16, "does not set: icon (a warning);", nil},
		// kubebuilder go/v3, multigroup, kube-rbac-proxy, a 40-character name.
		{"multigroup", PackageOptions{}, 4, "does not set: icon (a warning);", nil},
		// kubebuilder go/v4 whose manager reads no namespace: AllNamespaces
		// only, rbac.scope=cluster by default.
		{"allns", PackageOptions{}, 3, "does not set: icon (a warning);", nil},
		// WATCH_NAMESPACE read outside cmd/ and split on commas.
		{"watchenv", PackageOptions{}, 2, "does not set: icon (a warning);", nil},
		// A --namespace flag into the cache's DefaultNamespaces.
		{"nsflag", PackageOptions{}, 2, "does not set: icon (a warning);", nil},
		// OPERATOR_SCOPE_NAMESPACE read outside cmd/ into the cache, beside
		// OPERATOR_NAMESPACE for leader election, both set in the manifest
		// from the pod's namespace: the chart overrides the first only.
		{"scopens", PackageOptions{}, 2, "does not set: icon (a warning);", nil},
		// A --watch-namespace flag split on commas into the cache.
		{"watchflag", PackageOptions{}, 2, "does not set: icon (a warning);", nil},
		// A manager that reads ENABLE_WEBHOOKS: webhooks.enabled sets it.
		{"webhookenv", PackageOptions{}, 2, "does not set: icon (a warning);", nil},
		// A manager pod below Pod Security restricted, made restricted: a
		// warning per change.
		{"belowrestricted", PackageOptions{}, 9, "does not set: icon (a warning);", nil},
		// A manager pod that needs hostNetwork: kept, privileged.
		{"hostnetwork", PackageOptions{}, 3, "does not set: icon (a warning);", nil},
		// envsubst placeholders and a ko:// image: chart values, bundle
		// warnings.
		{"placeholders", PackageOptions{}, 4, "does not set: icon (a warning);", nil},
		// Placeholders in values taken from the manager (affinity,
		// tolerations, nodeSelector, priorityClassName, args, a resources
		// quantity) and in a number, read with its default.
		{"placeholdervalues", PackageOptions{}, 4, "does not set: icon (a warning);", []string{"the bundle keeps the placeholders NODE_POOL,",
			`spec.template.spec.terminationGracePeriodSeconds is "${GRACE_SECONDS:=10}", a placeholder where the API takes no string: the chart and the bundle carry 10`}},
		// Values a release flow fills in, in the base CSV (minKubeVersion,
		// replaces, skips), the Makefile (IMG with an empty tag) and the
		// manager (<OPERATOR_IMG>), beside an empty optional component and
		// a *_IMAGE variable that holds a file path.
		{"releasetemplates", PackageOptions{}, 7, "", []string{
			`config/network-policy is not carried as the optional networkPolicy component: building kustomize overlay testdata/releasetemplates/config/network-policy: kustomization.yaml is empty`,
			`image "<OPERATOR_IMG>" (manager) is not an image reference`,
			`Makefile: IMG "registry.example.com/memcache/memcache-operator:" is not an image reference`,
			`clusterserviceversion.yaml: spec.minKubeVersion "MIN_KUBE_VERSION" is not SemVer (like 1.30.0) and was left out`,
			`clusterserviceversion.yaml: spec.replaces "<OLD_BUNDLE_VERSION>" is not a CSV name and was left out`,
			`clusterserviceversion.yaml: spec.skips "<SKIPPED_VERSION>" is not a CSV name and was left out`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			out, res := packageTo(t, filepath.Join("testdata", tt.fixture), tt.opts)
			checkGolden(t, out, tt.fixture)
			if len(res.Warnings) != tt.warnings || !strings.Contains(res.Warnings[0], "no platform-as-code annotations") {
				t.Errorf("warnings %v, want %d naming CRDs without operands", res.Warnings, tt.warnings)
			}
			if hub := slices.ContainsFunc(res.Warnings, func(w string) bool {
				return strings.Contains(w, "OperatorHub validator") && strings.Contains(w, tt.hubGaps)
			}); hub != (tt.hubGaps != "") {
				t.Errorf("warnings %v: want one naming the OperatorHub gaps %q", res.Warnings, tt.hubGaps)
			}
			for _, m := range tt.mentions {
				if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, m) }) {
					t.Errorf("warnings %v: want one holding %q", res.Warnings, m)
				}
			}
			if tt.fixture == "operatorcerts" && !slices.ContainsFunc(res.Warnings, func(w string) bool {
				return strings.Contains(w, "should step aside") && strings.Contains(w, "flag --enable-cert-rotation") && strings.Contains(w, "env WEBHOOK_CERT_SECRET_NAME")
			}) {
				t.Errorf("warnings %v: want one naming the operator's certificate switches", res.Warnings)
			}
		})
	}
}

// checkGolden compares a package's output with testdata/golden/<fixture>,
// refreshing it first with -update.
func checkGolden(t *testing.T, out, fixture string) {
	t.Helper()
	golden := filepath.Join("testdata", "golden", fixture)
	if *update {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(golden, os.DirFS(out)); err != nil {
			t.Fatal(err)
		}
	}
	diffTrees(t, tree(t, out), tree(t, golden))
}

func TestPackagingIsDeterministic(t *testing.T) {
	a, _ := packageTo(t, sampleDir, PackageOptions{})
	b, _ := packageTo(t, sampleDir, PackageOptions{})
	diffTrees(t, tree(t, a), tree(t, b))
	// The committed dogfood output is the same bytes as well.
	committed := tree(t, filepath.Join("..", "..", "charts", "sample-operator"))
	diffTrees(t, tree(t, filepath.Join(a, "charts", "sample-operator")), committed)
}

func TestRegenerationKeepsUserFiles(t *testing.T) {
	project := copyProject(t, sampleDir)
	before := readFile(t, filepath.Join(project, ConfigFile))
	out, _ := packageTo(t, project, PackageOptions{})
	chart := filepath.Join(out, "charts", "sample-operator")
	mustWrite(t, filepath.Join(chart, "values.local.yaml"), "replicas: 3\n")
	mustWrite(t, filepath.Join(chart, "templates", "extra.yaml"), "# mine\n")
	mustWrite(t, filepath.Join(chart, "values.yaml"), "tampered\n")
	if _, err := Package(context.Background(), project, PackageOptions{Out: out}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, filepath.Join(chart, "values.local.yaml"))); got != "replicas: 3\n" {
		t.Errorf("values.local.yaml = %q, want it kept", got)
	}
	if got := string(readFile(t, filepath.Join(chart, "templates", "extra.yaml"))); got != "# mine\n" {
		t.Errorf("a user template was not kept")
	}
	if strings.Contains(string(readFile(t, filepath.Join(chart, "values.yaml"))), "tampered") {
		t.Errorf("a generated file was not regenerated")
	}
	if !bytes.Equal(before, readFile(t, filepath.Join(project, ConfigFile))) {
		t.Errorf("opctl.yaml was changed")
	}
}

func TestFailureLeavesOutputUntouched(t *testing.T) {
	project := copyProject(t, sampleDir)
	out, _ := packageTo(t, project, PackageOptions{})
	before := tree(t, out)
	crd := filepath.Join(project, "config", "crd", "bases", "kv.opctl.dev_kvstores.yaml")
	mustWrite(t, crd, strings.Replace(string(readFile(t, crd)), "openAPIV3Schema:", "openAPIV3SchemaX:", 1))
	if _, err := Package(context.Background(), project, PackageOptions{Out: out}); err == nil {
		t.Fatal("packaging a CRD without schema succeeded")
	}
	diffTrees(t, tree(t, out), before)
}

func copyProject(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "project")
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
