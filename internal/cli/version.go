package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"opctl.dev/opctl/internal/version"
)

func newVersionCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the opctl version, commit, and Go and Kubernetes library versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(g.Output, FormatText, FormatJSON, FormatYAML); err != nil {
				return err
			}
			info := version.Get()
			if g.Output != FormatText {
				return printStructured(cmd.OutOrStdout(), g.Output, info)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			commit := info.Commit
			if commit == "" {
				commit = "unknown"
			}
			fmt.Fprintf(tw, "opctl\t%s\n", info.Version)
			fmt.Fprintf(tw, "commit\t%s\n", commit)
			fmt.Fprintf(tw, "go\t%s %s\n", info.GoVersion, info.Platform)
			if info.Kubernetes != "" {
				fmt.Fprintf(tw, "kubernetes\t%s\n", info.Kubernetes)
			}
			for _, l := range info.Libraries {
				fmt.Fprintf(tw, "%s\t%s\n", l.Path, l.Version)
			}
			return tw.Flush()
		},
	}
}
