package guard

import (
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// reservedDomains are the domains of the labels and annotations that
// only the controller writes: a tenant's artifact carrying one would
// claim to be the controller's work.
var reservedDomains = []string{"tenancy.opctl.dev", "sharding.opctl.dev"}

// ReservedKey reports whether a label or annotation key is in a domain
// only the controller writes (tenancy.opctl.dev, sharding.opctl.dev, or a
// subdomain of either).
func ReservedKey(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, d := range reservedDomains {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return false
}

// ReservedMetadata names the controller's own labels and annotations on
// a CRD a tenant's artifact ships ("" for none): OLM writes a bundle's
// CRD as the bundle has it, so such a CRD would plant them on the shared
// one.
func ReservedMetadata(crd *apiextensionsv1.CustomResourceDefinition) string {
	var keys []string
	for k := range crd.Labels {
		if ReservedKey(k) {
			keys = append(keys, "label "+k)
		}
	}
	for k := range crd.Annotations {
		if ReservedKey(k) {
			keys = append(keys, "annotation "+k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
