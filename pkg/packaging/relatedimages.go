package packaging

import (
	"fmt"
	"github.com/distribution/reference"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// RelatedImage is an image the operator may run, with a stable name.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// RelatedImages lists every image the package can run: the manager's
// containers and initContainers, its operand images (RELATED_IMAGE_* and
// *_IMAGE env values, --*image*= flags), and the
// images named in pod templates of extra objects and in the samples.
// Deduplicated by image (the first name wins) and sorted by name.
func (p *Project) RelatedImages() []RelatedImage {
	var out []RelatedImage
	seen := map[string]bool{}
	for _, img := range p.imageCandidates() {
		if img.Image == "" || seen[img.Image] || !ValidImage(img.Image) {
			continue
		}
		seen[img.Image] = true
		out = append(out, img)
	}
	slices.SortFunc(out, func(a, b RelatedImage) int { return strings.Compare(a.Name, b.Name) })
	return dedupeNames(out)
}

// imageCandidates are every image the package names, in the order
// RelatedImages prefers them, before deduplication and validation.
func (p *Project) imageCandidates() []RelatedImage {
	var out []RelatedImage
	add := func(name, image string) { out = append(out, RelatedImage{Name: imageName(name), Image: image}) }
	spec := p.Manager.Spec.Template.Spec
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		add(c.Name, c.Image)
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, img := range OperandImages(c) {
			add(img.Key, img.Image)
		}
	}
	for _, o := range p.Objects {
		walkImages(o.Object, func(container, image string) { add(strings.ToLower(o.GetKind()+"-"+o.GetName()+"-"+container), image) })
	}
	for _, s := range p.Samples {
		walkImages(s.Object, func(field, image string) { add(strings.ToLower(s.GetKind()+"-"+s.GetName()+"-"+field), image) })
	}
	return out
}

// ValidImage reports an image reference as OLM and container runtimes
// parse it; a placeholder such as "<your image>" is not one.
func ValidImage(image string) bool {
	_, err := reference.ParseNormalizedNamed(image)
	return err == nil
}

// imageWarnings name the images left out of relatedImages for not being
// image references.
func (p *Project) imageWarnings() []string {
	var out []string
	for _, img := range p.imageCandidates() {
		if img.Image != "" && !ValidImage(img.Image) && !hasPlaceholder(img.Image) { // placeholders: the chart's values, the bundle's warning
			out = append(out, fmt.Sprintf("image %q (%s) is not an image reference, so relatedImages leaves it out: it is a placeholder, or the project sets it at build time", img.Image, img.Name))
		}
	}
	return slices.Compact(out)
}

// walkImages calls f for every string field named "image" in v, with the
// sibling "name" field (the container) when there is one.
func walkImages(v any, f func(name, image string)) {
	switch t := v.(type) {
	case map[string]any:
		if img, ok := t["image"].(string); ok {
			name, _ := t["name"].(string)
			if name == "" {
				name = "image"
			}
			f(name, img)
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkImages(t[k], f)
		}
	case []any:
		for _, e := range t {
			walkImages(e, f)
		}
	}
}

// imageName makes a relatedImages name: lower case, '-' for '_'.
func imageName(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", "-"))
}

// dedupeNames suffixes repeated names with -2, -3 and so on.
func dedupeNames(in []RelatedImage) []RelatedImage {
	count := map[string]int{}
	for i := range in {
		count[in[i].Name]++
		if n := count[in[i].Name]; n > 1 {
			in[i].Name = in[i].Name + "-" + strconv.Itoa(n)
		}
	}
	return in
}

// managerContainer is the container named "manager", else the first one.
func managerContainer(d *appsv1.Deployment) *corev1.Container {
	spec := &d.Spec.Template.Spec
	for i := range spec.Containers {
		if spec.Containers[i].Name == "manager" {
			return &spec.Containers[i]
		}
	}
	return &spec.Containers[0]
}

// splitImage splits an image into repository, tag and digest.
func splitImage(image string) (repo, tag, digest string) {
	name, digest, _ := strings.Cut(image, "@")
	repo = name
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		repo, tag = name[:i], name[i+1:]
	}
	return repo, tag, digest
}
