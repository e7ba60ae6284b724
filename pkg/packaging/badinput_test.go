package packaging

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every refusal of opctl package: an input whose chart or bundle would be
// wrong (a tool or the API server would refuse it, or it would not say
// what the project says) stops packaging with a short error that names
// the file, object or option and what to do, and writes nothing.
func TestBadInputGivesClearErrors(t *testing.T) {
	big := strings.Repeat("x", MaxObjectBytes)
	tests := []struct {
		name    string
		project string // sampleDir when empty
		opts    PackageOptions
		mutate  func(t *testing.T, dir string)
		want    []string
	}{
		{"missing overlay", "", PackageOptions{Load: Options{Overlay: "config/nope"}}, nil, []string{"config/nope not found", "--overlay"}},
		{"broken YAML", "", PackageOptions{}, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "config/manager/manager.yaml"), "apiVersion: v1\nkind: [Namespace\n")
		}, []string{"building kustomize overlay", "config/default"}},
		{"kustomize error", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/rbac/kustomization.yaml"), "- missing.yaml\n")
		}, []string{"building kustomize overlay", "missing.yaml"}},
		{"no manager", "", PackageOptions{}, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "config/manager/manager.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: system\n")
		}, []string{"no Deployment in the overlay", "config/manager"}},
		{"unknown manager", "", PackageOptions{Load: Options{Manager: "ghost"}}, nil, []string{`manager Deployment "ghost" not found`}},
		{"CRD without schema", "", PackageOptions{}, func(t *testing.T, dir string) {
			p := filepath.Join(dir, "config/crd/bases/kv.opctl.dev_kvstores.yaml")
			mustWrite(t, p, strings.Replace(string(readFile(t, p)), "openAPIV3Schema:", "openAPIV3SchemaX:", 1))
		}, []string{"kvstores.kv.opctl.dev", "spec.versions[0] (v1alpha1) has no schema.openAPIV3Schema"}},
		{"object over 1 MiB", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\n  namespace: system\ndata:\n  blob: "+big+"\n")
			appendTo(t, filepath.Join(dir, "config/manager/kustomization.yaml"), "")
		}, []string{"ConfigMap kvstore-huge", "bytes the API server can store"}},
		{"unknown opctl.yaml field", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "colour: blue\n")
		}, []string{"opctl.yaml", `unknown field "colour"`}},
		{"unprintable opctl.yaml text", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "keywords: [ok, \"bell\\u0007\"]\n")
		}, []string{"opctl.yaml", `keywords[1] holds the unprintable character "\a"`}},
		{"minKubeVersion not SemVer", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "minKubeVersion: \"1.30.x\"\n")
		}, []string{"opctl.yaml", `minKubeVersion "1.30.x" is not SemVer`}},
		{"bad operand quantity", "", PackageOptions{}, func(t *testing.T, dir string) {
			p := filepath.Join(dir, ConfigFile)
			mustWrite(t, p, strings.Replace(string(readFile(t, p)), "cpu: 110m", "cpu: lots", 1))
		}, []string{"operands.kvstores.kv.opctl.dev.resources.requests.cpu", `"lots": not a quantity`}},
		{"a kind that cannot be per release", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: worker-1\n")
		}, []string{"Node kvstore-worker-1", "cannot install a Node per release", "nodes are the cluster's"}},
		{"a remote base that cannot be fetched", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/default/kustomization.yaml"), "- https://example.invalid/op//config/extra?ref=v1.0.0\n")
		}, []string{"the remote base https://example.invalid/op//config/extra?ref=v1.0.0 could not be fetched", "vendor the base"}},
		{"helmCharts", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/default/kustomization.yaml"), "helmCharts:\n- name: redis\n  repo: https://charts.example.invalid\n  version: 1.0.0\n")
		}, []string{"uses helmCharts", "--enable-helm", "helm template"}},
		{"bad version", "", PackageOptions{Load: Options{Version: "one"}}, nil, []string{`version "one" is not SemVer`}},
		// The CSV validator refuses version 0.0.0 (csv.Spec.Version must be set).
		{"version 0.0.0", "", PackageOptions{Load: Options{Version: "0.0.0"}}, nil, []string{"version 0.0.0: OLM reads a CSV of version 0.0.0 as having none"}},
		{"bad name", "", PackageOptions{Load: Options{Name: "Bad_Name"}}, nil, []string{`"Bad_Name" is not a DNS label`}},
		// Options and opctl.yaml values outside what the chart or bundle can
		// say: a default channel that is no channel (opm refuses the
		// catalog), a layout, scope or certificate mode with no template.
		{"a default channel that is not a channel", "", PackageOptions{PerTarget: map[string]TargetOptions{"bundle": &BundleOptions{Channels: []string{"stable"}, DefaultChannel: "fast"}}}, nil,
			[]string{`--default-channel "fast" is not one of --channels [stable]`}},
		{"unknown --crds", "", PackageOptions{PerTarget: map[string]TargetOptions{"chart": &ChartOptions{CRDs: "inline"}}}, nil, []string{`--crds "inline": use templated, separate-chart or crds-dir`}},
		{"unknown --rbac-scope", "", PackageOptions{PerTarget: map[string]TargetOptions{"chart": &ChartOptions{RBACScope: "tenant"}}}, nil, []string{`--rbac-scope "tenant": use namespace or cluster`}},
		{"unknown webhooks.certificates", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "webhooks: {certificates: vault}\n")
		}, []string{"opctl.yaml", `webhooks.certificates "vault": use helm, cert-manager, operator`}},
		{"opctl.yaml not YAML", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "summary: [unclosed\n")
		}, []string{"opctl.yaml: not valid YAML"}},
		{"PROJECT not YAML", "", PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "PROJECT"), "layout: [unclosed\n")
		}, []string{"PROJECT: not valid YAML"}},
		{"PROJECT of the wrong shape", "", PackageOptions{}, replaceIn("PROJECT", "projectName: kvstore-operator", "projectName: [kvstore-operator]"),
			[]string{"PROJECT:", "projectName"}},
		// The icon opctl.yaml names must be in the CSV as the image it is.
		{"an icon that is missing", "", PackageOptions{}, replaceIn(ConfigFile, "icon: icon.svg", "icon: logo.svg"),
			[]string{"opctl.yaml: icon:", "logo.svg"}},
		{"an icon that is not an image", "", PackageOptions{}, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "icon.bmp"), "BM")
			replaceIn(ConfigFile, "icon: icon.svg", "icon: icon.bmp")(t, dir)
		}, []string{"opctl.yaml: icon icon.bmp: use an SVG, PNG, JPEG or GIF file"}},
		// The platform-as-code figures are the contract's units and keys:
		// another would be a figure nobody reads, or a quota wrongly sized.
		{"an operand resource other than cpu, memory and storage", "", PackageOptions{}, replaceIn(ConfigFile, "requests: {cpu: 110m, memory: 144Mi}", "requests: {cpu: 110m, memory: 144Mi, gpu: \"1\"}"),
			[]string{"operands.kvstores.kv.opctl.dev.resources.requests.gpu: use cpu and memory"}},
		{"volumes per replica without their size", "", PackageOptions{}, replaceIn(ConfigFile, "    replicas: 1\n", "    replicas: 1\n    pvcsPerReplica: 2\n"),
			[]string{"operands.kvstores.kv.opctl.dev.pvcsPerReplica: set resources.requests.storage"}},
		{"an unknown PDB key", "", PackageOptions{}, replaceIn(ConfigFile, `pdb: {maxUnavailable: "1"}`, `pdb: {maxUnavailble: "1"}`),
			[]string{"operands.kvstores.kv.opctl.dev.pdb.maxUnavailble: use minAvailable or maxUnavailable"}},
		// Objects the API server refuses: the chart would not install.
		{"a manager without containers", "", PackageOptions{}, replaceIn("config/manager/manager.yaml", "      containers:\n", "      containers: []\n      unusedContainers:\n"),
			[]string{"manager Deployment kvstore-controller-manager: spec.template.spec.containers is empty"}},
		{"a manager that is not a Deployment's shape", "", PackageOptions{}, replaceIn("config/manager/manager.yaml", "  replicas: 1\n", "  replicas: one\n"),
			[]string{"manager Deployment kvstore-controller-manager:", "spec.replicas"}},
		{"a placeholder without default where the API takes no string", "", PackageOptions{}, replaceIn("config/manager/manager.yaml", "  replicas: 1\n", "  replicas: ${REPLICAS}\n"),
			[]string{"manager Deployment kvstore-controller-manager:", "spec.replicas", "its placeholders REPLICAS, which have no default", "--set-env VAR=value"}},
		{"a CRD that is not a CRD's shape", "", PackageOptions{}, replaceIn("config/crd/bases/kv.opctl.dev_kvstores.yaml", "  scope: Namespaced\n", "  scope: [Namespaced]\n"),
			[]string{"CustomResourceDefinition kvstores.kv.opctl.dev:", "spec.scope"}},
		{"a Role that is not a Role's shape", "", PackageOptions{}, replaceIn("config/rbac/leader_election_role.yaml", "  verbs:\n  - get\n  - list\n  - watch\n  - create\n  - update\n  - patch\n  - delete\n", "  verbs: all\n"),
			[]string{"Role kvstore-leader-election-role:", "rules.verbs"}},
		{"a CRD of apiextensions.k8s.io/v1beta1", "", PackageOptions{}, replaceIn("config/crd/bases/kv.opctl.dev_kvstores.yaml", "apiVersion: apiextensions.k8s.io/v1\n", "apiVersion: apiextensions.k8s.io/v1beta1\n"),
			[]string{"CustomResourceDefinition kvstores.kv.opctl.dev: apiVersion apiextensions.k8s.io/v1beta1 is not supported"}},
		// The base CSV opctl starts from must be the project's one.
		{"several base CSVs, none named for the package", sdkDir, PackageOptions{}, func(t *testing.T, dir string) {
			bases := filepath.Join(dir, "config/manifests/bases")
			csv := readFile(t, filepath.Join(bases, "memcache-operator.clusterserviceversion.yaml"))
			if err := os.Remove(filepath.Join(bases, "memcache-operator.clusterserviceversion.yaml")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(bases, "a.clusterserviceversion.yaml"), string(csv))
			mustWrite(t, filepath.Join(bases, "b.clusterserviceversion.yaml"), string(csv))
		}, []string{"holds several base CSVs and none is memcache-operator.clusterserviceversion.yaml"}},
		// Webhooks opctl serves through Services of the release: any other
		// wiring would render webhooks the API server cannot call (or a
		// configuration it refuses: url beside service).
		{"a webhook with a URL beside one with a Service", webhookDir, PackageOptions{}, replaceIn("config/webhook/manifests.yaml", "webhooks:\n", "webhooks:\n- name: remote.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  clientConfig:\n    url: https://policy.example.com/validate\n"),
			[]string{"ValidatingWebhookConfiguration hook-validating-webhook-configuration: webhook remote.example.com has no clientConfig.service"}},
		{"a webhook Service that selects no Deployment", twoHooksDir, PackageOptions{}, replaceIn("config/webhook/service.yaml", "    app.kubernetes.io/component: policy-webhook\n", "    app.kubernetes.io/component: nothing\n"),
			[]string{"ValidatingWebhookConfiguration hook-validating-webhook-configuration: webhook vwidget-policy.kb.io", "Service hook-policy-webhook-service selects no Deployment of the project"}},
		{"webhooks that call a Service the overlay lacks", webhookDir, PackageOptions{}, replaceIn("config/webhook/kustomization.yaml", "- service.yaml\n", ""),
			[]string{"MutatingWebhookConfiguration hook-mutating-webhook-configuration: webhook mwidget.kb.io calls Service webhook-service, which the overlay does not define"}},
		{"webhooks.certificates helm and no certificate mounted", webhookDir, PackageOptions{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "webhooks: {certificates: helm}\n")
			replaceIn("config/default/kustomization.yaml", "patches:\n- path: manager_webhook_patch.yaml\n", "")(t, dir)
		}, []string{"manager Deployment hook-controller-manager mounts no serving certificate for the webhooks, and opctl.yaml sets webhooks.certificates: helm"}},
		{"a webhook Service without the port the webhooks call", webhookDir, PackageOptions{}, replaceIn("config/webhook/service.yaml", "  - port: 443\n", "  - name: metrics\n    port: 8080\n  - port: 8443\n"),
			[]string{"webhook Service hook-webhook-service has no port 443, which the webhooks call"}},
		{"a conversion webhook with neither URL nor Service", conversionDir, PackageOptions{}, replaceIn("config/crd/patches/webhook_in_widgets.yaml", "        service:\n          namespace: system\n          name: webhook-service\n          path: /convert\n", "        caBundle: Cg==\n"),
			[]string{"CustomResourceDefinition widgets.conv.example.com: the conversion webhook has no clientConfig.service"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyProject(t, cmp.Or(tt.project, sampleDir))
			if tt.mutate != nil {
				tt.mutate(t, dir)
			}
			out := t.TempDir()
			tt.opts.Out = out
			_, err := Package(context.Background(), dir, tt.opts)
			if err == nil {
				t.Fatal("Package succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Count(err.Error(), "\n") > 2 {
				t.Errorf("error is not short: %q", err)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("a failed run wrote %d entries to --out", len(entries))
			}
		})
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	mustWrite(t, path, string(readFile(t, path))+s)
}
