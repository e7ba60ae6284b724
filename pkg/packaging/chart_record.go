package packaging

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"

	"opctl.dev/opctl/pkg/packaging/contract"
)

// MaxReleaseRecordBytes is the most a Helm release record holds: Helm
// stores a release (the chart's files and the rendered manifest, gzipped
// and base64-encoded) in one Secret, whose data the API server caps at
// 1 MiB. Templated CRDs count twice, as chart files and in the manifest.
const MaxReleaseRecordBytes = 1 << 20

// recordCheckBytes is the CRD text under which no measure is needed: twice
// that, with the rest of a chart, compresses far below the cap.
const recordCheckBytes = 256 << 10

// recordHeadroom is what a CRD chart adds to the record of its CRD alone
// (metadata, README, values, the conversion wiring), and then some.
const recordHeadroom = 16 << 10

// recordRelease is the longest release name, which makes the largest
// manifest.
var recordRelease = strings.Repeat("r", 53)

// releaseRecordBytes measures the release record that installing the chart
// under dir in files would make, as Helm's Secret driver encodes it.
func releaseRecordBytes(files Files, dir string) (int, error) {
	return new(recorder).size(files, dir)
}

// recorder measures release records. The record is built as Helm builds
// it (the loaded chart, its manifest rendered by Helm's engine, not sorted,
// with stand-in certificates: withStandInCerts) and compressed at gzip's
// default level, which compresses less than Helm's best (a record with
// random certificates may come out a few bytes under Helm's). A record
// from a percent under the cap to recordBand over it is compressed again
// at the best level, and one within a percent of the cap is made by a
// dry-run install, exactly as Helm stores it.
type recorder struct {
	// renders are the manifests rendered by the engine, by the digest of
	// what they were rendered from: the layouts tried share all but
	// their CRDs, and rendering runs the chart's certificate generation.
	renders map[[sha256.Size]byte]string
}

// size measures the record of the chart under dir in files.
func (r *recorder) size(files Files, dir string) (int, error) {
	ch, err := loader.LoadFiles(chartFiles(files, dir))
	if err != nil {
		return 0, err
	}
	manifest, err := r.manifest(ch, dir)
	if err != nil {
		return 0, err
	}
	model := &release.Release{Name: recordRelease, Namespace: "default", Chart: ch, Config: recordValues(ch),
		Info: &release.Info{Status: release.StatusDeployed, Description: "Install complete"}, Manifest: manifest, Version: 1}
	n, err := encodedRecordBytes(model, gzip.DefaultCompression)
	if err != nil || n <= MaxReleaseRecordBytes*99/100 || n > MaxReleaseRecordBytes*recordBand/100 {
		return n, err
	}
	if n, err = encodedRecordBytes(model, gzip.BestCompression); err != nil || n < MaxReleaseRecordBytes*99/100 || n > MaxReleaseRecordBytes*101/100 {
		return n, err
	}
	return helmRecordBytes(ch, dir)
}

// helmRecordBytes is the size of the record of ch that Helm makes and
// stores: a dry-run install, compressed at the best level.
func helmRecordBytes(ch *chart.Chart, dir string) (int, error) {
	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.ClientOnly, inst.DryRun, inst.ReleaseName, inst.Namespace = true, true, recordRelease, "default"
	inst.KubeVersion = &recordCapabilities().KubeVersion
	rel, err := inst.Run(ch, recordValues(ch))
	if err != nil {
		return 0, fmt.Errorf("rendering %s: %w", dir, err)
	}
	return encodedRecordBytes(rel, gzip.BestCompression)
}

