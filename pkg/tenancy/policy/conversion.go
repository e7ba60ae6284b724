package policy

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ConversionWebhook names the first CRD that converts through a webhook:
// a shared CRD would then convert every tenant's objects through the one
// tenant's Service that the chart names, which that tenant controls. The
// controller refuses it with the reason ConversionWebhookNotSupported.
func ConversionWebhook(crds []*apiextensionsv1.CustomResourceDefinition) error {
	for _, crd := range crds {
		if c := crd.Spec.Conversion; c != nil && c.Strategy == apiextensionsv1.WebhookConverter {
			return fmt.Errorf("CRD %s converts through a webhook, which would convert every tenant's objects through one tenant's Service: shared CRDs must use conversion strategy None; install this operator once for the cluster", crd.Name)
		}
	}
	return nil
}
