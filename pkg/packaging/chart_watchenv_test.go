package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
)

// watchRenders are the fixtures whose manager reads its namespaces, or
// its webhook switch, by a name of its own, with the values rendered and
// what the manager container must then get.
var watchRenders = []struct {
	name, fixture string
	values        map[string]any
	set           []string // the same values for helm template
	// env is what the manager's env must hold (name → value, "fieldRef:"
	// for a downward API field); args what its args must hold.
	env  map[string]string
	args []string
}{
	{"scopens-two", "scopens", map[string]any{"watchNamespaces": []any{"team-a", "team-b"}}, []string{"--set", "watchNamespaces={team-a,team-b}"},
		map[string]string{"OPERATOR_SCOPE_NAMESPACE": "team-a,team-b", "OPERATOR_NAMESPACE": "fieldRef:metadata.namespace"}, nil},
	{"watchflag-two", "watchflag", map[string]any{"watchNamespaces": []any{"team-a", "team-b"}}, []string{"--set", "watchNamespaces={team-a,team-b}"},
		nil, []string{"--watch-namespace=team-a,team-b"}},
	{"webhookenv-disabled", "webhookenv", map[string]any{"webhooks": map[string]any{"enabled": false}}, []string{"--set", "webhooks.enabled=false"},
		map[string]string{"ENABLE_WEBHOOKS": "false", "WATCH_NAMESPACE": "team-a"}, nil},
	{"webhookenv-enabled", "webhookenv", nil, nil,
		map[string]string{"ENABLE_WEBHOOKS": "true", "WATCH_NAMESPACE": "team-a"}, nil},
}

// packageChart packages a fixture and returns the output directory and
// its one chart's.
func packageChart(t *testing.T, fixture string) (string, string) {
	t.Helper()
	out, _ := packageTo(t, filepath.Join("testdata", fixture), PackageOptions{})
	charts, _ := filepath.Glob(filepath.Join(out, "charts", "*", "Chart.yaml"))
	if len(charts) != 1 {
		t.Fatalf("charts %v", charts)
	}
	return out, filepath.Dir(charts[0])
}

// renderedManager parses a rendered Deployment and returns its manager
// container.
func renderedManager(t *testing.T, text string) corev1.Container {
	t.Helper()
	var d appsv1.Deployment
	if err := yaml.Unmarshal([]byte(text), &d); err != nil {
		t.Fatalf("rendered Deployment: %v\n%s", err, text)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" || len(d.Spec.Template.Spec.Containers) == 1 {
			return c
		}
	}
	t.Fatalf("no manager container in\n%s", text)
	return corev1.Container{}
}

// checkManager asserts the env and args a manager container must get.
func checkManager(t *testing.T, c corev1.Container, env map[string]string, args []string) {
	t.Helper()
	for name, want := range env {
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
		if i < 0 {
			t.Errorf("env %s missing: %+v", name, c.Env)
			continue
		}
		if n := len(slices.DeleteFunc(slices.Clone(c.Env), func(e corev1.EnvVar) bool { return e.Name != name })); n != 1 {
			t.Errorf("env %s set %d times", name, n)
		}
		e := c.Env[i]
		got := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			got = "fieldRef:" + e.ValueFrom.FieldRef.FieldPath
		}
		if got != want {
			t.Errorf("env %s = %q, want %q", name, got, want)
		}
	}
	for _, a := range args {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %q lack %q", c.Args, a)
		}
	}
}

// The manager Deployment rendered by the Helm SDK sets the setting the
// code reads (OPERATOR_SCOPE_NAMESPACE, --watch-namespace) from
// watchNamespaces, and ENABLE_WEBHOOKS from webhooks.enabled; goldens
// under testdata/golden/rendered.
func TestWatchSettingRendered(t *testing.T) {
	for _, tt := range watchRenders {
		t.Run(tt.name, func(t *testing.T) {
			_, chart := packageChart(t, tt.fixture)
			d := render(t, chart, "team-a", tt.values)[filepath.Base(chart)+"/templates/deployment.yaml"]
			golden := filepath.Join("testdata", "golden", "rendered", tt.name+".yaml")
			if *update {
				mustWrite(t, golden, d)
			}
			if want := string(readFile(t, golden)); d != want {
				t.Errorf("rendered Deployment differs from %s (run go test -update to refresh):\n%s", golden, d)
			}
			checkManager(t, renderedManager(t, d), tt.env, tt.args)
		})
	}
}

// helm template, the CLI, renders the same: the env or flag the code
// reads from watchNamespaces, ENABLE_WEBHOOKS=false with
// webhooks.enabled=false.
func TestHelmTemplateWatchSetting(t *testing.T) {
	helm := filepath.Join(testcluster.RequireBinDir(t), "helm")
	for _, tt := range watchRenders {
		t.Run(tt.name, func(t *testing.T) {
			_, chart := packageChart(t, tt.fixture)
			args := append([]string{"template", "rel", chart, "--namespace", "team-a", "--show-only", "templates/deployment.yaml"}, tt.set...)
			cmd := exec.Command(helm, args...)
			cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
			}
			checkManager(t, renderedManager(t, string(b)), tt.env, tt.args)
		})
	}
}

// The CSV sets OPERATOR_SCOPE_NAMESPACE from the olm.targetNamespaces
// annotation and keeps OPERATOR_NAMESPACE from the pod's namespace.
func TestCSVWatchSettingByName(t *testing.T) {
	out, _ := packageTo(t, filepath.Join("testdata", "scopens"), PackageOptions{})
	csv := readCSV(t, filepath.Join(out, "bundle", "scopens"), "scopens")
	c := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	checkManager(t, c, map[string]string{
		"OPERATOR_SCOPE_NAMESPACE": "fieldRef:metadata.annotations['olm.targetNamespaces']",
		"OPERATOR_NAMESPACE":       "fieldRef:metadata.namespace",
	}, nil)
	if slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "WATCH_NAMESPACE" }) {
		t.Errorf("CSV sets WATCH_NAMESPACE, which the manager does not read: %+v", c.Env)
	}
}
