package guard

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// ReservedGroups are the API groups the platform reads rights or objects
// in, whether or not the API server serves them yet: the controller's own
// (its guardrails' bypass is a rule on tenancy.opctl.dev, the shard keys
// live under sharding.opctl.dev), OLM's, whose objects the controller
// acts on, and the Prometheus operator's, which the shipped baseline
// grants by name. A tenant's operator may not define a kind in them: its kinds
// become the tenant's "own kinds", which the owners and the operator hold
// every standard verb on.
var ReservedGroups = []string{tenancyv1.GroupVersion.Group, "sharding.opctl.dev", "operators.coreos.com", "packages.operators.coreos.com", "monitoring.coreos.com"}

// reservedGroup says why group is not a tenant's to define kinds in, or
// "" if it is not reserved by name (Kubernetes' groups or ReservedGroups).
func reservedGroup(group string) string {
	switch {
	case group == "k8s.io" || group == "kubernetes.io" || strings.HasSuffix(group, ".k8s.io") || strings.HasSuffix(group, ".kubernetes.io"):
		return "Kubernetes reserves it"
	case slices.Contains(ReservedGroups, group):
		return "the tenancy platform reserves it"
	}
	return ""
}

// GroupsReserved refuses CRDs of want that do not exist yet in a group
// that is not a tenant's to define kinds in: a group Kubernetes or the
// platform reserves, or one the API server already serves with anything
// but CRDs shared with tenants (a built-in or aggregated API, another
// installer's CRDs). A CRD that exists is judged by EnsureCRDs and
// IsShared instead. dc reads the API server's discovery, uncached; nil
// checks the reserved names only.
func GroupsReserved(ctx context.Context, reader client.Reader, dc discovery.DiscoveryInterface, want []*apiextensionsv1.CustomResourceDefinition) error {
	var groups *metav1.APIGroupList // read once
	for _, crd := range want {
		g := crd.Spec.Group
		if why := reservedGroup(g); why != "" {
			return groupRefused(crd, why)
		}
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := reader.Get(ctx, client.ObjectKey{Name: crd.Name}, m); err == nil {
			continue
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading CRD %s: %w", crd.Name, err)
		}
		if dc == nil {
			continue
		}
		if groups == nil {
			var err error
			if groups, err = dc.ServerGroups(); err != nil {
				return fmt.Errorf("reading the API server's groups: %w", err)
			}
		}
		served, err := servedResources(groups, dc, g)
		if err != nil {
			return err
		}
		for _, res := range served {
			owner, err := sharedCRDServes(ctx, reader, res+"."+g)
			if err != nil {
				return err
			}
			if !owner {
				return groupRefused(crd, fmt.Sprintf("the API server already serves %s.%s in it, which is not a CRD shared with tenants", res, g))
			}
		}
	}
	return nil
}

// groupRefused is the refusal of crd for its group.
func groupRefused(crd *apiextensionsv1.CustomResourceDefinition, why string) error {
	return operatorkit.Terminal(tenancyv1.ReasonCRDGroupReserved, fmt.Errorf(
		"CRD %s is in API group %s, and %s: a tenant's operator may not define kinds there; move the operator's kinds to a group of its own",
		crd.Name, crd.Spec.Group, why))
}

// servedResources reads the resources the API server serves in group
// (all versions, subresources left out): none if it does not serve it.
func servedResources(groups *metav1.APIGroupList, dc discovery.DiscoveryInterface, group string) ([]string, error) {
	var out []string
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		for _, v := range g.Versions {
			list, err := dc.ServerResourcesForGroupVersion(v.GroupVersion)
			if apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return nil, fmt.Errorf("reading the API server's discovery for %s: %w", v.GroupVersion, err)
			}
			for _, r := range list.APIResources {
				if !strings.Contains(r.Name, "/") && !slices.Contains(out, r.Name) {
					out = append(out, r.Name)
				}
			}
		}
	}
	return out, nil
}

// sharedCRDServes reports whether the CRD named name exists and is shared
// with tenants (IsShared).
func sharedCRDServes(ctx context.Context, reader client.Reader, name string) (bool, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, m); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	return IsShared(ctx, reader, m)
}
