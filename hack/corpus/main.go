// Command corpus runs opctl package, and every check that must hold after
// it, on a corpus of public operator projects (hack/corpus/projects.txt):
//
//	make corpus CORPUS=<folder of local clones> [INSTALL=1]
//
// The folder holds one clone per repository, as <owner>+<name>/ (a bare
// git directory, or one holding repo/ or .git/) or <owner>/<name>/. For
// each project the runner archives, at the pinned commit, only what a
// package reads, builds the overlay with krusty as the reference, and
// then checks: opctl package; helm lint --strict with Helm 3 and Helm 4;
// helm template with a 53-character release name and every name and label
// within its limit; opctl validate; a second package byte-identical to the
// first; and nothing dropped: every object of the kustomize build is in
// the chart's rendering and in the bundle, or a warning names it. With
// INSTALL=1 every chart is installed into two namespaces of a fresh test
// control plane, and the main chart is given to two Tenants of the
// tenancy controller installed from charts/opctl on another (tenantlive.go).
// Input the corpus cannot give (a missing clone, commit or
// file, a remote base) is reported as input incomplete, apart from
// opctl's own failures. One row a project, then a summary line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"opctl.dev/opctl/internal/testcluster"
)

// release is the longest release name Helm allows: 53 characters.
var release = "corpus-" + strings.Repeat("x", 53-len("corpus-"))

func main() {
	list := flag.String("list", "hack/corpus/projects.txt", "the corpus list")
	corpus := flag.String("corpus", os.Getenv("CORPUS"), "folder of local clones (default $CORPUS)")
	opctl := flag.String("opctl", "bin/opctl", "the opctl binary")
	platformChart := flag.String("platform-chart", "charts/opctl", "the tenancy controller's chart, which the live tenant step installs (-install)")
	installFlag := flag.Bool("install", os.Getenv("INSTALL") == "1", "install every chart into two namespaces of a test control plane (default $INSTALL=1)")
	only := flag.String("only", "", "run only the projects whose ID contains this text")
	keep := flag.Bool("keep", false, "keep the work folder and print it")
	bench := flag.Bool("bench", false, "measure the CPU of opctl package beside kubectl kustomize on "+strings.Join(benchProjects, ", ")+" (or those -only selects) instead of checking")
	flag.Parse()
	if *corpus == "" {
		fmt.Println("corpus: skipped: set CORPUS to a folder of local clones of the projects in " + *list + " (see the comment at the top of hack/corpus/main.go)")
		return
	}
	if *bench {
		os.Exit(benchCorpus(*list, *corpus, *opctl, *only))
	}
	os.Exit(runCorpus(*list, *corpus, tools{opctl: abs(*opctl), platformChart: abs(*platformChart)}, *only, *installFlag, *keep))
}

// prepare reads the list and makes a work folder, for a run or a bench.
func prepare(list, prefix string) (projects []project, bin, work string, err error) {
	if projects, err = readList(list); err != nil {
		return nil, "", "", err
	}
	if bin, err = testcluster.BinDir(); err != nil {
		return nil, "", "", err
	}
	work, err = os.MkdirTemp("", prefix)
	return projects, bin, work, err
}

func runCorpus(list, corpus string, tools tools, only string, doInstall, keep bool) int {
	projects, bin, work, err := prepare(list, "opctl-corpus-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		return 2
	}
	tools.helm3, tools.helm4 = filepath.Join(bin, "helm"), filepath.Join(bin, "helm4")
	if keep {
		fmt.Fprintln(os.Stderr, "corpus: work folder", work)
	} else {
		defer os.RemoveAll(work)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "project\tobjs\tpackage\tlint3\tlint4\tnames\tvalidate\trerun\tdropped\tinstall\tcheck\ttenant\tnowebhook\twarns\tnote")
	var sum summary
	for i, p := range projects {
		if only != "" && !strings.Contains(p.ID(), only) {
			continue
		}
		r := check(ctx, tools, corpus, filepath.Join(work, fmt.Sprint(i)), p, doInstall)
		sum.add(r)
		fmt.Fprintln(tw, r.row(p))
		tw.Flush()
		for _, d := range r.details {
			fmt.Println("    " + d)
		}
	}
	tw.Flush()
	fmt.Println(sum.String(doInstall))
	if sum.failed > 0 {
		return 1
	}
	return 0
}

func benchCorpus(list, corpus, opctl, only string) int {
	projects, bin, work, err := prepare(list, "opctl-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		return 2
	}
	defer os.RemoveAll(work)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return runBench(ctx, projects, corpus, abs(opctl), filepath.Join(bin, "kubectl"), work, only)
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
