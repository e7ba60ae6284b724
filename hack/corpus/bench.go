package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
)

// benchRuns is how many times each command runs; medians are reported.
const benchRuns = 5

// benchLimit is the CPU ratio over which make bench-package fails.
const benchLimit = 1.3

// benchProjects are the projects make bench-package measures by default:
// a small go/v4 project, 4 MB of CRDs, and conversion webhooks whose CRDs
// go into a chart of their own.
var benchProjects = []string{"OT-CONTAINER-KIT/redis-operator", "ray-project/kuberay//ray-operator", "argoproj-labs/argocd-operator"}

// runBench measures, whole processes, the CPU (user+sys) of opctl package
// of each project, into a fresh --out, beside kubectl kustomize of the
// same overlay, in turn, and prints the medians and the median of the
// ratios run by run. It fails above benchLimit.
func runBench(ctx context.Context, projects []project, corpus, opctl, kubectl, work, only string) int {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "project\tkustomize cpu s\topctl package cpu s\tratio\n")
	failed := false
	for i, p := range projects {
		if only == "" && !slices.Contains(benchProjects, p.ID()) || only != "" && !strings.Contains(p.ID(), only) {
			continue
		}
		dir := filepath.Join(work, fmt.Sprint(i))
		src := filepath.Join(dir, "src")
		projDir := filepath.Join(src, p.Subdir)
		overlay := filepath.Join(projDir, p.Overlay)
		if _, err := reference(corpus, p, src, overlay); err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%v\n", p.ID(), oneLine(err.Error()))
			failed = true
			continue
		}
		var ref, got, ratios []float64
		var err error
		for run := range benchRuns + 1 { // the first run warms the file cache
			var k, o float64
			if k, err = cpuOf(ctx, kubectl, "kustomize", overlay); err != nil {
				break
			}
			out := filepath.Join(dir, fmt.Sprintf("out%d", run))
			args := []string{"package", projDir, "--out", out}
			if p.Overlay != "config/default" {
				args = append(args, "--overlay", p.Overlay)
			}
			if o, err = cpuOf(ctx, opctl, args...); err != nil {
				break
			}
			_ = os.RemoveAll(out)
			if run > 0 {
				ref, got, ratios = append(ref, k), append(got, o), append(ratios, o/k)
			}
		}
		if err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%v\n", p.ID(), oneLine(err.Error()))
			failed = true
			continue
		}
		r := median(ratios)
		failed = failed || r > benchLimit
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.2f×\n", p.ID(), median(ref), median(got), r)
		_ = os.RemoveAll(dir)
	}
	tw.Flush()
	fmt.Printf("medians of %d runs each; ratio: the median of opctl's CPU over kustomize's, run by run; the limit is %.1f×\n", benchRuns, benchLimit)
	if failed {
		return 1
	}
	return 0
}

// cpuOf runs a command and returns the user and system CPU seconds of it
// and its children.
func cpuOf(ctx context.Context, name string, args ...string) (float64, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), nil
}

// median is the middle value of xs (the mean of the two middle ones).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
