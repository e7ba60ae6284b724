package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"opctl.dev/opctl/pkg/imagebuild"
	"opctl.dev/opctl/pkg/publish"
)

func newPublishCommand(g *GlobalOptions) *cobra.Command {
	var (
		opts          publish.Options
		passwordStdin bool
		out           string
		platforms     string
	)
	cmd := &cobra.Command{
		Use:   "publish [PROJECT_DIR | PACKAGE_OUT_DIR]",
		Short: "Build the manager image and push it, the bundle image, a file-based catalog and the chart to an OCI registry",
		Long: `publish ships an operator with no container engine. Given a project directory
(a PROJECT file, opctl.yaml or config/), or --source PROJECT, it first
packages the project into --out (default the project) and:
  - builds the manager's image from source: go build for each --platform
    (static, -trimpath), the program where the Deployment's command points,
    on scratch with a pinned CA bundle and user 65532 (or --base, resolved
    to a digest), one OCI index with an SPDX SBOM attached as a referrer,
    pushed as <registry>/<image name>:<version>; the chart, CSV and
    relatedImages then name it by digest.
Then it reads bundle/<name> and charts/<name> of the packaged directory
(PACKAGE_OUT_DIR, default .) and:
  - builds the bundle image (what bundle.Dockerfile builds) and pushes it as
    <registry>/<name>-bundle:v<version>;
  - adds the bundle to the file-based catalog in --catalog (created if
    missing), with upgrade edges from --replaces, --skips and --skip-range,
    checks the upgrade graph and pushes the catalog image as
    <registry>/<name>-catalog:<--catalog-tag>;
  - pushes the chart as oci://<registry>/charts/<name>:<version>.
Artifacts are reproducible. Republishing the same content is a no-op; a
published version with different content is refused unless --force. Nothing
is tagged and the catalog is not written until every check has passed.`,
		Example: `  opctl publish operators/sample --out out --registry localhost:5000/operators --catalog catalog
  opctl package operators/sample --out out
  opctl publish out --registry localhost:5000/operators --catalog catalog --skip-image
  opctl publish out --registry reg.example.com/ops --username ci --password-stdin <token`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(g.Output, FormatText, FormatJSON); err != nil {
				return err
			}
			batchGC()
			dir := dirArg(args)
			if opts.Source == "" && isProject(dir) {
				opts.Source = dir
			}
			if opts.Source != "" {
				if out != "" {
					dir = out
				} else if len(args) == 0 || opts.Source == dir {
					dir = opts.Source
				}
			}
			ps, err := imagebuild.ParsePlatforms(platforms)
			if err != nil {
				return err
			}
			opts.Platforms = ps
			if passwordStdin {
				pw, err := readPassword(cmd.InOrStdin())
				if err != nil {
					return err
				}
				opts.Password = pw
			}
			prog := newProgress(g, cmd.ErrOrStderr())
			opts.Progress = prog
			res, err := publish.Publish(cmd.Context(), dir, opts)
			if err != nil {
				return err
			}
			prog.Summary("published")
			if g.Output == FormatJSON {
				return printStructured(cmd.OutOrStdout(), FormatJSON, res)
			}
			writePublishText(cmd.OutOrStdout(), res)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Registry, "registry", "", "registry and path to push to: HOST[:PORT]/PATH (required)")
	f.StringVar(&opts.Name, "name", "", "package to publish when PACKAGE_OUT_DIR holds several")
	f.StringVar(&opts.CatalogDir, "catalog", "", "file-based catalog directory to add the bundle to (created if missing; keep it in git)")
	f.StringVar(&opts.CatalogTag, "catalog-tag", "latest", "tag of the catalog image")
	f.StringSliceVar(&opts.Channels, "channel", nil, "channels to add the bundle to (default: the bundle's channels)")
	f.StringVar(&opts.DefaultChannel, "default-channel", "", "default channel of the package (default: kept, or the bundle's)")
	f.StringVar(&opts.Replaces, "replaces", publish.ReplacesAuto, "upgrade edge: auto (each channel's head), none, or a bundle name")
	f.StringSliceVar(&opts.Skips, "skips", nil, "bundles the new one skips (default: the CSV's spec.skips)")
	f.StringVar(&opts.SkipRange, "skip-range", "", "versions the new bundle skips, like '<0.3.0' (default: the CSV's olm.skipRange)")
	f.BoolVar(&opts.ImageLess, "image-less", false, "write the catalog entry without an image, so OLM reads the bundle from the catalog")
	f.StringVar(&opts.ChartRepoDir, "chart-repo-dir", "", "also write the chart .tgz and index.yaml of a classic chart repository here")
	f.StringVar(&opts.ChartRepoURL, "chart-repo-url", "", "URL the --chart-repo-dir is served at (for index.yaml)")
	f.BoolVar(&opts.Insecure, "insecure", false, "allow plain HTTP and skip TLS verification")
	f.StringVar(&opts.CAFile, "ca-file", "", "PEM CA that signed the registry's TLS certificate")
	f.StringVar(&opts.Username, "username", "", "registry user (default: Docker and Helm credential stores)")
	f.BoolVar(&passwordStdin, "password-stdin", false, "read the registry password from stdin")
	f.BoolVar(&opts.DryRun, "dry-run", false, "show what would be pushed and changed; change nothing")
	f.BoolVar(&opts.Force, "force", false, "overwrite a published version whose content differs")
	f.StringVar(&opts.Source, "source", "", "operator project to package into PACKAGE_OUT_DIR and build the manager image of")
	f.StringVar(&out, "out", "", "where a project is packaged (default the project directory)")
	f.BoolVar(&opts.SkipImage, "skip-image", false, "package the project but build no manager image")
	f.StringVar(&opts.Base, "base", "", "image to build the manager on, resolved to a digest (default scratch with a CA bundle and user 65532)")
	f.StringVar(&platforms, "platform", "linux/amd64,linux/arm64", "platforms of the manager image")
	f.StringVar(&opts.CABundle, "ca-bundle", "", "PEM CA bundle for the scratch base (default the NSS roots pinned in go.sum)")
	_ = cmd.MarkFlagRequired("registry")
	return cmd
}

