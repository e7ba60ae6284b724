package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/pkg/tenancy"
)

// installGuardrails renders charts/opctl as a release "opctl" in the
// storage namespace and applies its ValidatingAdmissionPolicies and
// bindings: what a platform team gets from the chart.
func installGuardrails(ctx context.Context) error {
	ch, err := loader.Load("../../charts/opctl")
	if err != nil {
		return err
	}
	vals, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "opctl", Namespace: tenancy.DefaultStorageNamespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return err
	}
	rendered, err := engine.Render(ch, vals)
	if err != nil {
		return fmt.Errorf("rendering charts/opctl: %w", err)
	}
	n := 0
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		if !strings.Contains(name, "/templates/validatingadmissionpolicy") {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(rendered[name]), &u.Object); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("opctl-tests"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s: %w", name, err)
		}
		n++
	}
	if n != 8 {
		return fmt.Errorf("charts/opctl has %d guardrail policies and bindings, want 4 of each", n)
	}
	return nil
}
