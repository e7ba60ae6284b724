package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"

	"opctl.dev/opctl/pkg/validate"
)

// opctl tenancy check --offline judges a chart against the shipped
// baseline and the ClusterRole files given, prints each refusal and a
// ClusterRole that would allow the missing cluster-wide rules; with that
// ClusterRole given, the rules are no longer refused.
func TestTenancyCheckOffline(t *testing.T) {
	fleet := "../../pkg/packaging/testdata/golden/workloads/charts/fleet-operator"
	code, out, errOut := run(t, "tenancy", "check", "--offline", fleet)
	if code != 1 || !strings.Contains(out, "would be refused for a tenant "+offlineJudged) ||
		!strings.Contains(out, "grants cluster-wide get,list,watch,update,patch on fleet.example.com/fleets") ||
		!strings.Contains(out, "kind: ClusterRole\nmetadata:\n  name: fleet-operator-for-tenants") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}
	role := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(role, []byte(out[strings.Index(out, "\n---\n")+5:]), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "tenancy", "check", "--offline", "--cluster-role-file", role, "-o", "json", fleet)
	var v validate.TenantVerdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errOut, err)
	}
	if code != 1 || v.Allow != nil || len(v.ClusterRoles) != 1 || v.ClusterRoles[0] != "fleet-operator-for-tenants" {
		t.Errorf("with the suggested role: exit %d, verdict %+v", code, v)
	}
	for _, r := range v.Refusals {
		if strings.Contains(r.Message, "grants cluster-wide") {
			t.Errorf("a rule the given role allows is still refused: %s", r.Message)
		}
	}
	if len(v.Refusals) == 0 {
		t.Error("the chart's PriorityClass and pods below restricted are no longer refused")
	}

	fits := "../../pkg/packaging/testdata/golden/multigroup/charts/maritime-cargo-routing-planner-operator1"
	if code, out, _ := run(t, "tenancy", "check", "--offline", fits); code != 0 || !strings.Contains(out, "fits a tenant") {
		t.Errorf("a chart that fits: exit %d, %s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: Role\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, "tenancy", "check", "--offline", "--cluster-role-file", bad, fits); code != 2 || !strings.Contains(errOut, "bad.yaml: document 1 is a \"Role\"") {
		t.Errorf("a file that is no ClusterRole: exit %d, %s", code, errOut)
	}
}

// The fixtures of opctl tenancy check's bundle and catalog inputs.
const (
	// nodewatchBundle is a registry+v1 bundle whose CSV's
	// clusterPermissions read nodes, beyond the shipped baseline, and
	// which ships a PriorityClass, a cluster-scoped object no tenant gets.
	nodewatchBundle = "testdata/tenancy/nodewatch"
	// nodewatchCatalog is a file-based catalog of package nodewatch:
	// channel stable is 0.1.0 (without the nodes rule and the
	// PriorityClass), then nodewatchBundle as 0.2.0.
	nodewatchCatalog = "testdata/tenancy/catalog"
	// nodesRefusal is the refusal of nodewatchBundle's nodes rule.
	nodesRefusal = "ClusterRole opctl.tenant.nodewatch.nodewatch-controller-0 grants cluster-wide get,list,watch on nodes"
	// offlineJudged is what --offline says it judged against.
	offlineJudged = "(judged against the shipped baseline; Roles in its namespaces against Kubernetes 1.36's built-in admin role)"
	// subjectsRule ends the refusal of a binding to someone else's
	// ServiceAccount.
	subjectsRule = "a release may bind the ServiceAccounts of the tenant's namespaces (and, in a RoleBinding, users and groups), but no other namespace's ServiceAccounts nor every user; a chart binds its own account in {{ .Release.Namespace }}"
	// priorityClassRefusal is the refusal of its PriorityClass.
	priorityClassRefusal = "cluster-scoped PriorityClass opctl.tenant.nodewatch.nodewatch-critical is refused: a tenant's release may create only ClusterRoles, ClusterRoleBindings and webhook configurations"
)

var update = flag.Bool("update", false, "rewrite the generated fixtures under testdata")