func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password from stdin: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", errors.New("--password-stdin: stdin is empty")
	}
	return pw, nil
}

func writePublishText(w io.Writer, res *publish.Result) {
	verb := "published"
	switch {
	case res.DryRun:
		verb = "dry run: would publish"
	case res.Unchanged():
		verb = "already published, nothing to do:"
	}
	fmt.Fprintf(w, "%s %s %s\n", verb, res.Bundle, res.Version)
	for _, a := range res.Artifacts {
		digest := a.Digest
		if digest == "" {
			digest = a.ContentDigest
		}
		fmt.Fprintf(w, "  %-8s %-16s %s %s\n", a.Kind, a.Action, a.Ref, digest)
	}
	if c := res.Catalog; c != nil {
		fmt.Fprintf(w, "  catalog  %-16s %s/%s (bundle %s, default channel %s)\n", c.Action, c.Dir, c.File, c.Bundle, c.DefaultChannel)
		for _, ch := range c.Changes {
			edge := "no replaces"
			if ch.Replaces != "" {
				edge = "replaces " + ch.Replaces
			}
			if len(ch.Skips) > 0 {
				edge += ", skips " + strings.Join(ch.Skips, ",")
			}
			if ch.SkipRange != "" {
				edge += ", skipRange " + ch.SkipRange
			}
			fmt.Fprintf(w, "    channel %s: + %s (%s)\n", ch.Channel, ch.Entry, edge)
		}
	}
	writeImageText(w, res.Image)
	if res.ChartIndex != "" {
		fmt.Fprintf(w, "  chart index %s\n", res.ChartIndex)
	}
}

func writeImageText(w io.Writer, im *publish.ImageResult) {
	switch {
	case im == nil:
		return
	case im.Skipped != "":
		fmt.Fprintf(w, "  image    skipped: %s\n", im.Skipped)
		return
	}
	base := "scratch (CA bundle " + im.CADigest + ")"
	if im.Base != "" {
		base = im.Base + " (" + im.BaseDigest + ")"
	}
	fmt.Fprintf(w, "  image    %s from %s (%s) for %s on %s, %s, %d modules\n", im.Binary, im.Main, im.MainFrom, strings.Join(im.Platforms, ","), base, im.GoVersion, im.Modules)
	fmt.Fprintf(w, "  sbom     %s\n", im.SBOM)
}

// isProject reports whether dir is an operator project rather than the
// output of opctl package: a PROJECT file, opctl.yaml or config/.
func isProject(dir string) bool {
	for _, f := range []string{"PROJECT", "opctl.yaml", "config"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}
