package validate

import (
	"fmt"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"opctl.dev/opctl/pkg/packaging"
)

// RelatedImages (OPC-B004) wants every image the bundle runs in spec.relatedImages.
var RelatedImages = register(Check{ID: "OPC-B004", Severity: SeverityError, Relayed: false,
	Rationale: "spec.relatedImages must list every image the deployments run, or disconnected installs break.",
	Hint:      "Add the image to relatedImages (opctl package does it) or to a RELATED_IMAGE_* variable."}, checkRelatedImages)

// checkRelatedImages wants every deployment image in spec.relatedImages:
// containers, and the operand images the manager is given.
func checkRelatedImages(c *Check, r *Report, in *bundleInput) {
	csv := in.b.CSV
	containers, operands, _ := unlistedImages(csv)
	for _, ci := range containers {
		r.add(c, ci+", which spec.relatedImages does not list", in.csvFile, "ClusterServiceVersion/"+csv.Name)
	}
	for _, o := range operands {
		r.add(c, "operand image "+o+", which spec.relatedImages does not list", in.csvFile, "ClusterServiceVersion/"+csv.Name)
	}
}

// unlistedImages returns what the CSV's deployments run without listing
// it in spec.relatedImages: container images (as "deployment/container
// image") and operand images (RELATED_IMAGE_* and *_IMAGE values,
// --*image*= flags); images that are placeholders (${VAR}, ko://), which
// no list can hold, apart (OPC-B006).
func unlistedImages(csv *operatorsv1alpha1.ClusterServiceVersion) (containers, env, placeholders []string) {
	listed := map[string]bool{}
	for _, ri := range csv.Spec.RelatedImages {
		listed[ri.Image] = true
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		spec := d.Spec.Template.Spec
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			switch {
			case placeholder(c.Image):
				placeholders = append(placeholders, fmt.Sprintf("deployment %s container %s runs %s", d.Name, c.Name, c.Image))
			case !listed[c.Image]:
				containers = append(containers, fmt.Sprintf("deployment %s container %s runs %s", d.Name, c.Name, c.Image))
			}
			for _, img := range packaging.OperandImages(c) {
				if listed[img.Image] {
					continue
				}
				if placeholder(img.Image) {
					placeholders = append(placeholders, fmt.Sprintf("deployment %s container %s is given the image %s", d.Name, c.Name, img.Image))
					continue
				}
				if img.Env != "" {
					env = append(env, img.Env+"="+img.Image)
				} else {
					env = append(env, img.Flag+img.Image)
				}
			}
		}
	}
	return containers, env, placeholders
}

// placeholder reports an image that is a placeholder of the project's
// release step, as opctl package finds them (${VAR}, ko://), or no image
// reference at all (<OPERATOR_IMG>), which no list can hold either.
func placeholder(image string) bool {
	return len(packaging.PlaceholdersIn(map[string]any{"image": image})) > 0 || !packaging.ValidImage(image)
}
