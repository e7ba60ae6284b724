package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Streams are the standard streams a command reads and writes.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// NewRootCommand returns the opctl command tree.
func NewRootCommand(streams Streams) *cobra.Command {
	g := &GlobalOptions{}
	root := &cobra.Command{
		Use:   "opctl",
		Short: "Package, validate, publish and multi-tenant Kubernetes operators",
		Long: `opctl turns a kubebuilder/operator-sdk project into a Helm chart and an OLM
bundle, validates and grades them, publishes them to an OCI registry, and
runs a tenancy controller that gives every tenant its own operator instances.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.complete(cmd)
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	g.AddFlags(root.PersistentFlags())
	root.AddCommand(newVersionCommand(g), newPackageCommand(g), newValidateCommand(g), newPublishCommand(g), newTenancyCommand(g), newKitCommand())
	return root
}

// Execute runs opctl with args and returns the process exit code. Errors are
// printed as a single line on streams.Err. Each onRun function is called
// once a command is about to run, after its flags parsed, and not when
// opctl only prints help or a usage error: main turns the garbage
// collector back on there, so printing help never starts a collection.
func Execute(ctx context.Context, streams Streams, args []string, onRun ...func()) int {
	root := NewRootCommand(streams)
	if len(onRun) > 0 {
		pre := root.PersistentPreRunE
		root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
			for _, f := range onRun {
				f()
			}
			return pre(cmd, args)
		}
	}
	return execute(ctx, root, streams.Err, args)
}

func execute(ctx context.Context, root *cobra.Command, stderr io.Writer, args []string) int {
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := 1
	var exit *ExitError
	if errors.As(err, &exit) {
		code = exit.Code
		if exit.Err == nil {
			return code
		}
	}
	fmt.Fprintf(stderr, "Error: %v\n", err)
	return code
}