// opctl tenancy check judges, offline, a chart, a registry+v1 bundle (as
// the tenancy controller's bundle backend renders it) and the bundle a
// catalog's package resolves to, and refuses with exit 2 and the path
// what is none of them.
func TestTenancyCheckInputs(t *testing.T) {
	packaged := t.TempDir()
	if code, _, errOut := run(t, "package", "../../operators/sample", "--out", packaged, "--bundle-only"); code != 0 {
		t.Fatalf("opctl package: exit %d: %s", code, errOut)
	}
	sampleBundle := filepath.Join(packaged, "bundle", "sample-operator")
	// nodewatchBundle without the MultiNamespace install mode.
	single := editedBundle(t, "- type: MultiNamespace\n    supported: true", "- type: MultiNamespace\n    supported: false")
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.yaml"), []byte("schema: olm.channel\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		// kind and bundle of the verdict, the messages of its refusals
		// (in order) and whether it suggests a ClusterRole; for exit 2,
		// what stderr says.
		kind, bundle string
		refusals     []string
		allow        bool
		stderr       []string
	}{
		{name: "the sample operator's bundle as opctl package writes it fits", args: []string{sampleBundle},
			kind: "bundle", bundle: "sample-operator.v0.1.0"},
		{name: "a bundle that reads nodes and ships a PriorityClass", args: []string{nodewatchBundle}, code: 1,
			kind: "bundle", bundle: "nodewatch.v0.2.0", refusals: []string{priorityClassRefusal, nodesRefusal}, allow: true},
		{name: "a bundle for a tenant of two namespaces", args: []string{"--namespaces", "2", nodewatchBundle}, code: 1,
			kind: "bundle", bundle: "nodewatch.v0.2.0", refusals: []string{priorityClassRefusal, nodesRefusal}, allow: true},
		{name: "a bundle without MultiNamespace for one namespace", args: []string{single}, code: 1,
			kind: "bundle", bundle: "nodewatch.v0.2.0", refusals: []string{priorityClassRefusal, nodesRefusal}, allow: true},
		{name: "a bundle without MultiNamespace for two namespaces", args: []string{"--namespaces", "2", single}, code: 1,
			kind: "bundle", bundle: "nodewatch.v0.2.0", refusals: []string{"nodewatch.v0.2.0 does not support the MultiNamespace install mode that 2 namespaces need; give the tenant one namespace"}},
		{name: "a bundle whose install modes a tenant cannot have", args: []string{"../../bundle/opctl"}, code: 1,
			kind: "bundle", bundle: "opctl.v0.1.0", refusals: []string{"opctl.v0.1.0 does not support the OwnNamespace install mode"}},
		{name: "a bundle whose CSV owns an APIService", args: []string{"../../pkg/packaging/testdata/golden/aggregated/bundle/agg-operator"}, code: 1,
			kind: "bundle", bundle: "agg-operator.v0.0.0-dev", refusals: []string{"agg-operator.v0.0.0-dev: spec.apiservicedefinitions.owned asks for APIService v1alpha1.metrics.agg.example.com, which is cluster-scoped: " +
				"the API server would send every namespace's requests for that API to one tenant's operator; install this operator once for the cluster"}},
		{name: "a catalog's channel head", args: []string{"--package", "nodewatch", nodewatchCatalog}, code: 1,
			kind: "catalog", bundle: "nodewatch.v0.2.0", refusals: []string{priorityClassRefusal, nodesRefusal}, allow: true},
		{name: "a catalog's pinned version", args: []string{"--package", "nodewatch", "--channel", "stable", "--version", "0.1.0", nodewatchCatalog},
			kind: "catalog", bundle: "nodewatch.v0.1.0"},
		{name: "a chart", args: []string{"../../charts/sample-operator"}, kind: "chart"},
		{name: "a chart with an APIService and bindings to kubebuilder's placeholder namespace", args: []string{"testdata/tenancy/metrics-adapter"}, code: 1, kind: "chart", refusals: []string{
			"cluster-scoped APIService v1beta1.external.metrics.example.com is refused: an APIService serves the API group external.metrics.example.com to the whole cluster (the API server sends every namespace's requests for it to the Service it names), so a tenant cannot own one: install the operator that serves it once for the cluster",
			"RoleBinding leader-election grants its role to ServiceAccount system/controller-manager, which is not the tenant's: " + subjectsRule,
			"ClusterRoleBinding metrics-adapter-auth grants cluster-wide rights to ServiceAccount system/controller-manager, which is not the tenant's: " + subjectsRule}},
		{name: "a directory that is none of them", args: []string{empty}, code: 2,
			stderr: []string{empty + " is neither a Helm chart", "registry+v1 bundle (a directory with manifests/ and metadata/annotations.yaml)", "file-based catalog"}},
		{name: "a catalog without --package", args: []string{nodewatchCatalog}, code: 2,
			stderr: []string{"catalog " + nodewatchCatalog + ": name one of its packages (nodewatch) with --package"}},
		{name: "a catalog's unknown version", args: []string{"--package", "nodewatch", "--version", "9.9.9", nodewatchCatalog}, code: 2,
			stderr: []string{"channel stable of package nodewatch has no version 9.9.9"}},
		{name: "--package with a bundle", args: []string{"--package", "nodewatch", nodewatchBundle}, code: 2,
			stderr: []string{nodewatchBundle + " is a bundle: --package, --channel and --version pick a bundle of a catalog directory"}},
		{name: "an operator project", args: []string{"../../operators/sample"}, code: 2,
			stderr: []string{"../../operators/sample is an operator project: run opctl package"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, append([]string{"tenancy", "check", "--offline", "-o", "json"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr: %s", code, tc.code, out, errOut)
			}
			if code == 2 {
				for _, s := range tc.stderr {
					if !strings.Contains(errOut, s) {
						t.Errorf("stderr %q does not say %q", errOut, s)
					}
				}
				return
			}
			var v validate.TenantVerdict
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("stdout %q: %v", out, err)
			}
			if v.Kind != tc.kind || v.Bundle != tc.bundle || v.Fits != (tc.code == 0) || (v.Allow != nil) != tc.allow {
				t.Errorf("verdict %+v, want kind %q, bundle %q, fits %v, a ClusterRole %v", v, tc.kind, tc.bundle, tc.code == 0, tc.allow)
			}
			if got := refusalMessages(v); !slices.Equal(got, tc.refusals) {
				t.Errorf("refusals %q, want %q", got, tc.refusals)
			}
		})
	}
}

