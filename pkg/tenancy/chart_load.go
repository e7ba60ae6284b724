package tenancy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// chartCache loads each chart once. Charts from registries and
// repositories are immutable per version; a path is reloaded when its
// modification time changes.
type chartCache struct {
	mu        sync.Mutex
	charts    map[string]*loadedChart
	plainHTTP bool
}

type loadedChart struct {
	key   string
	chart *chart.Chart
	// crdCharts are the charts its CRDs are in (contract.CRDCharts).
	crdCharts []*chart.Chart
	mu        sync.Mutex // rendering processes dependencies in place
}

func newChartCache(plainHTTP bool) *chartCache {
	return &chartCache{charts: map[string]*loadedChart{}, plainHTTP: plainHTTP}
}

// Load returns the chart src names.
func (c *chartCache) Load(ctx context.Context, src *tenancyv1.ChartSource) (*loadedChart, error) {
	key, err := c.key(src)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	lc, ok := c.charts[key]
	c.mu.Unlock()
	if ok {
		return lc, nil
	}
	ch, err := c.fetch(ctx, src)
	if err != nil {
		return nil, err
	}
	crdCharts, err := c.loadCRDCharts(ctx, src, ch)
	if err != nil {
		return nil, err
	}
	lc = &loadedChart{key: key, chart: ch, crdCharts: crdCharts}
	c.mu.Lock()
	c.charts[key] = lc
	c.mu.Unlock()
	return lc, nil
}

func (c *chartCache) key(src *tenancyv1.ChartSource) (string, error) {
	switch {
	case src.Path != "":
		fi, err := os.Stat(src.Path)
		if err != nil {
			return "", fmt.Errorf("chart path %s: %w", src.Path, err)
		}
		return fmt.Sprintf("path:%s@%d", src.Path, fi.ModTime().UnixNano()), nil
	case src.Repository != "" && src.Version != "":
		return "repo:" + src.Repository + "|" + src.Name + "@" + src.Version, nil
	}
	return "", fmt.Errorf("chart source needs a path, or a repository and a version")
}

func (c *chartCache) fetch(_ context.Context, src *tenancyv1.ChartSource) (*chart.Chart, error) {
	if src.Path != "" {
		ch, err := loader.Load(src.Path)
		if err != nil {
			return nil, fmt.Errorf("loading chart %s: %w", src.Path, err)
		}
		return ch, nil
	}
	if strings.HasPrefix(src.Repository, "oci://") {
		opts := []registry.ClientOption{}
		if c.plainHTTP {
			opts = append(opts, registry.ClientOptPlainHTTP())
		}
		rc, err := registry.NewClient(opts...)
		if err != nil {
			return nil, err
		}
		ref := strings.TrimPrefix(src.Repository, "oci://") + ":" + strings.ReplaceAll(src.Version, "+", "_")
		res, err := rc.Pull(ref, registry.PullOptWithChart(true))
		if err != nil {
			return nil, fmt.Errorf("pulling chart %s: %w", src.Repository, err)
		}
		ch, err := loader.LoadArchive(bytes.NewReader(res.Chart.Data))
		if err != nil {
			return nil, fmt.Errorf("loading chart %s: %w", src.Repository, err)
		}
		return ch, nil
	}
	settings := cli.New()
	opts := action.ChartPathOptions{RepoURL: src.Repository, Version: src.Version}
	path, err := opts.LocateChart(src.Name, settings)
	if err != nil {
		return nil, fmt.Errorf("fetching chart %s from %s: %w", src.Name, src.Repository, err)
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", path, err)
	}
	return ch, nil
}

// Render renders the chart like `helm template`, CRDs included, and
// returns its objects by the template (or crds/ file) they came from.
func (lc *loadedChart) Render(release, namespace string, values map[string]any, kube chartutil.KubeVersion) (map[string][]*unstructured.Unstructured, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if err := chartutil.ProcessDependenciesWithMerge(lc.chart, values); err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = kube
	vals, err := chartutil.ToRenderValues(lc.chart, values, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(lc.chart, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", lc.chart.Name(), err)
	}
	for name := range files {
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") {
			delete(files, name)
		}
	}
	for _, crd := range lc.chart.CRDObjects() {
		files[crd.Filename] = string(crd.File.Data)
	}
	// The CRDs of its CRD charts are its own; nothing else of them is.
	fromCRDCharts := map[string]bool{}
	for _, cc := range lc.crdCharts {
		vals, err := chartutil.ToRenderValues(cc, crdChartValues(cc, release), chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, caps)
		if err != nil {
			return nil, fmt.Errorf("CRD chart %s of %s: %w", cc.Name(), lc.chart.Name(), err)
		}
		crdFiles, err := engine.Render(cc, vals)
		if err != nil {
			return nil, fmt.Errorf("rendering CRD chart %s of %s: %w", cc.Name(), lc.chart.Name(), err)
		}
		for name, doc := range crdFiles {
			if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
				files[name], fromCRDCharts[name] = doc, true
			}
		}
		for _, crd := range cc.CRDObjects() {
			files[crd.Filename], fromCRDCharts[crd.Filename] = string(crd.File.Data), true
		}
	}
	out := map[string][]*unstructured.Unstructured{}
	for name, doc := range files {
		for _, m := range releaseutil.SplitManifests(doc) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(m), &u.Object); err != nil {
				return nil, fmt.Errorf("chart %s: %s: %w", lc.chart.Name(), name, err)
			}
			if len(u.Object) > 0 && (!fromCRDCharts[name] || u.GetKind() == "CustomResourceDefinition") {
				out[name] = append(out[name], u)
			}
		}
	}
	return out, nil
}

// withoutCRDs is the chart Helm installs for a tenant: the chart without
// its crds/ files and without the templates that render only CRDs (with
// rendered, from Render). Shared CRDs are the controller's, so they never
// belong to one tenant's release, and the release records stay small.
func (lc *loadedChart) withoutCRDs(rendered map[string][]*unstructured.Unstructured) *chart.Chart {
	onlyCRDs := func(objs []*unstructured.Unstructured) bool {
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				return false
			}
		}
		return len(objs) > 0
	}
	cp := *lc.chart
	cp.Templates, cp.Files = nil, nil
	for _, t := range lc.chart.Templates {
		if !onlyCRDs(rendered[lc.chart.Name()+"/"+t.Name]) {
			cp.Templates = append(cp.Templates, t)
		}
	}
	for _, f := range lc.chart.Files {
		if !strings.HasPrefix(f.Name, "crds/") {
			cp.Files = append(cp.Files, f)
		}
	}
	return &cp
}
