package validate

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PinnedImages (OPC-C005) wants images pinned to a tag other than latest, or a digest.
var PinnedImages = register(Check{ID: "OPC-C005", Severity: SeverityError, Relayed: false,
	Rationale: "Images must be pinned to a tag other than latest, or a digest, so installs are reproducible.",
	Hint:      "Use a versioned tag or a digest."}, eachContainer(checkPinnedImages))

func checkPinnedImages(c *Check, r *Report, w workload, ctr corev1.Container) {
	if bad := unpinned(ctr.Image); bad != "" {
		r.add(c, "container "+ctr.Name+" image "+ctr.Image+" "+bad, w.template, w.id)
	}
}

// unpinned explains why an image is not pinned, or returns "".
func unpinned(image string) string {
	if strings.Contains(image, "@sha256:") {
		return ""
	}
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	switch {
	case !ok:
		return "has no tag"
	case tag == "latest":
		return "uses the latest tag"
	}
	return ""
}