// editedBundle is a copy of nodewatchBundle with old replaced by new once
// in each file.
func editedBundle(t *testing.T, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(nodewatchBundle, "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the bundle fixture: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(nodewatchBundle, f)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// refusalMessages are the messages of v's refusals without what they
// were judged against.
func refusalMessages(v validate.TenantVerdict) []string {
	var out []string
	for _, f := range v.Refusals {
		_, msg, _ := strings.Cut(f.Message, "): ")
		out = append(out, msg)
	}
	return out
}

// The ClusterRole opctl tenancy check suggests for a bundle, given back
// with --cluster-role-file, clears exactly the refusal of the rule it
// allows, for the bundle and for the catalog that carries it; the text
// output names the bundle's file and objects.
func TestTenancyCheckBundleRole(t *testing.T) {
	for _, args := range [][]string{{nodewatchBundle}, {"--package", "nodewatch", nodewatchCatalog}} {
		code, out, errOut := run(t, append([]string{"tenancy", "check", "--offline"}, args...)...)
		if code != 1 || !strings.Contains(out, "bundle nodewatch.v0.2.0) would be refused for a tenant "+offlineJudged+":\n") ||
			!strings.Contains(out, nodesRefusal+"\n") || !strings.Contains(out, "kind: ClusterRole\nmetadata:\n  name: nodewatch-for-tenants\n") {
			t.Fatalf("%v: exit %d, stdout:\n%s\nstderr: %s", args, code, out, errOut)
		}
		if args[0] == nodewatchBundle && !strings.Contains(out, "- manifests/nodewatch.clusterserviceversion.yaml ClusterRoleBinding/opctl.tenant.nodewatch.nodewatch-controller-0: "+nodesRefusal) {
			t.Errorf("the refusal does not name the CSV's file and the binding:\n%s", out)
		}
		role := filepath.Join(t.TempDir(), "role.yaml")
		if err := os.WriteFile(role, []byte(out[strings.Index(out, "\n---\n")+5:]), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut = run(t, append([]string{"tenancy", "check", "--offline", "--cluster-role-file", role, "-o", "json"}, args...)...)
		var v validate.TenantVerdict
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q: %v", args, code, out, errOut, err)
		}
		if got := refusalMessages(v); code != 1 || v.Allow != nil || !slices.Equal(got, []string{priorityClassRefusal}) || !slices.Equal(v.ClusterRoles, []string{"nodewatch-for-tenants"}) {
			t.Errorf("%v with the suggested role: exit %d, refusals %q, allow %v, roles %v; want only the PriorityClass refused", args, code, got, v.Allow, v.ClusterRoles)
		}
	}
}

// The catalog fixture is nodewatchBundle as 0.2.0 after a 0.1.0 without
// the nodes rule and the PriorityClass, each bundle's objects carried as
// olm.bundle.object properties as opm render writes them; -update
// rewrites it.
func TestTenancyCheckCatalogFixture(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(nodewatchBundle, "manifests", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the bundle fixture: %v", err)
	}
	var objs []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o := map[string]any{}
		if err := sigsyaml.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		objs = append(objs, o)
	}
	bundle := func(version string, objs []map[string]any) declcfg.Bundle {
		b := declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: "nodewatch", Name: "nodewatch.v" + version,
			Properties: []property.Property{property.MustBuildPackage("nodewatch", version)}}
		for _, o := range objs {
			data, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			b.Properties = append(b.Properties, property.MustBuildBundleObject(data))
		}
		return b
	}
	// 0.1.0: the CSV renamed, without the nodes rule; no PriorityClass.
	var older []map[string]any
	for _, o := range objs {
		switch o["kind"] {
		case "PriorityClass":
			continue
		case "ClusterServiceVersion":
			csv := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(o)}
			csv.SetName("nodewatch.v0.1.0")
			_ = unstructured.SetNestedField(csv.Object, "0.1.0", "spec", "version")
			perms, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "clusterPermissions")
			rules := perms[0].(map[string]any)["rules"].([]any)
			perms[0].(map[string]any)["rules"] = slices.DeleteFunc(rules, func(r any) bool { return slices.Contains(r.(map[string]any)["resources"].([]any), any("nodes")) })
			_ = unstructured.SetNestedSlice(csv.Object, perms, "spec", "install", "spec", "clusterPermissions")
			unstructured.RemoveNestedField(csv.Object, "spec", "install", "spec", "deployments")
			deps, _, _ := unstructured.NestedSlice(o, "spec", "install", "spec", "deployments")
			unstructured.RemoveNestedField(deps[0].(map[string]any), "spec", "template", "spec", "priorityClassName")
			_ = unstructured.SetNestedSlice(csv.Object, deps, "spec", "install", "spec", "deployments")
			o = csv.Object
		}
		older = append(older, o)
	}
	cfg := declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "nodewatch", DefaultChannel: "stable"}},
		Channels: []declcfg.Channel{{Schema: declcfg.SchemaChannel, Package: "nodewatch", Name: "stable",
			Entries: []declcfg.ChannelEntry{{Name: "nodewatch.v0.1.0"}, {Name: "nodewatch.v0.2.0", Replaces: "nodewatch.v0.1.0"}}}},
		Bundles: []declcfg.Bundle{bundle("0.1.0", older), bundle("0.2.0", objs)},
	}
	var want bytes.Buffer
	if err := declcfg.WriteYAML(cfg, &want); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(nodewatchCatalog, "catalog.yaml")
	if *update {
		if err := os.MkdirAll(nodewatchCatalog, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s is not the catalog of %s (%v): run go test -run TestTenancyCheckCatalogFixture -update ./internal/cli/", path, nodewatchBundle, err)
	}
}