// manifest is the manifest of ch, as Helm would render it but for order.
// A CRD template's text stands for its rendering, which differs only in
// the condition around it; the rest is rendered by Helm's engine, once
// for each content.
func (r *recorder) manifest(ch *chart.Chart, dir string) (string, error) {
	var b strings.Builder
	rest := *ch
	rest.Templates = nil
	h := sha256.New()
	for _, f := range ch.Raw {
		// What renders: the chart's templates never read its other
		// files (crds/, the README).
		if f.Name == "Chart.yaml" || f.Name == "values.yaml" || strings.HasPrefix(f.Name, "templates/") && !plainCRDTemplate(f.Name, f.Data) {
			fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(f.Data))
			h.Write(f.Data)
		}
	}
	for _, t := range ch.Templates {
		if plainCRDTemplate(t.Name, t.Data) {
			fmt.Fprintf(&b, "---\n# Source: %s/%s\n%s\n", ch.Name(), t.Name, t.Data)
		} else {
			rest.Templates = append(rest.Templates, t)
		}
	}
	key := [sha256.Size]byte(h.Sum(nil))
	text, ok := r.renders[key]
	if !ok {
		rest.Templates = withStandInCerts(rest.Templates)
		vals, err := chartutil.ToRenderValues(&rest, recordValues(ch), chartutil.ReleaseOptions{Name: recordRelease, Namespace: "default", Revision: 1, IsInstall: true}, recordCapabilities())
		if err != nil {
			return "", fmt.Errorf("rendering %s: %w", dir, err)
		}
		rendered, err := engine.Render(&rest, vals)
		if err != nil {
			return "", fmt.Errorf("rendering %s: %w", dir, err)
		}
		var m strings.Builder
		for _, name := range slices.Sorted(maps.Keys(rendered)) {
			if text := rendered[name]; strings.TrimSpace(text) != "" && !strings.HasSuffix(name, "NOTES.txt") {
				fmt.Fprintf(&m, "---\n# Source: %s\n%s\n", name, text)
			}
		}
		text = m.String()
		if r.renders == nil {
			r.renders = map[[sha256.Size]byte]string{}
		}
		r.renders[key] = text
	}
	return text + b.String(), nil
}

// recordBand is the percentage of the cap up to which a record over it at
// gzip's default level is compressed again at the best level, which saves
// 1.5 to 6.5 percent on charts' YAML (kuberay's, argocd-operator's).
const recordBand = 115

// plainCRDTemplate reports whether a template is a CRD that crdTemplateText
// made, whose text stands for its rendering.
func plainCRDTemplate(name string, data []byte) bool {
	return strings.HasPrefix(name, "templates/crds/") && bytes.HasPrefix(data, []byte(crdInstallCondition))
}

// recordValues are the values a record is measured with: what the chart
// requires (contract.RequiredValues), as long as an image reference by
// digest, and for a CRD chart of converted CRDs the longest release to
// name and a CA as large as Helm's (a lookup finds nothing here).
func recordValues(ch *chart.Chart) map[string]any {
	vals := contract.StandIns(ch.Metadata.Annotations[contract.RequiredValues], func(string) any { return strings.Repeat("q", 100) })
	if _, ok := ch.Values["conversion"]; ok {
		vals["conversion"] = map[string]any{"release": recordRelease, "caBundle": strings.Repeat("Q", 1600)}
	}
	return vals
}

// recordCapabilities is the cluster the record is rendered for.
func recordCapabilities() *chartutil.Capabilities {
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.36.0", Major: "1", Minor: "36"}
	return caps
}

// chartFiles are the files of the chart under dir, in order.
func chartFiles(files Files, dir string) []*loader.BufferedFile {
	var bf []*loader.BufferedFile
	for _, path := range slices.Sorted(maps.Keys(files)) {
		if strings.HasPrefix(path, dir) {
			bf = append(bf, &loader.BufferedFile{Name: strings.TrimPrefix(path, dir), Data: files[path]})
		}
	}
	return bf
}

// encodedRecordBytes is the size of rel as Helm's Secret driver stores it
// (JSON, gzipped, base64), compressed at level.
func encodedRecordBytes(rel *release.Release, level int) (int, error) {
	b, err := json.Marshal(rel)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(b); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return base64.StdEncoding.EncodedLen(buf.Len()), nil
}

// recordEstimate is a fast, generous estimate of the release record: the
// chart's files base64-encoded (as the record's JSON holds them) and its
// templates once more for the manifest, gzipped at the fastest level,
// which compresses less than Helm's best. Within four fifths of the cap it
// leaves a wide margin for what rendering adds (names, labels).
func recordEstimate(files Files, dir string) int {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	enc := base64.NewEncoder(base64.StdEncoding, w)
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if strings.HasPrefix(p, dir) && !yield(p) {
				return
			}
		}
	}) {
		_, _ = enc.Write(files[path])
		if strings.HasPrefix(path, dir+"templates/") {
			_, _ = w.Write(files[path])
		}
	}
	_ = enc.Close()
	_ = w.Close()
	return base64.StdEncoding.EncodedLen(buf.Len())
}

