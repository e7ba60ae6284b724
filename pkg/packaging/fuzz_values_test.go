package packaging_test

import (
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// FuzzValues installs the sample's chart client-side with arbitrary values.
// Values the chart's schema admits must render: every document is an
// object with apiVersion, kind and a valid name, and namespaced objects
// land in the release namespace or a watched one (values may not steer
// the chart anywhere else).
func FuzzValues(f *testing.F) {
	chart, err := loader.Load("../../charts/sample-operator")
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range []string{
		"{}",
		"replicas: 3\nimage: {digest: 'sha256:0000000000000000000000000000000000000000000000000000000000000000'}\n",
		"rbac: {scope: namespace}\nwatchNamespaces: [a, b]\n",
		"fullnameOverride: a-very-long-name-that-goes-past-the-sixty-three-character-limit-of-labels\n",
		"serviceAccount: {create: false, name: other}\ncrds: {install: false}\n",
		"namespaceOverride: kube-system\n",
	} {
		f.Add([]byte(v))
	}
	const ns = "tenant-a"
	f.Fuzz(func(t *testing.T, data []byte) {
		var vals map[string]any
		if err := yaml.Unmarshal(data, &vals); err != nil {
			return
		}
		inst := action.NewInstall(&action.Configuration{})
		inst.ClientOnly, inst.DryRun, inst.IncludeCRDs = true, true, true
		inst.ReleaseName, inst.Namespace = "fuzz-release-name-of-forty-characters-x", ns
		inst.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
		rel, err := inst.Run(chart, vals)
		if err != nil {
			return
		}
		allowed := map[string]bool{ns: true}
		if watch, ok := vals["watchNamespaces"].([]any); ok {
			for _, w := range watch {
				if s, ok := w.(string); ok {
					allowed[s] = true
				}
			}
		}
		for _, doc := range releaseutil.SplitManifests(rel.Manifest) {
			var obj struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("rendered document does not parse: %v\n%s", err, doc)
			}
			if obj.APIVersion == "" || obj.Kind == "" {
				t.Fatalf("rendered document has no apiVersion or kind:\n%s", doc)
			}
			if errs := validation.IsDNS1123Subdomain(obj.Metadata.Name); len(errs) > 0 {
				t.Fatalf("%s name %q: %v", obj.Kind, obj.Metadata.Name, errs)
			}
			if obj.Metadata.Namespace != "" && !allowed[obj.Metadata.Namespace] {
				t.Fatalf("%s %s rendered into namespace %q, neither the release's nor a watched one", obj.Kind, obj.Metadata.Name, obj.Metadata.Namespace)
			}
		}
	})
}
