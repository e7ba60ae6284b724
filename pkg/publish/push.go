package publish

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// dryAction is what a dry run reports instead of action.
func dryAction(action string) string {
	switch action {
	case ActionPushed:
		return ActionWouldPush
	case ActionForced:
		return ActionWouldForce
	}
	return action
}

// push uploads the image by digest, leaving every tag alone.
func (a *imageArtifact) push(ctx context.Context, t *target, dryRun bool, step stepFunc) error {
	if a.Action == ActionUnchanged {
		return nil
	}
	if dryRun {
		a.Action = dryAction(a.Action)
		return nil
	}
	ref, err := name.NewDigest(a.digestRef(), t.nameOptions()...)
	if err != nil {
		return err
	}
	step("pushing the %s image %s (%s)", a.Kind, ref, size(a.Size))
	switch o := a.obj.(type) {
	case v1.ImageIndex:
		err = remote.WriteIndex(ref, o, t.remoteOptions(ctx)...)
	case v1.Image:
		err = remote.Write(ref, o, t.remoteOptions(ctx)...)
	default:
		err = fmt.Errorf("unexpected type %T", a.obj)
	}
	if err != nil {
		return fmt.Errorf("pushing %s image %s: %w", a.Kind, ref, t.registryError(err))
	}
	for _, r := range a.referrers {
		d, err := r.Digest()
		if err != nil {
			return err
		}
		at := ref.Context().Digest(d.String())
		step("pushing %s, which refers to %s", at, ref)
		if err := remote.Write(at, r, t.remoteOptions(ctx)...); err != nil {
			return fmt.Errorf("pushing the artifact %s that refers to %s: %w", at, ref, t.registryError(err))
		}
	}
	return nil
}

// tag points the tag at the pushed image.
func (a *imageArtifact) tag(ctx context.Context, t *target, dryRun bool) error {
	if dryRun || a.Action == ActionUnchanged {
		return nil
	}
	if err := remote.Tag(a.tagRef, a.obj, t.remoteOptions(ctx)...); err != nil {
		return fmt.Errorf("tagging %s: %w", a.tagRef, t.registryError(err))
	}
	return nil
}

// stepFunc reports one step of progress.
type stepFunc func(format string, args ...any)
