package packaging

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// listTarget is a third target, as a new one would be written: one type,
// one registration.
type listTarget struct{}

func (listTarget) Name() string              { return "test-list" }
func (listTarget) Description() string       { return "the CRD list" }
func (listTarget) Dir() string               { return "list" }
func (listTarget) NewOptions() TargetOptions { return listOptions{} }

type listOptions struct{}

func (listOptions) AddFlags(*pflag.FlagSet) {}

func (listTarget) Render(p *Project, _ TargetOptions) (Files, []string, error) {
	var b strings.Builder
	for _, c := range p.CRDs {
		b.WriteString(c.Name + "\n")
	}
	return Files{"list/" + p.Name + "/crds.txt": []byte(b.String())}, []string{"test-list: a warning"}, nil
}

func TestTargets(t *testing.T) {
	RegisterTarget(listTarget{})
	t.Cleanup(func() {
		targetsMu.Lock()
		delete(targets, "test-list")
		targetsMu.Unlock()
	})
	out := t.TempDir()
	res, err := Package(context.Background(), sampleDir, PackageOptions{Out: out, Targets: []string{"test-list", "chart"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Roots, ","); got != "charts/sample-operator,list/sample-operator" {
		t.Errorf("roots %s, want the chart and the list only", got)
	}
	if b, err := os.ReadFile(filepath.Join(out, "list", "sample-operator", "crds.txt")); err != nil || string(b) != "kvbackups.kv.opctl.dev\nkvstores.kv.opctl.dev\n" {
		t.Errorf("list target wrote %q, %v", b, err)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "test-list: a warning") {
		t.Errorf("warnings %v lack the target's", res.Warnings)
	}
	_, err = Package(context.Background(), sampleDir, PackageOptions{Out: t.TempDir(), Targets: []string{"helmfile"}})
	if err == nil || !strings.Contains(err.Error(), `--targets "helmfile": unknown target; use bundle, chart, test-list`) {
		t.Errorf("unknown target: %v", err)
	}
}

// Each target's flags bind its own options; --channels keeps the comma
// list, trimmed and without blanks, of its last use.
func TestTargetFlags(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--channels", "stable"}, []string{"stable"}},
		{[]string{"--channels", " fast, stable,,"}, []string{"fast", "stable"}},
		{[]string{"--channels", "fast", "--channels", "beta,candidate"}, []string{"beta", "candidate"}},
	}
	for _, tt := range tests {
		var opts PackageOptions
		fs := pflag.NewFlagSet("package", pflag.ContinueOnError)
		for _, name := range TargetNames() {
			opts.For(name).AddFlags(fs)
		}
		if err := fs.Parse(append(tt.args, "--crds", CRDsDir)); err != nil {
			t.Fatal(err)
		}
		if got := opts.For("bundle").(*BundleOptions).Channels; !slices.Equal(got, tt.want) {
			t.Errorf("%q: channels %q, want %q", tt.args, got, tt.want)
		}
		// No --rbac-scope: the chart picks namespace, or cluster for a
		// manager that reads no watch-namespace setting.
		if got := opts.For("chart").(*ChartOptions); got.CRDs != CRDsDir || got.RBACScope != "" {
			t.Errorf("%q: chart options %+v, want --crds and no --rbac-scope", tt.args, got)
		}
	}
}
