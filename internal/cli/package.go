package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"opctl.dev/opctl/pkg/packaging"
)

func newPackageCommand(g *GlobalOptions) *cobra.Command {
	var (
		opts packaging.PackageOptions
		// only holds each target's --<target>-only flag.
		only = map[string]*bool{}
	)
	cmd := &cobra.Command{
		Use:   "package [PROJECT_DIR]",
		Short: "Turn an operator project into a Helm chart and an OLM bundle",
		Long: `package builds the project's kustomize overlay (config/default) and writes
charts/<name> (a Helm chart) and bundle/<name> (an OLM registry+v1 bundle)
under --out, through a temporary directory: a failure leaves earlier output
untouched. Overrides come from opctl.yaml in the project, which opctl never
writes. The same input always gives byte-identical output.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(g.Output, FormatText, FormatJSON); err != nil {
				return err
			}
			batchGC()
			dir := dirArg(args)
			for name, set := range only { // exclusive: at most one is set
				if *set {
					opts.Targets = []string{name}
				}
			}
			var prog *progress
			if opts.PinDigests { // registries make it slow enough to follow
				prog = newProgress(g, cmd.ErrOrStderr())
				opts.Progress = prog
			}
			res, err := packaging.Package(cmd.Context(), dir, opts)
			if err != nil {
				return err
			}
			if prog != nil {
				prog.Summary("packaged")
			}
			if g.Output == FormatJSON {
				return printStructured(cmd.OutOrStdout(), FormatJSON, res)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "packaged %s %s: %d files in %s\n", res.Name, res.Version, len(res.Files), strings.Join(res.Roots, ", "))
			for _, img := range res.RelatedImages {
				fmt.Fprintf(out, "  related image %s: %s\n", img.Name, img.Image)
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Load.Overlay, "overlay", "config/default", "kustomize overlay of the project, relative to PROJECT_DIR")
	f.StringVar(&opts.Out, "out", "", "directory that receives charts/<name> and bundle/<name> (default PROJECT_DIR)")
	f.StringVar(&opts.Load.Name, "name", "", "package name (default: opctl.yaml name, the base CSV's, the PROJECT file's projectName, the directory)")
	f.StringVar(&opts.Load.Version, "version", "", "package version, SemVer (default: opctl.yaml version, the base CSV's, the Makefile's VERSION, else 0.1.0)")
	f.StringVar(&opts.Load.Image, "image", "", "operator image (default: the Makefile's IMG, else the manager Deployment's)")
	f.StringVar(&opts.Load.Manager, "manager", "", "name of the manager Deployment when the overlay has several")
	f.BoolVar(&opts.PinDigests, "pin-digests", false, "replace image tags with digests resolved from the registries (uses ~/.docker/config.json credentials)")
	f.StringSliceVar(&opts.Targets, "targets", nil, "outputs to write: "+strings.Join(packaging.TargetNames(), ", ")+" (default: all)")
	f.BoolVar(&opts.Strict, "strict", false, "treat every warning as an error and write nothing (for CI)")
	addTargetFlags(cmd, &opts, only)
	return cmd
}

// addTargetFlags adds each registered target's own flags and its
// --<target>-only flag, exclusive with the others and with --targets.
func addTargetFlags(cmd *cobra.Command, opts *packaging.PackageOptions, only map[string]*bool) {
	var exclusive []string
	for _, t := range packaging.Targets() {
		opts.For(t.Name()).AddFlags(cmd.Flags())
		only[t.Name()] = new(bool)
		flag := t.Name() + "-only"
		cmd.Flags().BoolVar(only[t.Name()], flag, false, "write only "+t.Description()+" (--targets "+t.Name()+")")
		exclusive = append(exclusive, flag)
	}
	cmd.MarkFlagsMutuallyExclusive(append(exclusive, "targets")...)
}
