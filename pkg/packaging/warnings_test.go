package packaging

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What kustomize, kubectl and operator-sdk accept, opctl packages: each
// case below was a refusal once, and is now a warning that names the
// file and says what opctl did, with output that says the same.
func TestWarnings(t *testing.T) {
	const types = "api/v1alpha1/memcache_types.go"
	tests := []struct {
		name, project string
		mutate        func(*testing.T, string)
		// want are the texts one warning must hold; none means no warning.
		want []string
		// check looks at what was written.
		check func(t *testing.T, out string, res *Result)
	}{
		{"a field marker without type is left out", sdkDir, replaceIn(types, `type=spec,displayName="Pod count"`, `displayName="Pod count"`),
			[]string{"memcache_types.go:11:", `type=""`, "left out of the CSV"},
			func(t *testing.T, out string, _ *Result) {
				if csv := csvText(t, out, "memcache-operator"); strings.Contains(csv, "Pod count") {
					t.Error("the descriptor of the unmarked field is in the CSV")
				}
			}},
		{"an unknown marker argument is left out", sdkDir, replaceIn(types, `displayName="Memcache Cluster"`, `displayNam="Memcache Cluster"`),
			[]string{"memcache_types.go:", "displayNam", "left out of the CSV"}, nil},
		{"a resources entry without a version is left out", sdkDir, replaceIn(types, "{Deployment,v1,memcache-deployment}", "{Deployment}"),
			[]string{"memcache_types.go:", `resources entry ["Deployment"]`}, nil},
		{"a resource without a name, as operator-sdk's grammar allows", sdkDir, replaceIn(types, "{Deployment,v1,memcache-deployment}", "{Pod,v1}"),
			nil, func(t *testing.T, out string, _ *Result) {
				if csv := csvText(t, out, "memcache-operator"); !strings.Contains(csv, "- kind: Pod\n        name: \"\"\n        version: v1") {
					t.Errorf("the CSV has no resource Pod v1:\n%s", csv)
				}
			}},
		{"a sample that is not a custom resource is skipped", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/samples/kv_v1alpha1_kvstore.yaml"), "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n")
		}, []string{"config/samples: sample networking.k8s.io/v1 Ingress web is not a custom resource", "left out of the examples"},
			func(t *testing.T, out string, _ *Result) {
				csv := csvText(t, out, "sample-operator")
				if strings.Contains(csv, "Ingress") || !strings.Contains(csv, `"kind": "KVStore"`) {
					t.Errorf("alm-examples should hold the KVStore and not the Ingress:\n%s", csv)
				}
			}},
		{"a sample the API server would refuse is skipped", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/samples/kv_v1alpha1_kvstore.yaml"), "---\napiVersion: kv.opctl.dev/v1alpha1\nkind: KVStore\nmetadata:\n  name: broken\nspec:\n  replicas: many\n")
		}, []string{"sample kv.opctl.dev/v1alpha1 KVStore broken would be refused by the API server", "spec.replicas", "left out of the examples"},
			func(t *testing.T, out string, _ *Result) {
				if csv := csvText(t, out, "sample-operator"); strings.Contains(csv, "broken") {
					t.Error("alm-examples holds the broken sample")
				}
			}},
		{"a manager without serviceAccountName gets an account per release", sampleDir, func(t *testing.T, dir string) {
			replaceIn("config/manager/manager.yaml", "serviceAccountName: controller-manager", "automountServiceAccountToken: true")(t, dir)
		}, []string{"manager Deployment kvstore-controller-manager runs as ServiceAccount default, which the overlay does not define", "creates it per release"},
			func(t *testing.T, out string, _ *Result) {
				sa := string(readFile(t, filepath.Join(out, "charts/sample-operator/templates/serviceaccount-default.yaml")))
				if !strings.Contains(sa, "{{- if .Values.serviceAccount.create }}") || !strings.Contains(sa, `include "sample-operator.serviceAccountName"`) {
					t.Errorf("the account's template:\n%s", sa)
				}
			}},
		{"a placeholder image is left out of relatedImages", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: build\n  namespace: system\ndata:\n  image: <your image URL>\n")
		}, []string{`image "<your image URL>" (configmap-kvstore-build-image) is not an image reference`, "relatedImages leaves it out"},
			func(t *testing.T, out string, _ *Result) {
				if csv := csvText(t, out, "sample-operator"); strings.Contains(csv, "image: <your image URL>") {
					t.Error("relatedImages holds the placeholder")
				}
			}},
		{"samples whose kustomization does not build are skipped", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/samples/kustomization.yaml"), "- missing_sample.yaml\n")
		}, []string{"config/samples: the samples' kustomization does not build, so the package has no examples", "missing_sample.yaml"},
			func(t *testing.T, out string, _ *Result) {
				if csv := csvText(t, out, "sample-operator"); strings.Contains(csv, `"kind": "KVStore"`) {
					t.Error("alm-examples holds samples")
				}
			}},
		{"an operator with no CRD of its own", sampleDir, func(t *testing.T, dir string) {
			replaceIn("config/default/kustomization.yaml", "- ../crd\n", "")(t, dir)
			mustWrite(t, filepath.Join(dir, "config/samples/kustomization.yaml"), "resources: []\n")
		}, []string{"no CustomResourceDefinition in the overlay, so the package owns none"},
			func(t *testing.T, out string, _ *Result) {
				if _, err := os.Stat(filepath.Join(out, "charts/sample-operator/templates/crds")); !os.IsNotExist(err) {
					t.Errorf("templates/crds: %v", err)
				}
				if csv := csvText(t, out, "sample-operator"); !strings.Contains(csv, "kind: ClusterServiceVersion") {
					t.Error("no CSV")
				}
			}},
		{"a Makefile DEFAULT_CHANNEL without CHANNELS is the channel", sampleDir, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "Makefile"), "DEFAULT_CHANNEL = \"alpha\"\n")
		}, nil, func(t *testing.T, out string, _ *Result) {
			ann := string(readFile(t, filepath.Join(out, "bundle/sample-operator/metadata/annotations.yaml")))
			if !strings.Contains(ann, "channels.v1: alpha") || !strings.Contains(ann, "channel.default.v1: alpha") {
				t.Errorf("annotations.yaml:\n%s", ann)
			}
		}},
		{"unquoted numbers in labels are quoted", sampleDir, func(t *testing.T, dir string) {
			replaceIn("config/manager/manager.yaml", "      labels:\n", "      labels:\n        rht.comp_ver: 2.16\n")(t, dir)
		}, []string{"Deployment kvstore-controller-manager: spec.template.metadata.labels.rht.comp_ver are not strings", "opctl quoted them"},
			func(t *testing.T, out string, _ *Result) {
				if d := string(readFile(t, filepath.Join(out, "charts/sample-operator/templates/deployment.yaml"))); !strings.Contains(d, `rht.comp_ver: "2.16"`) {
					t.Errorf("the Deployment's label is not the string 2.16")
				}
			}},
		{"a webhook that calls a URL is carried as it is", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: policy\nwebhooks:\n- name: policy.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  clientConfig:\n    url: https://policy.example.com/validate\n  rules:\n  - apiGroups: [kv.opctl.dev]\n    apiVersions: [v1alpha1]\n    operations: [CREATE]\n    resources: [kvstores]\n")
		}, []string{"ValidatingWebhookConfiguration kvstore-policy calls URLs", "carries it as it is", "bundle leaves it out"},
			func(t *testing.T, out string, _ *Result) {
				tmpl := string(readFile(t, filepath.Join(out, "charts/sample-operator/templates/validatingwebhookconfiguration-policy.yaml")))
				if !strings.Contains(tmpl, "url: https://policy.example.com/validate") {
					t.Errorf("the webhook's template:\n%s", tmpl)
				}
				if strings.Contains(csvText(t, out, "sample-operator"), "webhookdefinitions") {
					t.Error("the CSV declares the URL webhook")
				}
			}},
		{"a Makefile VERSION that is not SemVer gives 0.0.0-dev", sampleDir, func(t *testing.T, dir string) {
			replaceIn(ConfigFile, "version: 0.1.0\n", "")(t, dir)
			mustWrite(t, filepath.Join(dir, "Makefile"), "VERSION ?= main\n")
		}, []string{"Makefile: VERSION \"main\" is a placeholder", "version 0.0.0-dev", "--version"},
			func(t *testing.T, out string, res *Result) {
				if res.Version != "0.0.0-dev" || !strings.Contains(string(readFile(t, filepath.Join(out, "charts/sample-operator/Chart.yaml"))), "version: 0.0.0-dev") {
					t.Errorf("version %s, want 0.0.0-dev in the result and Chart.yaml", res.Version)
				}
			}},
		{"a Makefile VERSION of 0.0.0 is a placeholder too", sampleDir, func(t *testing.T, dir string) {
			replaceIn(ConfigFile, "version: 0.1.0\n", "")(t, dir)
			mustWrite(t, filepath.Join(dir, "Makefile"), "VERSION ?= 0.0.0\n")
		}, []string{"Makefile: VERSION \"0.0.0\" is a placeholder", "OLM reads as no version"}, nil},
		{"a binding of a role defined elsewhere is kept as it is", sampleDir, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "config/rbac/auth_delegator.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: auth-delegator\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\nsubjects:\n- kind: ServiceAccount\n  name: controller-manager\n  namespace: system\n")
			appendTo(t, filepath.Join(dir, "config/rbac/kustomization.yaml"), "- auth_delegator.yaml\n")
		}, []string{"ClusterRoleBinding kvstore-auth-delegator binds ClusterRole system:auth-delegator, which the overlay does not define", "kept as it is"},
			func(t *testing.T, out string, _ *Result) {
				tmpl := string(readFile(t, filepath.Join(out, "charts/sample-operator/templates/clusterrolebinding-auth-delegator.yaml")))
				if !strings.Contains(tmpl, "name: system:auth-delegator") {
					t.Errorf("the binding's roleRef changed:\n%s", tmpl)
				}
				if b := readFile(t, filepath.Join(out, "bundle/sample-operator/manifests/kvstore-auth-delegator_v1_clusterrolebinding.yaml")); !strings.Contains(string(b), "system:auth-delegator") {
					t.Errorf("the bundle's binding:\n%s", b)
				}
			}},
		{"a second Deployment with the manager's label is an extra workload", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: adapter\n  namespace: system\n  labels:\n    control-plane: controller-manager\nspec:\n  selector:\n    matchLabels: {app: adapter}\n  template:\n    metadata:\n      labels: {app: adapter}\n    spec:\n      containers:\n      - name: adapter\n        image: example.com/adapter:1.0.0\n")
		}, []string{"the overlay has Deployments [kvstore-adapter kvstore-controller-manager]: opctl took kvstore-controller-manager as the manager (label control-plane=controller-manager, container manager has --leader-elect", "carries [kvstore-adapter] as extra workloads", "--manager"},
			func(t *testing.T, out string, _ *Result) {
				if b := readFile(t, filepath.Join(out, "charts/sample-operator/templates/deployment-adapter.yaml")); !strings.Contains(string(b), "adapter") {
					t.Errorf("the adapter's template:\n%s", b)
				}
				if csv := csvText(t, out, "sample-operator"); !strings.Contains(csv, "name: kvstore-adapter") {
					t.Error("the CSV's install strategy has no kvstore-adapter Deployment")
				}
			}},
		{"Deployments with equal evidence: the first by name, said", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: zz-manager-two\n  namespace: system\n  labels:\n    control-plane: controller-manager\nspec:\n  selector:\n    matchLabels: {app: adapter}\n  template:\n    metadata:\n      labels: {app: adapter}\n    spec:\n      serviceAccountName: controller-manager\n      containers:\n      - name: adapter\n        image: example.com/adapter:1.0.0\n        args: [--leader-elect]\n        env: [{name: RELATED_IMAGE_X, value: example.com/x:1.0.0}]\n")
		}, []string{"could be the manager and none stands out, so opctl took kvstore-controller-manager and carries [kvstore-zz-manager-two]"}, nil},
		{"a field marker on an inlined field is left out", sdkDir, replaceIn(types, "\tTuning `json:\",inline\"`", "\t// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName=\"Tuning\"\n\tTuning `json:\",inline\"`"),
			[]string{"memcache_types.go:18:", "an inlined field has no path of its own", "left out of the CSV"},
			func(t *testing.T, out string, _ *Result) {
				if csv := csvText(t, out, "memcache-operator"); strings.Contains(csv, "displayName: Tuning") || !strings.Contains(csv, "path: threads") {
					t.Error("the CSV has a descriptor for the inlined struct itself, or lost its fields'")
				}
			}},
		{"a sample file that does not parse is skipped", sampleDir, func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "config/samples/kustomization.yaml")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, "config/samples/notes.yaml"), "replicas: 3\n")
		}, []string{"config/samples/notes.yaml: document 1 has no apiVersion or kind", "samples of that file are left out of the examples"},
			func(t *testing.T, out string, _ *Result) {
				if csv := csvText(t, out, "sample-operator"); !strings.Contains(csv, `"kind": "KVStore"`) || !strings.Contains(csv, `"kind": "KVBackup"`) {
					t.Error("alm-examples lost the samples of the files that parse")
				}
			}},
		{"an operand without all its figures gets the annotations it has", sampleDir, replaceIn(ConfigFile, "    pdb: {maxUnavailable: \"1\"}\n", ""),
			[]string{"CRD kvstores.kv.opctl.dev: pdb-minavailable/pdb-maxunavailable unknown in opctl.yaml, annotations left out"},
			func(t *testing.T, out string, _ *Result) {
				crd := string(readFile(t, filepath.Join(out, "bundle/sample-operator/manifests/kv.opctl.dev_kvstores.yaml")))
				if strings.Contains(crd, "platform-as-code/pdb-") || !strings.Contains(crd, "platform-as-code/cpu-requests") {
					t.Errorf("the CRD's platform-as-code annotations:\n%s", crd)
				}
			}},
		{"a ValidatingAdmissionPolicy is left out of the bundle", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: replicas\nspec:\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [kv.opctl.dev]\n      apiVersions: [v1alpha1]\n      operations: [CREATE]\n      resources: [kvstores]\n  validations:\n  - expression: object.spec.replicas <= 9\n")
		}, []string{"ValidatingAdmissionPolicy kvstore-replicas: OLM cannot install kind ValidatingAdmissionPolicy, so the bundle leaves it out", "apply it from the chart"},
			func(t *testing.T, out string, _ *Result) {
				if _, err := os.Stat(filepath.Join(out, "charts/sample-operator/templates/validatingadmissionpolicy-replicas.yaml")); err != nil {
					t.Errorf("the chart lacks the policy: %v", err)
				}
				entries, _ := os.ReadDir(filepath.Join(out, "bundle/sample-operator/manifests"))
				for _, e := range entries {
					if strings.Contains(e.Name(), "validatingadmissionpolicy") {
						t.Errorf("the bundle carries %s", e.Name())
					}
				}
			}},
		{"a manager that reads no watch-namespace setting is AllNamespaces only", sampleDir, func(t *testing.T, dir string) {
			// A flag that reaches the cache counts whatever its name, so the
			// cache takes $HOME, which is no namespace setting.
			replaceIn("cmd/main.go", `"watch-namespaces", os.Getenv("WATCH_NAMESPACE")`, `"watched", os.Getenv("HOME")`)(t, dir)
			replaceIn("cmd/main.go", `splitNamespaces(watchNamespaces)`, `splitNamespaces(os.Getenv("HOME"))`)(t, dir)
		}, []string{"the manager (main package cmd, found by cmd/main.go) reads no watch-namespace setting", "it sets DefaultNamespaces at cmd/main.go:", "AllNamespaces only"},
			func(t *testing.T, out string, res *Result) {
				if csv := csvText(t, out, "sample-operator"); !strings.Contains(csv, "opctl.dev/watch-namespace: none") {
					t.Error("the CSV does not say the manager reads no namespace")
				}
				if res.WatchNamespace.Cache == "" || res.WatchNamespace.Reads() {
					t.Errorf("watchNamespace %+v, want no setting and the cache option named", res.WatchNamespace)
				}
			}},
		{"a Go project whose main package opctl cannot find", sdkDir, func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "cmd"), filepath.Join(dir, "manager")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, "go.mod"), "module example.com/memcache-operator\n")
		}, []string{"no main package of the manager found", "set main in opctl.yaml"}, nil},
		{"a manager pod below restricted is made restricted, a warning per change", sampleDir, func(t *testing.T, dir string) {
			replaceIn("config/manager/manager.yaml", "        runAsNonRoot: true\n        seccompProfile:\n          type: RuntimeDefault\n", "        runAsNonRoot: true\n")(t, dir)
		}, []string{"manager Deployment kvstore-controller-manager: opctl set the pod's securityContext.seccompProfile to RuntimeDefault so that its pods meet Pod Security restricted", "podSecurity.restricted=false undoes it"},
			func(t *testing.T, out string, res *Result) {
				if res.PodSecurity.Level != "restricted" {
					t.Errorf("pod security %+v, want restricted", res.PodSecurity)
				}
			}},
		{"a manager pod that needs more than restricted is kept as it is", sampleDir, func(t *testing.T, dir string) {
			replaceIn("config/manager/manager.yaml", "      securityContext:\n        runAsNonRoot: true\n", "      hostPID: true\n      securityContext:\n        runAsNonRoot: true\n")(t, dir)
		}, []string{"its pods meet Pod Security privileged, not restricted", "host namespaces (hostPID=true)", "left them as they are"},
			func(t *testing.T, out string, res *Result) {
				if res.PodSecurity.Level != "privileged" || !strings.Contains(res.PodSecurity.Reasons, "hostPID=true") {
					t.Errorf("pod security %+v, want privileged naming hostPID", res.PodSecurity)
				}
			}},
		{"another workload below restricted is named", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: warmup\n  namespace: system\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: warmup\n        image: opctl/kvstore-operator:0.1.0\n")
		}, []string{"Job kvstore-warmup: its pods meet Pod Security baseline, not restricted", "opctl makes only the manager's pods restricted"}, nil},
		{"an APIService no Deployment serves on a numbered port is not declared", sampleDir, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/metrics_service.yaml"), "---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1alpha1.metrics.kv.opctl.dev\nspec:\n  group: metrics.kv.opctl.dev\n  version: v1alpha1\n  groupPriorityMinimum: 100\n  versionPriority: 100\n  service:\n    name: controller-manager-metrics\n    namespace: system\n    port: 9443\n")
		}, []string{"APIService v1alpha1.metrics.kv.opctl.dev: no Deployment of the overlay serves it on a numbered port, so the bundle does not declare it"},
			func(t *testing.T, out string, _ *Result) {
				if csv := csvText(t, out, "sample-operator"); strings.Contains(csv, "metrics.kv.opctl.dev") {
					t.Error("the CSV declares the APIService")
				}
				if _, err := os.Stat(filepath.Join(out, "charts/sample-operator/templates/apiservice-v1alpha1.metrics.kv.opctl.dev.yaml")); err != nil {
					t.Errorf("the chart lacks the APIService: %v", err)
				}
			}},
		{"a binding subject kustomize left in namespace system binds the chart's account", sampleDir, replaceIn("config/rbac/service_account.yaml", "  namespace: system\n", ""),
			[]string{"RoleBinding kvstore-leader-election-rolebinding binds ServiceAccount controller-manager in namespace \"system\"", "binds ServiceAccount kvstore-controller-manager of the operator's namespace"},
			func(t *testing.T, out string, _ *Result) {
				// No chart template names namespace system; the manager's
				// binding is the chart's own again (rbac-manager.yaml).
				dir := filepath.Join(out, "charts/sample-operator/templates")
				entries, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && strings.Contains(string(b), "namespace: system") {
						t.Errorf("%s names namespace system:\n%s", e.Name(), b)
					}
				}
				rb := string(readFile(t, filepath.Join(dir, "rolebinding-leader-election-rolebinding.yaml")))
				if !strings.Contains(rb, "name: {{ include \"sample-operator.serviceAccountName\" . }}\n  namespace: {{ .Release.Namespace }}") {
					t.Errorf("the leader election binding does not bind the chart's account:\n%s", rb)
				}
				if _, err := os.Stat(filepath.Join(dir, "clusterrolebinding-manager-rolebinding.yaml")); !os.IsNotExist(err) {
					t.Errorf("the manager's binding is carried as an extra object: %v", err)
				}
			}},
		{"a rule on a subresource the project's CRD does not serve is left out", sampleDir, replaceIn("config/rbac/role.yaml", "  - kvstores/finalizers\n", "  - kvstores/finalizers\n  - kvstores/spec\n"),
			[]string{"names kv.opctl.dev kvstores/spec, a subresource the API server does not serve for the project's CRD"},
			func(t *testing.T, out string, _ *Result) {
				rbac := string(readFile(t, filepath.Join(out, "charts/sample-operator/templates/rbac-manager.yaml")))
				if strings.Contains(rbac, "kvstores/spec") || !strings.Contains(rbac, "kvstores/finalizers") {
					t.Errorf("the manager's rules keep kvstores/spec or lost kvstores/finalizers:\n%s", rbac)
				}
				if csv := csvText(t, out, "sample-operator"); strings.Contains(csv, "kvstores/spec") {
					t.Error("the CSV grants kvstores/spec")
				}
			}},
		{"a placeholder where the API takes no string is read with its default", sampleDir, replaceIn("config/manager/manager.yaml", "  replicas: 1\n", "  replicas: ${REPLICAS:=2}\n"),
			[]string{"manager Deployment kvstore-controller-manager: spec.replicas is \"${REPLICAS:=2}\", a placeholder where the API takes no string: the chart and the bundle carry 2"},
			func(t *testing.T, out string, res *Result) {
				values := string(readFile(t, filepath.Join(out, "charts/sample-operator/values.yaml")))
				if !strings.Contains(values, "\nreplicas: 2\n") || !strings.Contains(csvText(t, out, "sample-operator"), "replicas: 2\n") || len(res.Placeholders) > 0 {
					t.Errorf("want replicas 2 in values.yaml and the CSV, and no placeholders value (%+v):\n%s", res.Placeholders, values)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyProject(t, tt.project)
			tt.mutate(t, dir)
			before := warningsOf(t, copyProject(t, tt.project))
			out, res := packageTo(t, dir, PackageOptions{})
			added := slices.DeleteFunc(slices.Clone(res.Warnings), func(w string) bool { return slices.Contains(before, w) })
			switch {
			case len(tt.want) == 0 && len(added) > 0:
				t.Errorf("warnings %q, want none", added)
			case len(tt.want) > 0 && !slices.ContainsFunc(added, func(w string) bool { return containsAll(w, tt.want) }):
				t.Errorf("warnings %q, want one holding %q", added, tt.want)
			}
			if tt.check != nil {
				tt.check(t, out, res)
			}
			if len(tt.want) == 0 {
				return
			}
			// --strict makes the same warning an error, and writes nothing.
			strict := filepath.Join(t.TempDir(), "strict")
			_, err := Package(context.Background(), dir, PackageOptions{Out: strict, Strict: true})
			if err == nil || !containsAll(err.Error(), append([]string{"--strict"}, tt.want...)) {
				t.Errorf("--strict: error %v, want one holding the warning", err)
			}
			if _, err := os.Stat(strict); !os.IsNotExist(err) {
				t.Errorf("--strict wrote %s", strict)
			}
		})
	}
}

