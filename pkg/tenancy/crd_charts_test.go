package tenancy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// crdChartFiles are a chart whose CRD is in a CRD chart of its own beside
// it, as opctl package writes them with --crds separate-chart (or packed
// for size): the main chart names it in Chart.yaml (opctl.dev/crd-charts).
func crdChartFiles(group string) map[string]string {
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets." + group + "\n" +
		"spec:\n  group: " + group + "\n  scope: Namespaced\n  names:\n    kind: Widget\n    plural: widgets\n    singular: widget\n    listKind: WidgetList\n" +
		"  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n" +
		"        properties:\n          spec:\n            type: object\n            properties:\n              size:\n                type: integer\n"
	return map[string]string{
		"op/Chart.yaml":        "apiVersion: v2\nname: op\nversion: 0.1.0\nannotations:\n  opctl.dev/crd-charts: op-crds\n",
		"op/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op-config\ndata:\n  watch: {{ first .Values.watchNamespaces }}\n",
		"op-crds/Chart.yaml":   "apiVersion: v2\nname: op-crds\nversion: 0.1.0\n",
		"op-crds/values.yaml":  "crds:\n  install: true\n  keep: true\n",
		"op-crds/templates/crds/widgets.yaml": "{{- if .Values.crds.install }}\n" + crd + "{{- end }}\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-a-crd\n",
	}
}

// A Tenant names the main chart of a package whose CRDs are in a CRD
// chart: the controller applies that chart's CRDs as the chart's own
// (created by the controller, labelled shared, listed in the operator's
// status), installs nothing else of it, and says which CRD chart it could
// not find.
func TestCRDChartsApplied(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	group := "crdcharts-" + suffix() + ".example.com"
	dir := writeChart(t, crdChartFiles(group))
	name := "crdcharts-" + suffix()
	createTenant(t, newTenant(name, []string{name}, filepath.Join(dir, "op"), 0))
	crdName := "widgets." + group
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
	})
	waitTenant(t, name, 2*time.Minute, "the CRD chart's CRD in the operator's status", func(tn *tenancyv1.Tenant) error {
		for _, op := range tn.Status.Operators {
			if slices.Contains(op.CRDs, crdName) && op.Revision > 0 {
				return nil
			}
		}
		return fmt.Errorf("operators %s", dump(tn.Status.Operators))
	})
	live := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, live); err != nil {
		t.Fatalf("the CRD chart's CRD: %v", err)
	}
	if live.Labels[tenancyv1.LabelSharedCRD] != "true" {
		t.Errorf("CRD %s labels %v, want it shared", crdName, live.Labels)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(name).Get(ctx, "not-a-crd", metav1.GetOptions{}); err == nil {
		t.Errorf("the CRD chart's ConfigMap was installed in %s; only its CRDs are the chart's", name)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(name).Get(ctx, "op-config", metav1.GetOptions{}); err != nil {
		t.Errorf("the main chart's ConfigMap: %v", err)
	}

	// Without its CRD chart beside it, the Tenant says which is missing.
	lone := writeChart(t, map[string]string{
		"op/Chart.yaml":        "apiVersion: v2\nname: op\nversion: 0.1.0\nannotations:\n  opctl.dev/crd-charts: op-crds\n",
		"op/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op-config\n",
	})
	missing := "crdcharts-" + suffix()
	createTenant(t, newTenant(missing, []string{missing}, filepath.Join(lone, "op"), 0))
	waitTenant(t, missing, 2*time.Minute, "the missing CRD chart named", func(tn *tenancyv1.Tenant) error {
		for _, c := range tn.Status.Conditions {
			if strings.Contains(c.Message, "names its CRD chart op-crds") && strings.Contains(c.Message, "opctl.dev/crd-charts") {
				return nil
			}
		}
		return fmt.Errorf("conditions %s", dump(tn.Status.Conditions))
	})
}
