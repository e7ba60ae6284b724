package validate

import "fmt"

// PlaceholderImages (OPC-B006) names the images a bundle runs that are
// placeholders its project's release step fills (${VAR}, ko://, or no
// image reference at all, like <OPERATOR_IMG>): OLM cannot fill them, and
// relatedImages cannot list them.
var PlaceholderImages = register(Check{ID: "OPC-B006", Severity: SeverityWarning, Relayed: false,
	Rationale: "An image that is a placeholder (${VAR} of envsubst, ko:// of ko, or text that is no image reference such as <OPERATOR_IMG>) is what the project's release step fills; OLM installs the bundle as it is.",
	Hint:      "Fill the variables with opctl package --set-env VAR=value, or the manager's image with --image, before publishing the bundle."}, checkPlaceholderImages)

func checkPlaceholderImages(c *Check, r *Report, in *bundleInput) {
	csv := in.b.CSV
	_, _, placeholders := unlistedImages(csv)
	for _, p := range placeholders {
		r.add(c, fmt.Sprintf("%s, a placeholder its project's release step fills (or no image reference)", p), in.csvFile, "ClusterServiceVersion/"+csv.Name)
	}
}
