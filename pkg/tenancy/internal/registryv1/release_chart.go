package registryv1

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
)

// ReleaseChart is the chart Helm installs for a rendered bundle: the
// manifest as a file that one template prints, so that nothing in it is
// read as a template.
func ReleaseChart(pkg string, res *Resolution, r *RenderedBundle) (*chart.Chart, error) {
	manifest, err := r.Manifest()
	if err != nil {
		return nil, err
	}
	return &chart.Chart{
		Metadata:  ReleaseMetadata(pkg, res),
		Templates: []*chart.File{{Name: "templates/bundle.yaml", Data: []byte(`{{ .Files.Get "bundle.yaml" }}`)}},
		Files:     []*chart.File{{Name: "bundle.yaml", Data: manifest}},
	}, nil
}

// ReleaseMetadata is the Chart.yaml of ReleaseChart.
func ReleaseMetadata(pkg string, res *Resolution) *chart.Metadata {
	return &chart.Metadata{APIVersion: chart.APIVersionV2, Name: pkg, Version: res.Version.String(), AppVersion: res.Version.String(),
		Description: fmt.Sprintf("registry+v1 bundle %s, rendered by the opctl tenancy controller", res.Bundle.Name)}
}
