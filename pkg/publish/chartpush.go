package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/registry"
)

// chartPlan is the chart archive and what publish will do with its tag.
type chartPlan struct {
	Artifact
	archive *chartArchive
	ref     string // host/path/charts/name:version, as Helm wants it
}

// planChart packages the chart and compares it with the tag's chart layer.
func (t *target) planChart(ctx context.Context, dir string, opts Options) (*chartPlan, error) {
	ch, err := packChart(dir, opts.Created)
	if err != nil {
		return nil, err
	}
	repo := t.Repo("charts/" + ch.Name)
	p := &chartPlan{archive: ch, ref: repo + ":" + ch.Version, Artifact: Artifact{
		Kind: "chart", Ref: "oci://" + repo + ":" + ch.Version, ContentDigest: ch.Digest, Size: int64(len(ch.Data)),
	}}
	// OCI tags cannot hold "+": Helm stores SemVer build metadata as "_".
	ref := repo + ":" + strings.ReplaceAll(ch.Version, "+", "_")
	tag, err := name.NewTag(ref, t.nameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("chart reference %s: %w", ref, err)
	}
	have, err := t.head(ctx, tag)
	if err != nil {
		return nil, err
	}
	if have == nil {
		p.Action = ActionPushed
		return p, nil
	}
	layer, err := t.chartLayer(ctx, tag)
	if err != nil {
		return nil, err
	}
	switch {
	case layer == ch.Digest:
		p.Action, p.Digest = ActionUnchanged, have.Digest.String()
	case !opts.Force:
		return nil, fmt.Errorf("chart %s is already published with different content (chart layer %s, this build is %s): publish a new version, or pass --force to overwrite it", p.Ref, layer, ch.Digest)
	default:
		p.Action = ActionForced
	}
	return p, nil
}

// chartLayer returns the digest of the chart layer the tag points at.
func (t *target) chartLayer(ctx context.Context, tag name.Tag) (string, error) {
	desc, err := remote.Get(tag, t.remoteOptions(ctx)...)
	if err != nil {
		return "", t.registryError(err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		return "", fmt.Errorf("reading the manifest of %s: %w", tag, err)
	}
	for _, l := range m.Layers {
		if string(l.MediaType) == registry.ChartLayerMediaType {
			return l.Digest.String(), nil
		}
	}
	return "", fmt.Errorf("%s is not a Helm chart (no %s layer): pick another --registry path", tag, registry.ChartLayerMediaType)
}

// push uploads the chart with Helm's registry client.
func (p *chartPlan) push(t *target, opts Options, step stepFunc) error {
	if p.Action == ActionUnchanged {
		return nil
	}
	if opts.DryRun {
		p.Action = dryAction(p.Action)
		return nil
	}
	copts := []registry.ClientOption{registry.ClientOptWriter(io.Discard)}
	if t.PlainHTTP {
		copts = append(copts, registry.ClientOptPlainHTTP())
	} else {
		copts = append(copts, registry.ClientOptHTTPClient(&http.Client{Transport: t.Transport}))
	}
	if t.Username != "" {
		copts = append(copts, registry.ClientOptBasicAuth(t.Username, t.Password))
	}
	client, err := registry.NewClient(copts...)
	if err != nil {
		return fmt.Errorf("creating the Helm registry client: %w", err)
	}
	step("pushing the chart %s (%s)", p.Ref, size(p.Size))
	res, err := client.Push(p.archive.Data, p.ref, registry.PushOptCreationTime(opts.Created.UTC().Format(time.RFC3339)))
	if err != nil {
		return fmt.Errorf("pushing chart %s: %w", p.Ref, t.registryError(err))
	}
	p.Digest = res.Manifest.Digest
	return nil
}
