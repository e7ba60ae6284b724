package publish

import (
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// imageLayer is one layer of an image: files placed under Dir, and the
// Dockerfile step that would have made it (kept in the history).
type imageLayer struct {
	Dir       string
	Files     []file
	CreatedBy string
}

// buildImage assembles a linux/amd64 OCI image FROM scratch with the given
// labels (also set as manifest annotations, as operator-registry reads
// either) and layers. The same input gives the same digest.
func buildImage(labels map[string]string, layers []imageLayer, created time.Time) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		layer, err := newLayer(l.Dir, l.Files, created)
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     layer,
			MediaType: types.OCILayer,
			History:   v1.History{CreatedBy: l.CreatedBy, Created: v1.Time{Time: created}},
		})
		if err != nil {
			return nil, fmt.Errorf("adding layer %s: %w", l.Dir, err)
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Created = v1.Time{Time: created}
	cfg.Config.Labels = labels
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("setting image config: %w", err)
	}
	annotated, ok := mutate.Annotations(img, labels).(v1.Image)
	if !ok {
		return nil, fmt.Errorf("annotating image: unexpected type")
	}
	return annotated, nil
}
