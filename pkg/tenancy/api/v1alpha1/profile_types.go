package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TenantProfileSpec holds defaults many Tenants share.
type TenantProfileSpec struct {
	// HeadroomPercent is added on top of every computed quota figure.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=20
	// +optional
	HeadroomPercent *int32 `json:"headroomPercent,omitempty"`
	// PodSecurity is the Pod Security Admission level enforced in tenant
	// namespaces.
	// +kubebuilder:validation:Enum=restricted;baseline;privileged
	// +kubebuilder:default=restricted
	// +optional
	PodSecurity string `json:"podSecurity,omitempty"`
	// Isolation defaults for Tenants that set none.
	// +optional
	Isolation *IsolationSpec `json:"isolation,omitempty"`
	// Services allows tenant Services to be reached from outside the
	// cluster network; by default nothing is allowed, and guardrails and
	// the quota refuse such Services.
	// +optional
	Services *ServiceExposure `json:"services,omitempty"`
	// ClusterRoles names ClusterRoles, written by the platform team, whose
	// rules the operators of this profile's Tenants may hold cluster-wide.
	// A ClusterRoleBinding in an operator's release may grant only what
	// these roles (and the controller's --tenant-cluster-roles) cover, plus
	// get on the operator's own CustomResourceDefinitions; anything else is
	// refused with the rules named. Namespaced rules are always granted
	// inside the Tenant's namespaces only.
	// +listType=set
	// +optional
	ClusterRoles []string `json:"clusterRoles,omitempty"`
	// AllowedSources are prefixes of chart paths or repositories Tenants of
	// this profile may install from; empty allows any.
	// +listType=set
	// +optional
	AllowedSources []string `json:"allowedSources,omitempty"`
	// DefaultQuota is what each namespace of this profile's Tenants may
	// use besides what its operators' platform-as-code figures need: each
	// figure is added to the computed one, or stands alone where nothing
	// is computed (a Tenant with no operators, or whose catalog cannot be
	// read). Object counts are added to what the controller and the
	// operators' releases create there. Unset, the controller's shipped
	// defaults apply (docs: default quota); set with nothing in hard, no
	// defaults.
	// +optional
	DefaultQuota *DefaultQuota `json:"defaultQuota,omitempty"`
}

// DefaultQuota is a profile's default quota and container defaults.
type DefaultQuota struct {
	// Hard are ResourceQuota figures: compute (requests.cpu, …), pods,
	// storage and object counts (count/secrets, count/configmaps, …).
	// +optional
	Hard corev1.ResourceList `json:"hard,omitempty"`
	// DefaultRequest and Default are the LimitRange's container requests
	// and limits for containers that set none, which a quota on compute
	// otherwise refuses; an operand's platform-as-code figures, where
	// larger, win.
	// +optional
	DefaultRequest corev1.ResourceList `json:"defaultRequest,omitempty"`
	// +optional
	Default corev1.ResourceList `json:"default,omitempty"`
}

// ServiceExposure allows the kinds of Services that reach past the
// cluster network.
type ServiceExposure struct {
	// AllowNodePorts allows NodePort Services.
	// +optional
	AllowNodePorts bool `json:"allowNodePorts,omitempty"`
	// AllowLoadBalancers allows LoadBalancer Services.
	// +optional
	AllowLoadBalancers bool `json:"allowLoadBalancers,omitempty"`
	// AllowExternalIPs allows Services with externalIPs, which can
	// intercept other traffic of the cluster (CVE-2020-8554).
	// +optional
	AllowExternalIPs bool `json:"allowExternalIPs,omitempty"`
	// AllowExternalName allows ExternalName Services, a DNS alias a
	// shared proxy or ingress controller may follow to any name.
	// +optional
	AllowExternalName bool `json:"allowExternalName,omitempty"`
	// AllowIngress allows Ingresses, which a shared ingress controller
	// serves with its own rights (CVE-2021-25740: an Ingress can route to
	// Endpoints of other namespaces).
	// +optional
	AllowIngress bool `json:"allowIngress,omitempty"`
}

// TenantProfile holds defaults many Tenants share.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=opctl
type TenantProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TenantProfileSpec `json:"spec,omitempty"`
}

// TenantProfileList is a list of TenantProfiles.
// +kubebuilder:object:root=true
type TenantProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TenantProfile `json:"items"`
}