// crdTextBytes is the size of the project's rendered CRDs.
func crdTextBytes(texts map[string][]byte) int {
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	return n
}

// crdsPacked is the layout opctl chooses when the CRDs fit in no single
// record: separate-chart, with the CRDs packed into several CRD charts.
const crdsPacked = "separate-charts"

// crdChartDir is the directory of CRD chart i: <name>-crds, then
// <name>-crds-2 and on.
func crdChartDir(name string, i int) string {
	if i == 0 {
		return chartsDir + "/" + name + "-crds"
	}
	return fmt.Sprintf("%s/%s-crds-%d", chartsDir, name, i+1)
}

// crdChartDirs are the CRD charts in files, in order.
func crdChartDirs(files Files, name string) []string {
	var out []string
	for i := 0; ; i++ {
		d := crdChartDir(name, i)
		if _, ok := files[d+"/Chart.yaml"]; !ok {
			return out
		}
		out = append(out, d)
	}
}

// packCRDs puts each CRD into one of as few CRD charts as keep every
// record within four fifths of the cap, by the generous estimate of each
// CRD's templated text alone, largest first (first fit). CRDs a webhook
// converts go to charts of their own, after the others: those charts name
// the release whose webhook Service converts them, so they install after
// it. A CRD too large for a chart of its own is an error. measured are
// the charts that hold one CRD whose record was measured alone, with
// room for a CRD chart's own files: they fit without measuring again.
func (p *Project) packCRDs(texts map[string][]byte) (charts map[string]int, measured map[int]bool, err error) {
	type item struct {
		name string
		cost int
	}
	budget := MaxReleaseRecordBytes * 4 / 5
	converted := p.conversionCRDs()
	var plain, conv []item
	measuredAlone := map[string]bool{}
	for _, c := range p.CRDs {
		text, err := crdTemplateText(texts[c.Name])
		if err != nil {
			return nil, nil, fmt.Errorf("CustomResourceDefinition %s: %w", c.Name, err)
		}
		cost := recordEstimate(Files{"c/templates/crds/x.yaml": []byte(text)}, "c/")
		if cost > budget {
			// The estimate is generous: measure, and give a CRD that fits
			// a chart of its own.
			n, err := releaseRecordBytes(Files{
				"c/Chart.yaml":            []byte("apiVersion: v2\nname: " + p.Name + "-crds\nversion: 0.0.0\n"),
				"c/values.yaml":           []byte("crds: {install: true, keep: true}\n"),
				"c/templates/crds/x.yaml": []byte(text),
			}, "c/")
			if err != nil {
				return nil, nil, fmt.Errorf("CustomResourceDefinition %s: %w", c.Name, err)
			}
			if n > MaxReleaseRecordBytes-recordHeadroom {
				return nil, nil, fmt.Errorf("CustomResourceDefinition %s alone would make a Helm release record of %d bytes (%d with a CRD chart's own files)", c.Name, n, n+recordHeadroom)
			}
			cost, measuredAlone[c.Name] = budget, true
		}
		if slices.Contains(converted, c) {
			conv = append(conv, item{c.Name, cost})
		} else {
			plain = append(plain, item{c.Name, cost})
		}
	}
	out := map[string]int{}
	measured = map[int]bool{}
	first := 0
	for _, items := range [][]item{plain, conv} {
		slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(b.cost, a.cost) })
		var bins []int
		for _, it := range items {
			i := slices.IndexFunc(bins, func(used int) bool { return used+it.cost <= budget })
			if i < 0 {
				bins, i = append(bins, 0), len(bins)
			}
			// A measured CRD costs the whole budget: it is alone.
			measured[first+i] = it.cost == budget && bins[i] == 0 && measuredAlone[it.name]
			bins[i] += it.cost
			out[it.name] = first + i
		}
		first += len(bins)
	}
	return out, measured, nil
}

// conversionCharts are the indexes of the packed CRD charts that hold CRDs
// a webhook converts.
func (p *Project) conversionCharts(crdCharts map[string]int) map[int]bool {
	out := map[int]bool{}
	for _, c := range p.conversionCRDs() {
		if i, ok := crdCharts[c.Name]; ok {
			out[i] = true
		}
	}
	return out
}
