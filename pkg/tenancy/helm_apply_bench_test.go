package tenancy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"opctl.dev/opctl/internal/testcluster"
)

// BenchmarkHelmApply measures what one install of the sample chart costs
// the API server with Helm 3's client-side create and with Helm 4's
// server-side apply (the helm and helm4 CLIs testbin builds), in
// alternating rounds on one control plane: kube-apiserver CPU and
// requests per install, medians of the rounds. It answers whether
// moving the controller to the Helm 4 SDK would pay. make bench-helm-apply.
func BenchmarkHelmApply(b *testing.B) {
	c := testcluster.Require(b, cluster)
	ctx := context.Background()
	bin, err := testcluster.BinDir()
	if err != nil {
		b.Fatal(err)
	}
	chart := sampleChart(b, "", "0.1.0")
	const rounds, per = 5, 10
	type sample struct{ cpu, requests float64 }
	results := map[string][]sample{}
	for round := range rounds {
		for _, helm := range []string{"helm", "helm4"} {
			before, err := apiserverMetrics(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			cpu := processCPU()["kube-apiserver"]
			for i := range per {
				helmInstall(b, c, filepath.Join(bin, helm), chart, c.Namespace(b, fmt.Sprintf("%s-%d-%d", helm, round, i), nil))
			}
			after, err := apiserverMetrics(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			requests := sumSeries(after, isRequest) - sumSeries(before, isRequest)
			results[helm] = append(results[helm], sample{(processCPU()["kube-apiserver"] - cpu) / per, requests / per})
		}
	}
	fmt.Printf("\nHelm 3 create vs Helm 4 server-side apply: one install of the sample chart, medians of %d rounds of %d\n", rounds, per)
	for _, helm := range []string{"helm", "helm4"} {
		var cpus, reqs []float64
		for _, s := range results[helm] {
			cpus, reqs = append(cpus, s.cpu), append(reqs, s.requests)
		}
		fmt.Printf("  %-6s kube-apiserver CPU %.0f ms per install, %.0f API requests per install (rounds: %v ms)\n",
			helm, 1000*median(cpus), median(reqs), scaled(cpus, 1000))
		b.ReportMetric(1000*median(cpus), "ms-apiserver-cpu/"+helm)
	}
	b.ReportMetric(0, "ns/op")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func scaled(v []float64, f float64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x * f)
	}
	return out
}
