package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
)

// install installs the package's charts into two namespaces of a fresh
// test control plane: the first release owns the CRDs and any APIService,
// the second installs with crds.install=false and leaves the APIService to
// the first, as it does the shared namespaces. Webhooks are off: kwok runs no pods to serve them.
// Both set the required values.
func install(ctx context.Context, helm string, charts []string, required ...string) error {
	c, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		return fmt.Errorf("starting a test control plane: %w", err)
	}
	defer c.Stop()
	// CRD charts (--crds separate-chart) go first, once.
	var crdCharts, main []string
	for _, ch := range charts {
		if crdChartName.MatchString(filepath.Base(ch)) {
			crdCharts = append(crdCharts, ch)
		} else {
			main = append(main, ch)
		}
	}
	var errs []error
	helmIn := func(release, ns, chart string, set ...string) {
		args := []string{"install", release, chart, "--kubeconfig", c.Kubeconfig, "--namespace", ns, "--create-namespace", "--timeout", "2m"}
		for _, s := range valuesOf(chart, append(set, required...)) {
			args = append(args, "--set", s)
		}
		if _, err := run(helm, args...); err != nil {
			errs = append(errs, fmt.Errorf("%s in %s: %w", release, ns, err))
		}
	}
	// CRD charts of CRDs a webhook converts name the release that serves
	// it, so they go after it.
	var converted []string
	for i, ch := range crdCharts {
		if hasValue(ch, "conversion.release") {
			converted = append(converted, ch)
			continue
		}
		helmIn(fmt.Sprintf("crds-%d", i), "corpus-a", ch)
	}
	for _, ch := range main {
		helmIn("first", "corpus-a", ch, "webhooks.enabled=false")
		helmIn("second", "corpus-b", ch, "webhooks.enabled=false", "crds.install=false", "apiService.enabled=false", "sharedNamespaces.create=false")
	}
	for i, ch := range converted {
		helmIn(fmt.Sprintf("converted-crds-%d", i), "corpus-a", ch, "conversion.release=first", "webhooks.enabled=false")
	}
	return errors.Join(errs...)
}

// crdChartName matches the CRD charts opctl writes: <name>-crds and, when
// it packs the CRDs into several, <name>-crds-2 and on.
var crdChartName = regexp.MustCompile(`-crds(-[0-9]+)?$`)

// hasValue reports whether the chart's values.yaml has the dotted key, so
// that a value is set only where the chart has it (a chart's schema
// refuses unknown values).
func hasValue(chart, key string) bool {
	_, ok := valueOf(chart, key)
	return ok
}

// valueOf is the default of the dotted key in the chart's values.yaml.
func valueOf(chart, key string) (any, bool) {
	raw, err := os.ReadFile(chart + "/values.yaml")
	if err != nil {
		return nil, false
	}
	var v any
	if yaml.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	for _, part := range strings.Split(key, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}
