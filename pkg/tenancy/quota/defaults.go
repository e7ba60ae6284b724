package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// ShippedDefaultQuota is what every tenant namespace may use besides its
// operators' needs when its profile sets no defaultQuota: a tenant with
// no operators, or whose catalog cannot be read, still has bounded
// compute, pods (running, and every Pod object: a finished Job's pods
// count too), storage, ephemeral storage and objects of every kind an
// owner can create with the admin role but Events, which the quota
// controller does not count (its ignored resources). The controller adds
// the optionalCounts the cluster serves.
func ShippedDefaultQuota() tenancyv1.DefaultQuota {
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	return tenancyv1.DefaultQuota{
		Hard: corev1.ResourceList{
			corev1.ResourceRequestsCPU: q("2"), corev1.ResourceRequestsMemory: q("4Gi"),
			corev1.ResourceLimitsCPU: q("4"), corev1.ResourceLimitsMemory: q("8Gi"),
			corev1.ResourceRequestsEphemeralStorage: q("20Gi"), corev1.ResourceLimitsEphemeralStorage: q("40Gi"),
			corev1.ResourcePods: q("30"), "count/pods": q("100"), corev1.ResourceRequestsStorage: q("50Gi"),
			corev1.ResourcePersistentVolumeClaims: q("20"),
			"count/secrets":                       q("100"), "count/configmaps": q("100"), "count/services": q("30"),
			"count/serviceaccounts": q("30"), "count/roles.rbac.authorization.k8s.io": q("30"),
			"count/rolebindings.rbac.authorization.k8s.io": q("50"), "count/deployments.apps": q("20"),
			"count/replicasets.apps": q("250"), "count/statefulsets.apps": q("20"), "count/daemonsets.apps": q("5"),
			"count/jobs.batch": q("50"), "count/cronjobs.batch": q("20"),
			"count/poddisruptionbudgets.policy": q("20"), "count/horizontalpodautoscalers.autoscaling": q("20"),
			"count/networkpolicies.networking.k8s.io": q("30"), "count/ingresses.networking.k8s.io": q("20"),
			"count/leases.coordination.k8s.io": q("30"), "count/replicationcontrollers": q("10"),
		},
		DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi"), corev1.ResourceEphemeralStorage: q("64Mi")},
		Default:        corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("512Mi"), corev1.ResourceEphemeralStorage: q("1Gi")},
	}
}

// optionalCounts are counts the shipped default quota holds where the
// cluster serves their kind: a quota naming a resource the API server
// does not serve is never counted, and its namespace would wait for that
// forever. Dynamic resource allocation's claims are served by default
// from Kubernetes 1.34, and admin may create them.
var optionalCounts = []struct {
	groupVersion, resource string
	name                   corev1.ResourceName
	count                  string
}{
	{"resource.k8s.io/v1", "resourceclaims", "count/resourceclaims.resource.k8s.io", "20"},
	{"resource.k8s.io/v1", "resourceclaimtemplates", "count/resourceclaimtemplates.resource.k8s.io", "20"},
}

// ServedCounts are the optionalCounts whose kinds the cluster serves.
func ServedCounts(dc discovery.DiscoveryInterface) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	served := map[string]bool{}
	for _, oc := range optionalCounts {
		if _, read := served[oc.groupVersion]; !read {
			list, err := dc.ServerResourcesForGroupVersion(oc.groupVersion)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("reading what %s serves: %w", oc.groupVersion, err)
			}
			served[oc.groupVersion] = false
			if list != nil {
				for _, r := range list.APIResources {
					served[oc.groupVersion+"/"+r.Name] = true
				}
			}
		}
		if served[oc.groupVersion+"/"+oc.resource] {
			out[oc.name] = resource.MustParse(oc.count)
		}
	}
	return out, nil
}

// countedKinds are the namespaced kinds whose objects the controller
// counts into a default object-count quota, by the quota's resource
// name (count/<resource>[.<group>]).
var countedKinds = map[schema.GroupKind]corev1.ResourceName{
	{Kind: "Secret"}:                                          "count/secrets",
	{Kind: "ConfigMap"}:                                       "count/configmaps",
	{Kind: "Service"}:                                         "count/services",
	{Kind: "ServiceAccount"}:                                  "count/serviceaccounts",
	{Kind: "PersistentVolumeClaim"}:                           corev1.ResourcePersistentVolumeClaims,
	{Kind: "ReplicationController"}:                           "count/replicationcontrollers",
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:        "count/roles.rbac.authorization.k8s.io",
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: "count/rolebindings.rbac.authorization.k8s.io",
	{Group: "apps", Kind: "Deployment"}:                       "count/deployments.apps",
	{Group: "apps", Kind: "StatefulSet"}:                      "count/statefulsets.apps",
	{Group: "apps", Kind: "DaemonSet"}:                        "count/daemonsets.apps",
	{Group: "batch", Kind: "Job"}:                             "count/jobs.batch",
	{Group: "batch", Kind: "CronJob"}:                         "count/cronjobs.batch",
	{Group: "policy", Kind: "PodDisruptionBudget"}:            "count/poddisruptionbudgets.policy",
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:   "count/horizontalpodautoscalers.autoscaling",
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:       "count/networkpolicies.networking.k8s.io",
	{Group: "networking.k8s.io", Kind: "Ingress"}:             "count/ingresses.networking.k8s.io",
	{Group: "coordination.k8s.io", Kind: "Lease"}:             "count/leases.coordination.k8s.io",
}

// replicaSetsPerDeployment are the ReplicaSets a Deployment keeps: the
// current one and, by the API's default revisionHistoryLimit, 10 old.
const replicaSetsPerDeployment = 11

// BuiltIn are the objects the cluster puts in every namespace: the
// root CA ConfigMap and the default ServiceAccount.
var BuiltIn = map[corev1.ResourceName]int64{"count/configmaps": 1, "count/serviceaccounts": 1}

// ObjectCounts adds the object of kind gk to counts, if it is counted.
func ObjectCounts(counts map[corev1.ResourceName]int64, gk schema.GroupKind, n int64) {
	if name, ok := countedKinds[gk]; ok {
		counts[name] += n
	}
	if gk == (schema.GroupKind{Group: "apps", Kind: "Deployment"}) {
		counts["count/replicasets.apps"] += n * replicaSetsPerDeployment
	}
}

// DefaultQuota is the profile's default quota, else the shipped one.
func DefaultQuota(p *tenancyv1.TenantProfile) tenancyv1.DefaultQuota {
	if p != nil && p.Spec.DefaultQuota != nil {
		return *p.Spec.DefaultQuota.DeepCopy()
	}
	return ShippedDefaultQuota()
}
