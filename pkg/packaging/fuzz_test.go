package packaging

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzCSV builds CSVs from arbitrary metadata that opctl.yaml admits and
// checks the result is YAML that decodes back to the same name and version.
func FuzzCSV(f *testing.F) {
	p, err := Load(sampleDir, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("KVStore Operator", "summary", "Database, Storage", "Seamless Upgrades", "1.30.0", "0.1.0")
	f.Add("", "", "", "", "", "0.0.1-rc.1+build.5")
	f.Add("x: y", "- list", "{", "\"", "\n\n", "99999999999999999999.0.0")
	f.Fuzz(func(t *testing.T, display, summary, categories, capabilities, minKube, version string) {
		q := *p
		q.Config.DisplayName, q.Config.Summary, q.Config.Capabilities, q.Config.MinKubeVersion = display, summary, capabilities, minKube
		q.Config.Categories = strings.Split(categories, ",")
		q.Config.Icon = ""
		q.Version = version
		if q.Config.check() != nil {
			return // LoadConfig refuses it, naming the field
		}
		csv, err := q.CSV(BundleOptions{}, nil, nil)
		if err != nil {
			return
		}
		b, err := yaml.Marshal(csv)
		if err != nil {
			t.Fatalf("CSV does not marshal: %v", err)
		}
		var back struct {
			Metadata struct{ Name string }
			Spec     struct{ Version string }
		}
		if err := yaml.Unmarshal(b, &back); err != nil {
			t.Fatalf("CSV YAML does not decode: %v\n%s", err, b)
		}
		if back.Metadata.Name != csv.Name || back.Spec.Version != csv.Spec.Version.String() {
			t.Fatalf("round trip changed name/version: %q %q", back.Metadata.Name, back.Spec.Version)
		}
	})
}
