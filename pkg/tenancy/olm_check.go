package tenancy

import (
	"context"
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"

	"opctl.dev/opctl/pkg/operatorkit"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OperatorGroupName is the OperatorGroup in a tenant's first namespace.
const OperatorGroupName = tenancyv1.OperatorGroupServiceAccount

// Reasons of OLM installs.
const (
	approvalManual         = "Manual"
	annotationProvidedAPIs = "olm.providedAPIs"
)

// olmBackend installs operators through OLM v0 (spec.operators[].olm):
// an OperatorGroup and a CatalogSource in the tenant's first namespace, a
// Subscription, and the InstallPlans the controller approves.
type olmBackend struct {
	tenantEvents
	client   client.Client
	reader   client.Reader
	owned    ownedReader
	catalogs *registryv1.CatalogClient
	// discovery tells which APIs the API server serves, for the CRDs the
	// backend applies before approving a plan.
	discovery discovery.DiscoveryInterface
	// stored lists the objects of the shared CRDs the skew guard checks.
	stored storedObjects
	served bool // the cluster serves OLM's operators.coreos.com APIs
}

func (*olmBackend) source(op tenancyv1.OperatorSpec) (string, bool) {
	if op.OLM == nil {
		return "", false
	}
	return olmSourceString(op.OLM), true
}

func (*olmBackend) installed(st tenancyv1.OperatorStatus) bool { return st.OLM != nil }

// olmSourceString names an OLM catalog for allowedSources: its address,
// image, or namespace/name.
func olmSourceString(src *tenancyv1.OLMSource) string {
	switch c := src.Catalog; {
	case c.Address != "":
		return c.Address
	case c.Image != "":
		return c.Image
	default:
		return c.Namespace + "/" + c.Name
	}
}

// plan is planOLM, with the bundle's analysis as the quota input.
func (c *olmBackend) plan(ctx context.Context, t *tenancyv1.Tenant, op tenancyv1.OperatorSpec) (operatorPlan, error) {
	olm, err := c.planOLM(ctx, t, op)
	if err != nil {
		return operatorPlan{}, err
	}
	p := operatorPlan{detail: olm}
	if olm.target != nil {
		p.analysis = olm.target.Analysis
	}
	return p, nil
}

// olmPlan is what Check worked out for an OLM operator.
type olmPlan struct {
	address string
	// source is the CatalogSource the Subscription names.
	source, sourceNamespace string
	// target is the CSV the tenant should run; pinned is set for Manual.
	target *registryv1.Bundle
	pinned string
	// err is why the catalog could not be read yet.
	err error
}

// catalogSourceName is the CatalogSource the controller creates for an
// operator whose catalog is an address or an image.
func catalogSourceName(op tenancyv1.OperatorSpec) string { return op.Name + "-catalog" }

// planOLM resolves the catalog, the version to run and its bundle. A
// catalog that cannot be read yet is not an error of the spec: the plan
// records it and the quota leaves the operator out until it can.
func (c *olmBackend) planOLM(ctx context.Context, t *tenancyv1.Tenant, op tenancyv1.OperatorSpec) (*olmPlan, error) {
	if !c.served {
		return nil, operatorkit.Terminal("OLMNotInstalled", fmt.Errorf("operator %s: this cluster has no OLM (operators.coreos.com APIs); install OLM or use a chart source", op.Name))
	}
	src := op.OLM
	ns := t.Spec.Namespaces[0]
	p := &olmPlan{source: catalogSourceName(op), sourceNamespace: ns}
	switch {
	case src.Catalog.Address != "":
		p.address = src.Catalog.Address
	case src.Catalog.Image != "":
		return nil, operatorkit.Terminal(tenancyv1.ReasonCatalogInTenant, fmt.Errorf("operator %s: spec.operators[].olm.catalog.image would run the catalog's registry pod, and its Service, in the tenant's namespace, "+
			"where the tenant controls them and so the bundles and CRDs the controller reads: serve the catalog at an address (catalog.address), or have the platform create a CatalogSource outside the tenants (catalog.name and namespace)", op.Name))
	default:
		if src.Catalog.Name != "" {
			p.source = src.Catalog.Name
			if src.Catalog.Namespace != "" {
				p.sourceNamespace = src.Catalog.Namespace
			}
		}
		cs := &operatorsv1alpha1.CatalogSource{}
		if err := c.reader.Get(ctx, client.ObjectKey{Namespace: p.sourceNamespace, Name: p.source}, cs); err != nil {
			p.err = fmt.Errorf("CatalogSource %s/%s: %w", p.sourceNamespace, p.source, err)
			return p, nil
		}
		p.address = cs.Spec.Address
		if cs.Spec.Image != "" || p.address == "" {
			if ns := (&corev1.Namespace{}); c.reader.Get(ctx, client.ObjectKey{Name: p.sourceNamespace}, ns) == nil && ns.Labels[tenancyv1.LabelTenant] != "" {
				return nil, operatorkit.Terminal(tenancyv1.ReasonCatalogInTenant, fmt.Errorf("operator %s: CatalogSource %s/%s runs its registry in a tenant namespace, where the tenant controls it: "+
					"create it outside the tenants' namespaces", op.Name, p.sourceNamespace, p.source))
			}
			if cs.Status.RegistryServiceStatus == nil {
				p.err = fmt.Errorf("CatalogSource %s/%s has no registry service yet", p.sourceNamespace, p.source)
				return p, nil
			}
			p.address = cs.Status.RegistryServiceStatus.Address()
		}
	}
	csv := src.StartingCSV
	if src.Approval == approvalManual {
		if op.Version != "" {
			pinned, err := c.catalogs.CSVFor(ctx, p.address, src.Package, src.Channel, op.Version)
			if err != nil {
				p.err = err
				return p, nil
			}
			csv = pinned
		}
		p.pinned = csv
	}
	if sub := c.subscription(ctx, ns, op.Name); sub != nil && src.Approval != approvalManual && sub.Status.CurrentCSV != "" {
		csv = sub.Status.CurrentCSV // where OLM is taking the channel
	}
	if csv == "" {
		head, err := c.catalogs.CSVFor(ctx, p.address, src.Package, src.Channel, "")
		if err != nil {
			p.err = err
			return p, nil
		}
		csv = head
	}
	b, err := c.catalogs.Bundle(ctx, p.address, src.Package, src.Channel, csv)
	if err != nil {
		p.err = err
		return p, nil
	}
	p.target = b
	if err := registryv1.InstallModeFits(b.CSVName, b.InstallModes, len(t.Spec.Namespaces)); err != nil {
		return nil, fmt.Errorf("operator %s: %w", op.Name, err)
	}
	return p, nil
}