// replaceIn is a mutation of a project: the first from in file becomes to.
func replaceIn(file, from, to string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, file)
		b := string(readFile(t, p))
		if !strings.Contains(b, from) {
			t.Fatalf("%s has no %q", file, from)
		}
		mustWrite(t, p, strings.Replace(b, from, to, 1))
	}
}

func warningsOf(t *testing.T, dir string) []string {
	t.Helper()
	_, res := packageTo(t, dir, PackageOptions{})
	return res.Warnings
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func csvText(t *testing.T, out, name string) string {
	t.Helper()
	return string(readFile(t, filepath.Join(out, "bundle", name, "manifests", name+".clusterserviceversion.yaml")))
}

// The sample packages with no warning at all: it is what a user reads
// first.
func TestSampleHasNoWarnings(t *testing.T) {
	if _, res := packageTo(t, sampleDir, PackageOptions{}); len(res.Warnings) > 0 {
		t.Errorf("opctl package %s warns:\n%s", sampleDir, strings.Join(res.Warnings, "\n"))
	}
}

// An overlay that creates a second Namespace (where the operator keeps its
// leases, as ironcore does) is not refused: the chart creates it by name
// behind sharedNamespaces.create, and what is in it stays there; the
// bundle leaves out what is in it, with a warning.
func TestSharedNamespace(t *testing.T) {
	dir := copyProject(t, sampleDir)
	mustWrite(t, filepath.Join(dir, "config/leases/kustomization.yaml"), "resources:\n- leases.yaml\n")
	mustWrite(t, filepath.Join(dir, "config/leases/leases.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kv-leases\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: lease-writer\n  namespace: kv-leases\nrules:\n- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  verbs: [get, create, update]\n")
	mustWrite(t, filepath.Join(dir, "config/all/kustomization.yaml"), "resources:\n- ../default\n- ../leases\n")
	out, res := packageTo(t, dir, PackageOptions{Load: Options{Overlay: "config/all"}})
	for _, want := range [][]string{
		{"the overlay creates Namespace kv-leases beside the operator's kvstore-system", "sharedNamespaces.create"},
		// OLM would install the Role in the operator's namespace.
		{"Role lease-writer: OLM installs a bundle's objects in the operator's namespace, not in kv-leases, so the bundle leaves it out"},
	} {
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return containsAll(w, want) }) {
			t.Errorf("warnings %q, want one holding %q", res.Warnings, want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(out, "bundle/sample-operator/manifests")); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.Contains(e.Name(), "lease-writer") }) {
		t.Error("the bundle carries the Role of kv-leases")
	}
	tmpl := filepath.Join(out, "charts/sample-operator/templates")
	if ns := string(readFile(t, filepath.Join(tmpl, "namespace-kv-leases.yaml"))); !strings.HasPrefix(ns, "{{- if .Values.sharedNamespaces.create }}") || !strings.Contains(ns, "name: kv-leases") {
		t.Errorf("the Namespace's template:\n%s", ns)
	}
	if role := string(readFile(t, filepath.Join(tmpl, "role-lease-writer.yaml"))); !strings.Contains(role, "namespace: kv-leases") {
		t.Errorf("the Role left its namespace:\n%s", role)
	}
	if !strings.Contains(string(readFile(t, filepath.Join(out, "charts/sample-operator/values.yaml"))), "sharedNamespaces:\n") {
		t.Error("values.yaml has no sharedNamespaces")
	}
}

