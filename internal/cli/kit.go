package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"opctl.dev/opctl/pkg/kit"
)

// kitOptions are the flags every kit command shares.
type kitOptions struct {
	dir string
}

func newKitCommand() *cobra.Command {
	o := &kitOptions{}
	cmd := &cobra.Command{
		Use:   "kit",
		Short: "Scaffold operators on operatorkit and keep their generated code current",
		Long: `opctl kit scaffolds an operator module on operatorkit (kit init), adds kinds
(kit create api) and resources (kit create resource), and regenerates what it
owns (kit generate). Generated files (zz_generated.*, PROJECT, kit.yaml, CRDs,
RBAC) are rewritten; files you own (types, handlers, resources, main, config
overlays) are written once and never again: every run lists what it skipped.`,
	}
	cmd.PersistentFlags().StringVar(&o.dir, "dir", ".", "the project's directory")
	create := &cobra.Command{Use: "create", Short: "Add a kind or a resource to the project"}
	create.AddCommand(newKitCreateAPICommand(o), newKitCreateResourceCommand(o))
	cmd.AddCommand(newKitInitCommand(o), create, newKitGenerateCommand(o))
	return cmd
}

func newKitInitCommand(o *kitOptions) *cobra.Command {
	var name, repo, domain, opctlPath string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Scaffold an operator project in --dir",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := os.MkdirAll(o.dir, 0o755); err != nil {
				return err
			}
			p, err := kit.Init(o.dir, name, repo, domain, opctlPath)
			if err != nil {
				return err
			}
			return generate(cmd.OutOrStdout(), o.dir, p)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the operator's name (default: the last element of --repo)")
	cmd.Flags().StringVar(&repo, "repo", "", "the project's Go module path (default inside the opctl module: its import path)")
	cmd.Flags().StringVar(&domain, "domain", "", "the domain of the API groups, such as example.com")
	cmd.Flags().StringVar(&opctlPath, "opctl-path", "", "an opctl checkout, relative to --dir or absolute, that go.mod replaces opctl.dev/opctl with (not needed inside the opctl module)")
	_ = cmd.MarkFlagRequired("domain")
	return cmd
}

func newKitCreateAPICommand(o *kitOptions) *cobra.Command {
	var k kit.Kind
	cmd := &cobra.Command{
		Use:   "api",
		Short: "Add a kind: its API types, handler, sample and reconciler registration",
		Args:  cobra.NoArgs,
		RunE:  o.update(func(p *kit.Project) error { return p.AddKind(k) }),
	}
	cmd.Flags().StringVar(&k.Group, "group", "", "the API group, without the domain, such as cache")
	cmd.Flags().StringVar(&k.Version, "version", "v1alpha1", "the API version")
	cmd.Flags().StringVar(&k.Kind, "kind", "", "the kind, such as Memcached")
	_ = cmd.MarkFlagRequired("group")
	_ = cmd.MarkFlagRequired("kind")
	return cmd
}

func newKitCreateResourceCommand(o *kitOptions) *cobra.Command {
	var forKind string
	var r kit.Resource
	cmd := &cobra.Command{
		Use:   "resource",
		Short: "Add a resource to a kind: a file with its three methods to fill, registered in the kind's handler",
		Args:  cobra.NoArgs,
		RunE:  o.update(func(p *kit.Project) error { return p.AddResource(forKind, r) }),
	}
	cmd.Flags().StringVar(&forKind, "for", "", "the kind that owns the resource")
	cmd.Flags().StringVar(&r.Kind, "kind", "", fmt.Sprintf("the resource's kind: %v", kit.ResourceKinds))
	cmd.Flags().StringVar(&r.Name, "name", "", "the resource's name, a DNS label: the object is named <owner>-<name>")
	for _, f := range []string{"for", "kind", "name"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

func newKitGenerateCommand(o *kitOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "generate",
		Short: "Regenerate the generated files from kit.yaml and the markers",
		Args:  cobra.NoArgs,
		RunE:  o.update(func(*kit.Project) error { return nil }),
	}
}

// update loads the project, changes it and regenerates it.
func (o *kitOptions) update(change func(*kit.Project) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		p, err := kit.Load(o.dir)
		if err != nil {
			return err
		}
		if err := change(p); err != nil {
			return err
		}
		return generate(cmd.OutOrStdout(), o.dir, p)
	}
}

// generate runs the generator and prints its report.
func generate(w io.Writer, dir string, p *kit.Project) error {
	rep, err := kit.Generate(dir, p)
	for _, f := range rep.Written {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
	for _, f := range rep.Skipped {
		fmt.Fprintf(w, "skipped %s (yours: exists, left as it is)\n", f)
	}
	return err
}
