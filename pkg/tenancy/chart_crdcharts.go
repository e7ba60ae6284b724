package tenancy

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"

	"opctl.dev/opctl/pkg/packaging/contract"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// crdChartSources are where the CRD charts of a chart loaded from src are
// (contract.CRDCharts): beside it for a path (the sibling directory, or
// <name>-<version>.tgz beside a .tgz), else by name in its repository at
// its version.
func crdChartSources(src *tenancyv1.ChartSource, ch *chart.Chart) []*tenancyv1.ChartSource {
	if ch.Metadata == nil || ch.Metadata.Annotations[contract.CRDCharts] == "" {
		return nil
	}
	var out []*tenancyv1.ChartSource
	for name := range strings.SplitSeq(ch.Metadata.Annotations[contract.CRDCharts], ",") {
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			continue
		}
		s := &tenancyv1.ChartSource{Name: name, Version: src.Version}
		switch {
		case src.Path != "" && strings.HasSuffix(src.Path, ".tgz"):
			s.Path = filepath.Join(filepath.Dir(src.Path), name+"-"+ch.Metadata.Version+".tgz")
		case src.Path != "":
			s.Path = filepath.Join(filepath.Dir(filepath.Clean(src.Path)), name)
		case strings.HasPrefix(src.Repository, "oci://"):
			s.Repository = src.Repository[:strings.LastIndex(src.Repository, "/")+1] + name
		default:
			s.Repository = src.Repository
		}
		out = append(out, s)
	}
	return out
}

// loadCRDCharts loads the CRD charts of ch, loaded from src.
func (c *chartCache) loadCRDCharts(ctx context.Context, src *tenancyv1.ChartSource, ch *chart.Chart) ([]*chart.Chart, error) {
	var out []*chart.Chart
	for _, s := range crdChartSources(src, ch) {
		crds, err := c.fetch(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("chart %s names its CRD chart %s (%s): %w", ch.Name(), s.Name, contract.CRDCharts, err)
		}
		out = append(out, crds)
	}
	return out, nil
}

// crdChartValues are the values a CRD chart renders with for a tenant's
// release: its own, with the CRDs on and, where it has the value, the
// release that serves their conversion webhook (which the render guard
// then refuses: CRDs are shared).
func crdChartValues(ch *chart.Chart, release string) map[string]any {
	vals := map[string]any{"crds": map[string]any{"install": true}}
	if _, ok := ch.Values["conversion"]; ok {
		vals["conversion"] = map[string]any{"release": release}
	}
	return vals
}
