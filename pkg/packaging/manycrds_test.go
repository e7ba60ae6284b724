package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const manyCRDsDir = "testdata/manycrds"

// writeManyCRDs writes a project whose overlay carries n CRDs, each with
// a schema of about fields×depth nested, described properties: the shape
// of operators that embed pod templates in their APIs.
func writeManyCRDs(tb testing.TB, dir string, n, fields, depth int) {
	tb.Helper()
	write := func(rel, content string) { mustWrite(tb, filepath.Join(dir, rel), content) }
	var list strings.Builder
	var plurals []string
	for i := range n {
		plural := fmt.Sprintf("resource%02ds", i)
		kind := fmt.Sprintf("Resource%02d", i)
		var b strings.Builder
		fmt.Fprintf(&b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.many.example.com
spec:
  group: many.example.com
  names: {kind: %[2]s, listKind: %[2]sList, plural: %[1]s, singular: %[3]s}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        description: %[2]s is one of many generated kinds.
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            description: Spec of the %[2]s.
            type: object
            properties:
`, plural, kind, strings.ToLower(kind))
		schemaProps(&b, fields, depth, 14)
		b.WriteString("          status:\n            description: Status.\n            type: object\n            properties:\n              conditions:\n                description: Conditions of the resource.\n                type: array\n                items: {type: object, x-kubernetes-preserve-unknown-fields: true}\n")
		write("config/crd/bases/many.example.com_"+plural+".yaml", b.String())
		list.WriteString("- bases/many.example.com_" + plural + ".yaml\n")
		plurals = append(plurals, plural, plural+"/status")
	}
	write("config/crd/kustomization.yaml", "resources:\n"+list.String())
	writeManagerRBAC(write, "rbac.yaml", "- apiGroups: [many.example.com]\n  resources: ["+strings.Join(plurals, ", ")+"]\n  verbs: [get, list, watch, update, patch]\n")
	write("config/manager/kustomization.yaml", "resources:\n- manager.yaml\n")
	write("config/manager/manager.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: controller-manager, namespace: system, labels: {control-plane: controller-manager}}
spec:
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      serviceAccountName: controller-manager
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: manager
        image: example.com/many/manager:3.1.0
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        resources: {requests: {cpu: 10m, memory: 64Mi}, limits: {cpu: 500m, memory: 256Mi}}
`)
	write("config/default/kustomization.yaml", "namespace: many-system\nnamePrefix: many-\nresources:\n- ../crd\n- ../rbac\n- ../manager\n")
	write("opctl.yaml", "name: many-operator\nversion: 3.1.0\nprovider: {name: Example}\nminKubeVersion: 1.30.0\n")
}

// schemaProps writes fields properties, nesting objects depth deep.
func schemaProps(b *strings.Builder, fields, depth, indent int) {
	pad := strings.Repeat(" ", indent)
	for f := range fields {
		name := fmt.Sprintf("field%02d", f)
		if depth > 0 && f%3 == 0 {
			fmt.Fprintf(b, "%s%s:\n%s  description: %s groups settings that a real API would document at some length, with defaults and examples.\n%s  type: object\n%s  properties:\n", pad, name, pad, name, pad, pad)
			schemaProps(b, fields/2, depth-1, indent+4)
			continue
		}
		fmt.Fprintf(b, "%s%s:\n%s  description: %s is a setting that a real API would document at some length, with its unit, default and an example.\n%s  type: string\n%s  maxLength: 253\n", pad, name, pad, name, pad, pad)
	}
}

// The committed fixture is what the generator writes; -update refreshes
// it.
func TestManyCRDsFixture(t *testing.T) {
	if *update {
		if err := os.RemoveAll(manyCRDsDir); err != nil {
			t.Fatal(err)
		}
		writeManyCRDs(t, manyCRDsDir, 42, 12, 2)
	}
	fresh := t.TempDir()
	writeManyCRDs(t, fresh, 42, 12, 2)
	diffTrees(t, tree(t, fresh), tree(t, manyCRDsDir))
}
