package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	"sigs.k8s.io/yaml"
)

func writeBundle(t testing.TB, opts BundleOptions) string {
	t.Helper()
	return writeSample(t, "bundle", func(p *Project) (Files, []string, error) { return p.Bundle(opts) })
}

// validateBundle runs the operator-framework validators the issue names
// and returns their errors.
func validateBundle(t *testing.T, dir string) []string {
	t.Helper()
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		t.Fatalf("loading the bundle: %v", err)
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator, validation.GoodPracticesValidator, validation.AlphaDeprecatedAPIsValidator,
		validation.StandardCapabilitiesValidator, validation.StandardCategoriesValidator, validation.ObjectValidator)
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": "1.36"})
	var errs []string
	for _, res := range validators.Validate(objs...) {
		for _, e := range res.Errors {
			errs = append(errs, res.Name+": "+e.Error())
		}
		for _, w := range res.Warnings {
			t.Logf("warning %s: %s", res.Name, w)
		}
	}
	return errs
}

func TestBundlePassesOperatorFrameworkValidators(t *testing.T) {
	dir := writeBundle(t, BundleOptions{Channels: []string{"stable", "candidate"}})
	for _, e := range validateBundle(t, dir) {
		t.Error(e)
	}
	// The same validators catch a broken CSV, so the check above has teeth.
	csvPath := filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml")
	broken := strings.Replace(string(readFile(t, csvPath)), "capabilities: Auto Pilot", "capabilities: Superb", 1)
	if err := os.WriteFile(csvPath, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := validateBundle(t, dir); len(errs) == 0 {
		t.Error("validators accepted an invalid capability level")
	}
}

func TestCSV(t *testing.T) {
	dir := writeBundle(t, BundleOptions{})
	var csv operatorsv1alpha1.ClusterServiceVersion
	b := readFile(t, filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml"))
	if err := yaml.UnmarshalStrict(b, &csv); err != nil {
		t.Fatal(err)
	}
	modes := map[operatorsv1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		modes[m.Type] = m.Supported
	}
	// The sample's manager splits WATCH_NAMESPACE on commas: MultiNamespace.
	if !modes["OwnNamespace"] || !modes["SingleNamespace"] || !modes["AllNamespaces"] || !modes["MultiNamespace"] {
		t.Errorf("install modes %v, want all four", modes)
	}
	perms := csv.Spec.InstallStrategy.StrategySpec
	if len(perms.Permissions) != 1 || len(perms.ClusterPermissions) != 1 {
		t.Fatalf("permissions %d clusterPermissions %d, want 1 and 1", len(perms.Permissions), len(perms.ClusterPermissions))
	}
	cl, _ := yaml.Marshal(perms.ClusterPermissions[0].Rules)
	if !strings.Contains(string(cl), "storageclasses") || strings.Contains(string(cl), "configmaps") {
		t.Errorf("clusterPermissions should hold only cluster-scoped rules:\n%s", cl)
	}
	var watch string
	for _, e := range perms.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Env {
		if e.Name == "WATCH_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			watch = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if watch != "metadata.annotations['olm.targetNamespaces']" {
		t.Errorf("WATCH_NAMESPACE fieldRef = %q", watch)
	}
	images := map[string]string{}
	for _, ri := range csv.Spec.RelatedImages {
		images[ri.Name] = ri.Image
	}
	if images["manager"] != "opctl/kvstore-operator:0.1.0" || images["kvstore"] != "valkey/valkey:8.1.3" ||
		images["exporter"] != "oliver006/redis_exporter:v1.62.0" || len(images) != 3 {
		// RELATED_IMAGE_TOOLS is the manager's own image, listed once.
		t.Errorf("relatedImages %v", images)
	}
	owned := csv.Spec.CustomResourceDefinitions.Owned
	if len(owned) != 2 || owned[0].Kind != "KVBackup" || len(owned[0].Resources) != 1 || owned[0].Resources[0].Kind != "Job" ||
		owned[1].Kind != "KVStore" || len(owned[1].Resources) != 7 || len(owned[1].SpecDescriptors) == 0 || len(owned[1].StatusDescriptors) == 0 {
		t.Errorf("owned CRDs %+v", owned)
	}
	if !strings.Contains(csv.Annotations["alm-examples"], `"kind": "KVStore"`) {
		t.Errorf("alm-examples lacks the sample: %s", csv.Annotations["alm-examples"])
	}
}

func TestCSVUpgradeGraphFromOptions(t *testing.T) {
	dir := writeBundle(t, BundleOptions{Replaces: "sample-operator.v0.0.9", Skips: []string{"sample-operator.v0.0.8"}, SkipRange: "<0.1.0"})
	var csv operatorsv1alpha1.ClusterServiceVersion
	if err := yaml.Unmarshal(readFile(t, filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml")), &csv); err != nil {
		t.Fatal(err)
	}
	if csv.Spec.Replaces != "sample-operator.v0.0.9" || len(csv.Spec.Skips) != 1 || csv.Annotations["olm.skipRange"] != "<0.1.0" {
		t.Errorf("replaces %q skips %v skipRange %q", csv.Spec.Replaces, csv.Spec.Skips, csv.Annotations["olm.skipRange"])
	}
	if errs := validateBundle(t, dir); len(errs) > 0 {
		t.Errorf("bundle with an upgrade graph: %v", errs)
	}
}

// readCSV decodes the CSV of the bundle in dir.
func readCSV(t *testing.T, dir, name string) operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	var csv operatorsv1alpha1.ClusterServiceVersion
	if err := yaml.Unmarshal(readFile(t, filepath.Join(dir, "manifests", name+".clusterserviceversion.yaml")), &csv); err != nil {
		t.Fatal(err)
	}
	return csv
}

func TestDescriptorSummary(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Replicas is the number of pods.", "Replicas is the number of pods."},
		{"DefaultQuota is what each namespace may\nuse besides what it needs: each figure is\nadded. Unset, the defaults apply.", "DefaultQuota is what each namespace may use besides what it needs: each figure is added."},
		{"Image of the server\n\nDetails that only the CRD shows.", "Image of the server"},
		{"  Version v1.2.3 of the server.  ", "Version v1.2.3 of the server."},
	}
	for _, tt := range tests {
		if got := summary(tt.in); got != tt.want {
			t.Errorf("summary(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
