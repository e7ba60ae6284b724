package tenancy

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// The API server's Service, whose addresses tenant pods may reach.
const (
	apiServerNamespace = "default"
	apiServerService   = "kubernetes"
)

// apiEndpoint is an address of the API server and the ports it serves
// there: the Service's cluster IP, and each endpoint (where a CNI applies
// policies after the Service's translation).
type apiEndpoint struct {
	IP    string
	Ports []int32
}

// apiServerEndpoints reads the kubernetes Service and its EndpointSlices
// from the cache, sorted, so that the allow policy changes only when they
// do.
func (c *Controller) apiServerEndpoints(ctx context.Context) ([]apiEndpoint, error) {
	var out []apiEndpoint
	svc := &corev1.Service{}
	switch err := c.client.Get(ctx, client.ObjectKey{Namespace: apiServerNamespace, Name: apiServerService}, svc); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("reading Service %s/%s: %w", apiServerNamespace, apiServerService, err)
	default:
		if ip := net.ParseIP(svc.Spec.ClusterIP); ip != nil {
			e := apiEndpoint{IP: ip.String()}
			for _, p := range svc.Spec.Ports {
				e.Ports = append(e.Ports, p.Port)
			}
			out = append(out, e)
		}
	}
	var eps discoveryv1.EndpointSliceList
	if err := c.client.List(ctx, &eps, client.InNamespace(apiServerNamespace), client.MatchingLabels{discoveryv1.LabelServiceName: apiServerService}); err != nil {
		return nil, fmt.Errorf("reading the API server's EndpointSlices: %w", err)
	}
	byIP := map[string][]int32{}
	for _, s := range eps.Items {
		var ports []int32
		for _, p := range s.Ports {
			if p.Port != nil && (p.Protocol == nil || *p.Protocol == corev1.ProtocolTCP) {
				ports = append(ports, *p.Port)
			}
		}
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				if ip := net.ParseIP(a); ip != nil {
					byIP[ip.String()] = append(byIP[ip.String()], ports...)
				}
			}
		}
	}
	ips := make([]string, 0, len(byIP))
	for ip := range byIP {
		ips = append(ips, ip)
	}
	sort.Strings(ips)
	for _, ip := range ips {
		ports := byIP[ip]
		slices.Sort(ports)
		out = append(out, apiEndpoint{IP: ip, Ports: slices.Compact(ports)})
	}
	return out, nil
}

// cidr is ip as a one-address block.
func cidr(ip string) string {
	if net.ParseIP(ip).To4() != nil {
		return ip + "/32"
	}
	return ip + "/128"
}

// allTenants maps a change of the API server's addresses to every Tenant.
func (c *Controller) allTenants(ctx context.Context, _ client.Object) []reconcile.Request {
	var tenants tenancyv1.TenantList
	if err := c.client.List(ctx, &tenants); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(tenants.Items))
	for _, t := range tenants.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: t.Name}})
	}
	return reqs
}
