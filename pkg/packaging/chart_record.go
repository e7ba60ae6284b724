package packaging

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
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
	var bf []*loader.BufferedFile
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if strings.HasPrefix(p, dir) && !yield(p) {
				return
			}
		}
	}) {
		bf = append(bf, &loader.BufferedFile{Name: strings.TrimPrefix(path, dir), Data: files[path]})
	}
	ch, err := loader.LoadFiles(bf)
	if err != nil {
		return 0, err
	}
	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.ClientOnly, inst.DryRun, inst.ReleaseName, inst.Namespace = true, true, recordRelease, "default"
	inst.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.0", Major: "1", Minor: "36"}
	vals := map[string]any{}
	if _, ok := ch.Values["conversion"]; ok {
		// A CRD chart of converted CRDs: the longest release to name and a
		// CA as large as Helm's (a lookup finds nothing here).
		vals["conversion"] = map[string]any{"release": recordRelease, "caBundle": strings.Repeat("Q", 1600)}
	}
	rel, err := inst.Run(ch, vals)
	if err != nil {
		return 0, fmt.Errorf("rendering %s: %w", dir, err)
	}
	b, err := json.Marshal(rel)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
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
// it. A CRD too large for a chart of its own is an error.
func (p *Project) packCRDs(texts map[string][]byte) (map[string]int, error) {
	type item struct {
		name string
		cost int
	}
	budget := MaxReleaseRecordBytes * 4 / 5
	converted := p.conversionCRDs()
	var plain, conv []item
	for _, c := range p.CRDs {
		text, err := crdTemplateText(texts[c.Name])
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: %w", c.Name, err)
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
				return nil, fmt.Errorf("CustomResourceDefinition %s: %w", c.Name, err)
			}
			if n > MaxReleaseRecordBytes-recordHeadroom {
				return nil, fmt.Errorf("CustomResourceDefinition %s alone would make a Helm release record of %d bytes (%d with a CRD chart's own files)", c.Name, n, n+recordHeadroom)
			}
			cost = budget
		}
		if slices.Contains(converted, c) {
			conv = append(conv, item{c.Name, cost})
		} else {
			plain = append(plain, item{c.Name, cost})
		}
	}
	out := map[string]int{}
	first := 0
	for _, items := range [][]item{plain, conv} {
		slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(b.cost, a.cost) })
		var bins []int
		for _, it := range items {
			i := slices.IndexFunc(bins, func(used int) bool { return used+it.cost <= budget })
			if i < 0 {
				bins, i = append(bins, 0), len(bins)
			}
			bins[i] += it.cost
			out[it.name] = first + i
		}
		first += len(bins)
	}
	return out, nil
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