// Shapes that package with no warning, each an edit of the sample and
// what the chart must then hold:
//   - a container named like an object of the overlay (moco's manager
//     container is named like its Deployment) keeps its name, and its image
//     is still templated: a container's name refers to nothing;
//   - a CRD converted by a webhook at a URL, not a Service of the overlay,
//     keeps its conversion as it is (it was refused: "no
//     clientConfig.service").
func TestSampleEdits(t *testing.T) {
	tests := []struct {
		name, file, from, to, template string
		want                           []string
	}{
		{"a container named like an object", "config/manager/manager.yaml", "      - name: manager\n", "      - name: kvstore-controller-manager\n",
			"deployment.yaml", []string{"name: kvstore-controller-manager\n", `image: "{{ include "sample-operator.image" . }}"`}},
		{"a conversion webhook at a URL", "config/crd/bases/kv.opctl.dev_kvbackups.yaml", "spec:\n",
			"spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig:\n        url: https://convert.example.com/convert\n",
			"crds/kvbackups.kv.opctl.dev.yaml", []string{"url: https://convert.example.com/convert"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyProject(t, sampleDir)
			p := filepath.Join(dir, tt.file)
			mustWrite(t, p, strings.Replace(string(readFile(t, p)), tt.from, tt.to, 1))
			out, _ := packageTo(t, dir, PackageOptions{})
			text := string(readFile(t, filepath.Join(out, "charts/sample-operator/templates", tt.template)))
			if !containsAll(text, tt.want) {
				t.Errorf("%s lacks %q:\n%s", tt.template, tt.want, text)
			}
		})
	}
}

// Numbers in labels are quoted; a custom resource's spec is left as its
// CRD defines it, even under a field called selector.
func TestStringLabelsLeavesCustomResources(t *testing.T) {
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Pool",
		"metadata": map[string]any{"name": "p", "labels": map[string]any{"tier": int64(2)}},
		"spec":     map[string]any{"selector": map[string]any{"replicas": int64(3)}}}}
	if fixed := stringLabels(cr); !slices.Equal(fixed, []string{"metadata.labels.tier"}) {
		t.Errorf("quoted %v, want only metadata.labels.tier", fixed)
	}
	if v := cr.Object["spec"].(map[string]any)["selector"].(map[string]any)["replicas"]; v != int64(3) {
		t.Errorf("spec.selector.replicas = %#v, want 3", v)
	}
}
