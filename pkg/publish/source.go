package publish

import (
	"context"
	"fmt"
	"os"

	"opctl.dev/opctl/pkg/packaging"
)

// packageSource runs opctl package on opts.Source into dir (a temporary
// directory on a dry run, which it returns), building and planning the
// manager's image on the way unless opts.SkipImage. Without a source it
// says why no image was built. cleanup removes what a dry run wrote.
func packageSource(ctx context.Context, t *target, dir string, opts *Options) (manager *imageArtifact, res *ImageResult, out string, cleanup func(), err error) {
	cleanup = func() {}
	if opts.Source == "" {
		return nil, &ImageResult{Skipped: "no source: give the project directory, or --source PROJECT with the packaged directory, to build the manager's image"}, dir, cleanup, nil
	}
	out = dir
	if opts.DryRun {
		if out, err = os.MkdirTemp("", "opctl-publish-"); err != nil {
			return nil, nil, "", cleanup, err
		}
		cleanup = func() { os.RemoveAll(out) }
	}
	popts := opts.Package
	popts.Out, popts.Progress = out, opts.Progress
	b := &managerBuilder{t: t, opts: opts}
	if opts.SkipImage {
		res = &ImageResult{Skipped: "--skip-image"}
	} else {
		popts.Builder = b
	}
	fmt.Fprintf(opts.Progress, "packaging %s into %s\n", opts.Source, out)
	if _, err := packaging.Package(ctx, opts.Source, popts); err != nil {
		cleanup()
		return nil, nil, "", func() {}, err
	}
	if b.artifact != nil {
		manager, res = b.artifact, b.result
	}
	return manager, res, out, cleanup, nil
}
