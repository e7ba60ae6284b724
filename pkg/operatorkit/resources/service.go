package resources

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceReady is a Resource readiness for a Service: it has a cluster
// IP (or is headless), and a LoadBalancer has an ingress address.
func ServiceReady(live client.Object) (bool, string) {
	s, ok := live.(*corev1.Service)
	if !ok {
		return false, fmt.Sprintf("a Service, not %T", live)
	}
	if s.Spec.Type != corev1.ServiceTypeExternalName && s.Spec.ClusterIP == "" {
		return false, "a cluster IP"
	}
	if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) == 0 {
		return false, "a load balancer address"
	}
	return true, ""
}
