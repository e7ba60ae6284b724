package packaging

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// extraTemplates are copied into the chart as they are and render with
// extraValues; the bundle leaves them out.
func TestExtraTemplates(t *testing.T) {
	dir := copyProject(t, sdkDir)
	tmpl := "{{- range .Values.teams }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team-{{ . }}\n  namespace: {{ $.Release.Namespace }}\n{{- end }}\n"
	mustWrite(t, filepath.Join(dir, "config", "chart", "teams.yaml"), tmpl)
	mustWrite(t, filepath.Join(dir, ConfigFile), "extraValues:\n  teams: [red, blue]\nextraValueDocs:\n  teams: Teams that get a ConfigMap.\nextraTemplates: [config/chart/teams.yaml]\n")
	out, _ := packageTo(t, dir, PackageOptions{})
	chart := filepath.Join(out, chartsDir, "memcache-operator")
	if got := string(readFile(t, filepath.Join(chart, "templates", "extra-teams.yaml"))); got != tmpl {
		t.Errorf("extra-teams.yaml:\n%s\nwant the project's file:\n%s", got, tmpl)
	}
	if values := string(readFile(t, filepath.Join(chart, "values.yaml"))); !strings.Contains(values, "# -- Teams that get a ConfigMap.\nteams:") {
		t.Errorf("values.yaml does not document teams:\n%s", values)
	}
	rendered := render(t, chart, "ops", nil)
	for _, team := range []string{"red", "blue"} {
		if !strings.Contains(rendered["memcache-operator/templates/extra-teams.yaml"], "name: team-"+team) {
			t.Errorf("rendered extra template lacks team-%s:\n%s", team, rendered["memcache-operator/templates/extra-teams.yaml"])
		}
	}
	bundle, _ := filepath.Glob(filepath.Join(out, "bundle", "*", "manifests", "*"))
	for _, f := range bundle {
		if strings.Contains(string(readFile(t, f)), "team-") {
			t.Errorf("the bundle carries the extra template: %s", f)
		}
	}
}

func TestBadExtraTemplates(t *testing.T) {
	cases := []struct{ name, config, want string }{
		{"outside the project", "extraTemplates: [../x.yaml]\n", `extraTemplates entry "../x.yaml" is outside the project`},
		{"absolute", "extraTemplates: [/etc/passwd]\n", `extraTemplates entry "/etc/passwd" is outside the project`},
		{"missing", "extraTemplates: [config/none.yaml]\n", `extraTemplates entry "config/none.yaml"`},
		{"one name twice", "extraTemplates: [config/a/x.yaml, config/b/x.yaml]\n", `share the name x.yaml`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyProject(t, sdkDir)
			mustWrite(t, filepath.Join(dir, "config", "a", "x.yaml"), "# a\n")
			mustWrite(t, filepath.Join(dir, "config", "b", "x.yaml"), "# b\n")
			mustWrite(t, filepath.Join(dir, ConfigFile), tc.config)
			out := t.TempDir()
			_, err := Package(context.Background(), dir, PackageOptions{Out: out})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ConfigFile) {
				t.Fatalf("error %v, want one naming %s and holding %q", err, ConfigFile, tc.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) > 0 {
				t.Errorf("a refused package wrote %d entries to --out", len(entries))
			}
		})
	}
}