// Offline, opctl tenancy check refuses the Roles the tenancy controller
// refuses in a tenant's namespaces and CRDs that convert through a
// webhook, each with the controller's text and reason, and says it judged
// them against Kubernetes' built-in admin role; the operator's own kind
// with its status fits (pkg/validate's TestTenantReadyNamespaced holds
// the messages whole).
func TestTenancyCheckNamespacedRoles(t *testing.T) {
	const dir = "../../pkg/validate/testdata/tenantroles/"
	for _, tc := range []struct {
		chart string
		code  int
		// line is a line of the text output.
		line string
	}{
		{"configmaps-status", 1, "- templates/role.yaml Role/leader-election-role: Role validate/leader-election-role grants get,patch,update configmaps/status in the tenant's namespaces, beyond what its owners hold (admin) and the operator's own kinds [ClusterRightsRefused]"},
		{"pods-status", 1, "- templates/rbac.yaml RoleBinding/opctl-validate-manager: RoleBinding validate/opctl-validate-manager of ClusterRole opctl-validate-manager grants patch,update pods/status in the tenant's namespaces, beyond what its owners hold (admin) and the operator's own kinds [ClusterRightsRefused]"},
		{"own-kind", 0, dir + "own-kind fits a tenant " + offlineJudged},
		{"endpointslices", 1, "- templates/role.yaml Role/endpoints-writer: Role validate/endpoints-writer grants create,delete,patch,update discovery.k8s.io/endpointslices, delete endpoints in the tenant's namespaces, beyond what its owners hold (admin) and the operator's own kinds [ClusterRightsRefused]"},
		{"conversion", 1, "- templates/crd.yaml CustomResourceDefinition/gadgets.tenantroles.example.com: CRD gadgets.tenantroles.example.com converts through a webhook, which would convert every tenant's objects through one tenant's Service: shared CRDs must use conversion strategy None; install this operator once for the cluster [ConversionWebhookNotSupported]"},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			code, out, errOut := run(t, "tenancy", "check", "--offline", dir+tc.chart)
			if code != tc.code || !slices.Contains(strings.Split(out, "\n"), tc.line) {
				t.Errorf("exit %d, want %d and the line\n%s\nstdout:\n%s\nstderr: %s", code, tc.code, tc.line, out, errOut)
			}
			_, out, _ = run(t, "tenancy", "check", "--offline", "-o", "json", dir+tc.chart)
			var v validate.TenantVerdict
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			if v.OwnerRole != validate.BuiltinOwnerRole || v.Fits != (tc.code == 0) {
				t.Errorf("JSON: ownerRole %q, fits %v", v.OwnerRole, v.Fits)
			}
		})
	}
}
