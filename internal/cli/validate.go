package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"opctl.dev/opctl/internal/version"
	"opctl.dev/opctl/pkg/validate"
)

func newValidateCommand(g *GlobalOptions) *cobra.Command {
	var (
		kind, failOn, outputFile string
		opts                     validate.Options
	)
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check OLM bundles, Helm charts and operator projects; the CI gate",
		Long: `validate runs the operator-framework validators and opctl's own checks on
bundles, Helm's strict lint and workload checks on charts, and both on an
operator project (packaged in memory). Every finding has a check ID (see
docs/checks.md). Exit codes: 0 clean, 1 findings at or above --fail-on,
2 unusable input.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(g.Output, FormatText, FormatJSON, formatSARIF, formatJUnit); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			min := validate.Severity(failOn)
			if min != validate.SeverityError && min != validate.SeverityWarning {
				return &ExitError{Code: 2, Err: fmt.Errorf("--fail-on %q: use error or warning", failOn)}
			}
			batchGC()
			var reports []*validate.Report
			for _, path := range args {
				rs, err := validate.Validate(cmd.Context(), path, kind, opts)
				if err != nil {
					return &ExitError{Code: 2, Err: err}
				}
				reports = append(reports, rs...)
			}
			out := cmd.OutOrStdout()
			if outputFile != "" {
				f, err := os.Create(outputFile)
				if err != nil {
					return &ExitError{Code: 2, Err: err}
				}
				defer f.Close()
				out = f
			}
			if err := write(out, g.Output, reports); err != nil {
				return err
			}
			for _, r := range reports {
				if r.Fails(min) {
					return &ExitError{Code: 1}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kind, "kind", validate.KindAuto, "what PATH is: auto, bundle, chart, catalog or project")
	f.StringVar(&opts.K8sVersion, "k8s-version", "1.36", "Kubernetes version to check deprecated APIs against")
	f.StringVar(&opts.Suite, "suite", validate.SuiteDefault, "checks to run: default, operatorhub (adds OperatorHubV2, StandardCapabilities, StandardCategories), maturity (grades only) or all")
	f.StringVar(&failOn, "fail-on", "error", "lowest severity that fails the run: error or warning")
	f.StringVar(&outputFile, "output-file", "", "write the report to this file instead of stdout")
	return cmd
}

// Report formats only validate speaks.
const (
	formatSARIF = "sarif"
	formatJUnit = "junit"
)

func write(w io.Writer, format string, reports []*validate.Report) error {
	switch format {
	case FormatJSON:
		return validate.WriteJSON(w, reports)
	case FormatText:
		return validate.WriteText(w, reports, isTerminal(w))
	case formatSARIF:
		return validate.WriteSARIF(w, reports, version.Get().Version)
	case formatJUnit:
		return validate.WriteJUnit(w, reports)
	}
	return errors.New("unreachable output format " + format)
}
