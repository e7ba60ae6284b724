package registryv1

import (
	"fmt"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// ownedAPIServices refuses a CSV that owns aggregated APIs: OLM would
// register an APIService for each, cluster-scoped, so the API server would
// send every client's requests for that group and version, from every
// namespace, to the one tenant's Deployment. Left out, the operator would
// run without the API it serves, so the refusal comes before install.
func ownedAPIServices(csv *operatorsv1alpha1.ClusterServiceVersion) error {
	owned := csv.Spec.APIServiceDefinitions.Owned
	if len(owned) == 0 {
		return nil
	}
	names := make([]string, 0, len(owned))
	for _, d := range owned {
		names = append(names, d.Version+"."+d.Group)
	}
	return operatorkit.Terminal(tenancyv1.ReasonClusterRightsRefused, fmt.Errorf(
		"%s: spec.apiservicedefinitions.owned asks for APIService %s, which is cluster-scoped: the API server would send every namespace's requests for that API to one tenant's operator; install this operator once for the cluster",
		csv.Name, strings.Join(names, ", ")))
}
