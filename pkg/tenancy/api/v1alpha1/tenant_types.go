package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// TenantSpec is what a tenant gets.
type TenantSpec struct {
	// Namespaces of the tenant, created with the tenant's labels. The
	// first one hosts the operator releases.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=set
	Namespaces []string `json:"namespaces"`
	// AdoptNamespaces lets the tenant take over namespaces that already
	// exist and have no controller.
	// +optional
	AdoptNamespaces bool `json:"adoptNamespaces,omitempty"`
	// Owners are bound to the admin ClusterRole in every tenant namespace.
	// +optional
	Owners []rbacv1.Subject `json:"owners,omitempty"`
	// Operators are the operator instances the tenant runs.
	// +listType=map
	// +listMapKey=name
	// +optional
	Operators []OperatorSpec `json:"operators,omitempty"`
	// Quota overrides computed quota figures, by resource name.
	// +optional
	Quota *QuotaSpec `json:"quota,omitempty"`
	// Isolation configures the tenant's NetworkPolicies.
	// +optional
	Isolation *IsolationSpec `json:"isolation,omitempty"`
	// Profile names a TenantProfile whose defaults apply.
	// +optional
	Profile string `json:"profile,omitempty"`
	// DeletionPolicy: Delete uninstalls the releases and deletes the
	// namespaces; Orphan disconnects and leaves everything running.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy kitapi.DeletionPolicy `json:"deletionPolicy,omitempty"`
	// Paused stops reconciling the tenant; nothing is changed.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// OperatorSpec is one operator instance of the tenant.
// +kubebuilder:validation:XValidation:rule="(has(self.chart) ? 1 : 0) + (has(self.olm) ? 1 : 0) + (has(self.bundle) ? 1 : 0) == 1",message="set exactly one of chart, olm and bundle"
type OperatorSpec struct {
	// Name of the instance; the Helm release name.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=40
	Name string `json:"name"`
	// Chart installs the operator with Helm.
	// +optional
	Chart *ChartSource `json:"chart,omitempty"`
	// OLM installs the operator from a catalog.
	// +optional
	OLM *OLMSource `json:"olm,omitempty"`
	// Bundle installs a registry+v1 bundle from a catalog as a Helm
	// release of the tenant, with no OLM on the cluster.
	// +optional
	Bundle *BundleSource `json:"bundle,omitempty"`
	// Values for the chart. rbac.scope, watchNamespaces and crds.install
	// are set by the controller.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
	// Version pins the operator version. With an OLM source and Manual
	// approval, the controller approves exactly the InstallPlan of this
	// version; with a bundle source and Manual approval, the controller
	// installs exactly this version.
	// +optional
	Version string `json:"version,omitempty"`
	// Instances is the most custom resources of each of the operator's
	// kinds the tenant may create in each namespace; it sizes the quota.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Instances int32 `json:"instances,omitempty"`
	// DriftIgnore names fields of the release's objects that the operator
	// or the cluster changes legitimately, which drift correction leaves
	// as they are (as flux's driftDetection.ignore). The replicas of a
	// workload that an HPA of the release scales are left alone without a
	// rule.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	DriftIgnore []DriftIgnoreRule `json:"driftIgnore,omitempty"`
}

// DriftIgnoreRule names fields, by JSON pointer, of the release objects
// its target selects.
type DriftIgnoreRule struct {
	// Paths are JSON pointers (RFC 6901), such as /spec/replicas or
	// /data/ca.crt.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^(/[^/]*)+$`
	Paths []string `json:"paths"`
	// Target selects objects by kind and name; unset, every object of the
	// release.
	// +optional
	Target *DriftTarget `json:"target,omitempty"`
}

// DriftTarget selects release objects; an empty field matches any.
type DriftTarget struct {
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}

// ChartSource locates a Helm chart.
type ChartSource struct {
	// Path is a chart directory or .tgz on the controller's file system.
	// +optional
	Path string `json:"path,omitempty"`
	// Repository is oci://host/path/<chart> or an https chart repository.
	// +optional
	Repository string `json:"repository,omitempty"`
	// Name of the chart in an https repository.
	// +optional
	Name string `json:"name,omitempty"`
	// Version of the chart; required for repositories.
	// +optional
	Version string `json:"version,omitempty"`
}

// OLMSource asks for an operator from an OLM catalog. The controller
// creates an OperatorGroup targeting the tenant's namespaces and a
// Subscription in the first one, and approves the InstallPlans itself:
// every one that follows the channel (Automatic), or only the one of
// spec.operators[].version (Manual).
type OLMSource struct {
	// Catalog that serves the package.
	Catalog OLMCatalog `json:"catalog"`
	// Package in the catalog.
	// +kubebuilder:validation:MinLength=1
	Package string `json:"package"`
	// Channel to follow.
	// +kubebuilder:validation:MinLength=1
	Channel string `json:"channel"`
	// StartingCSV is the first CSV to install; default the channel head.
	// +optional
	StartingCSV string `json:"startingCSV,omitempty"`
	// Approval of InstallPlans: Automatic follows the channel; Manual
	// installs spec.operators[].version (or StartingCSV) and nothing else.
	// +kubebuilder:validation:Enum=Automatic;Manual
	// +kubebuilder:default=Automatic
	// +optional
	Approval string `json:"approval,omitempty"`
}

// BundleSource asks for a registry+v1 bundle from a file-based catalog,
// rendered by the controller and installed as a Helm release of the
// tenant: no OLM runs on the cluster.
type BundleSource struct {
	// Catalog that serves the package.
	Catalog BundleCatalog `json:"catalog"`
	// Package in the catalog.
	// +kubebuilder:validation:MinLength=1
	Package string `json:"package"`
	// Channel to follow.
	// +kubebuilder:validation:MinLength=1
	Channel string `json:"channel"`
	// Approval: Automatic follows the channel head; Manual installs
	// spec.operators[].version (or, without one, the version first
	// installed) and lists newer ones in status as pending.
	// +kubebuilder:validation:Enum=Automatic;Manual
	// +kubebuilder:default=Automatic
	// +optional
	Approval string `json:"approval,omitempty"`
}

// BundleCatalog locates a file-based catalog.
// +kubebuilder:validation:XValidation:rule="(has(self.image) ? 1 : 0) + (has(self.address) ? 1 : 0) + (has(self.url) ? 1 : 0) + (has(self.configMap) ? 1 : 0) == 1",message="set exactly one of image, address, url and configMap"
type BundleCatalog struct {
	// Image of a catalog: the file-based catalog in the directory its
	// operators.operatorframework.io.index.configs.v1 label names, as
	// opctl publish pushes it.
	// +optional
	Image string `json:"image,omitempty"`
	// Address (host:port) of an operator-registry gRPC server.
	// +optional
	Address string `json:"address,omitempty"`
	// URL serving the catalog as a stream of JSON objects, the shape of
	// OLM v1's ClusterCatalog (…/api/v1/all).
	// +optional
	URL string `json:"url,omitempty"`
	// ConfigMap whose data entries hold the catalog's YAML or JSON. It
	// must not be in a tenant namespace.
	// +optional
	ConfigMap *ConfigMapReference `json:"configMap,omitempty"`
}

// ConfigMapReference names a ConfigMap.
type ConfigMapReference struct {
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// OLMCatalog names a CatalogSource, or a catalog for which the controller
// creates one in the tenant's first namespace.
// +kubebuilder:validation:XValidation:rule="(has(self.name) ? 1 : 0) + (has(self.address) ? 1 : 0) + (has(self.image) ? 1 : 0) == 1",message="set exactly one of name, address and image"
type OLMCatalog struct {
	// Name of an existing CatalogSource.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the CatalogSource Name; default the tenant's first
	// namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Address (host:port) of a catalog's gRPC registry server.
	// +optional
	Address string `json:"address,omitempty"`
	// Image of a catalog. Refused: OLM would run its registry pod in the
	// tenant's namespace, where the tenant controls the bundles and CRDs
	// the controller reads. Use Address, or a CatalogSource the platform
	// creates outside the tenants (Name and Namespace).
	// +optional
	Image string `json:"image,omitempty"`
}

// QuotaSpec overrides quota figures.
type QuotaSpec struct {
	// Hard figures that replace the computed ones.
	// +optional
	Hard corev1.ResourceList `json:"hard,omitempty"`
}

// IsolationSpec configures network isolation.
type IsolationSpec struct {
	// NetworkPolicy turns the default-deny policy and its allow rules on.
	// +kubebuilder:default=true
	// +optional
	NetworkPolicy *bool `json:"networkPolicy,omitempty"`
	// IngressNamespaces may reach the tenant's pods.
	// +listType=set
	// +optional
	IngressNamespaces []string `json:"ingressNamespaces,omitempty"`
	// LockNetworkPolicies refuses NetworkPolicies in the tenant's
	// namespaces whose namespaceSelectors could admit another tenant's
	// namespaces (a guardrail policy).
	// +optional
	LockNetworkPolicies bool `json:"lockNetworkPolicies,omitempty"`
}

// TenantStatus is the observed state of a Tenant.
type TenantStatus struct {
	kitapi.Status `json:",inline"`
	// Namespaces report the quota of each namespace.
	// +listType=map
	// +listMapKey=name
	// +optional
	Namespaces []NamespaceStatus `json:"namespaces,omitempty"`
	// Operators report each operator instance.
	// +listType=map
	// +listMapKey=name
	// +optional
	Operators []OperatorStatus `json:"operators,omitempty"`
}

// NamespaceStatus is the quota of one tenant namespace.
type NamespaceStatus struct {
	Name string `json:"name"`
	// Hard is the quota's limit, Used what is in use.
	// +optional
	Hard corev1.ResourceList `json:"hard,omitempty"`
	// Used is the quota's usage as of the last reconcile: a change of
	// usage alone (objects created or deleted in the namespace) brings a
	// reconcile at once, then at most one per interval (30s by default),
	// so Used may lag that long. The metric
	// opctl_tenancy_quota_utilisation_ratio is always current.
	// +optional
	Used corev1.ResourceList `json:"used,omitempty"`
	// Derivation explains each figure of Hard.
	// +optional
	Derivation []string `json:"derivation,omitempty"`
}

// OperatorStatus is the state of one operator instance.
type OperatorStatus struct {
	Name string `json:"name"`
	// Chart and ChartVersion actually deployed.
	// +optional
	Chart string `json:"chart,omitempty"`
	// +optional
	ChartVersion string `json:"chartVersion,omitempty"`
	// +optional
	AppVersion string `json:"appVersion,omitempty"`
	// Revision is the Helm release revision deployed.
	// +optional
	Revision int `json:"revision,omitempty"`
	// Health is Ready, Progressing or Failed.
	// +optional
	Health string `json:"health,omitempty"`
	// TargetVersion is the chart version being rolled out, if any.
	// +optional
	TargetVersion string `json:"targetVersion,omitempty"`
	// UpgradeStartTime is when the rollout of TargetVersion began.
	// +optional
	UpgradeStartTime *metav1.Time `json:"upgradeStartTime,omitempty"`
	// FailedVersion was rolled back; it is not retried until the spec
	// names another version or other values.
	// +optional
	FailedVersion string `json:"failedVersion,omitempty"`
	// FailedValues is the sha256 of the values FailedVersion was rolled
	// back with: the same version with other values (the tenant's
	// namespaces changed) is tried again.
	// +optional
	FailedValues string `json:"failedValues,omitempty"`
	// CRDs are the shared CRDs this operator uses.
	// +listType=set
	// +optional
	CRDs []string `json:"crds,omitempty"`
	// OLM is the state of an operator installed from a catalog.
	// +optional
	OLM *OLMStatus `json:"olm,omitempty"`
	// Bundle is the state of an operator installed from a bundle.
	// +optional
	Bundle *BundleStatus `json:"bundle,omitempty"`
	// Reason classifies LastError: InstallFailed, UpgradeFailed, CRDSkew,
	// InterOperatorGroupOwnerConflict or TooManyOperatorGroups.
	// +optional
	Reason string `json:"reason,omitempty"`
	// LastError is the last install, upgrade or CRD error.
	// +optional
	LastError string `json:"lastError,omitempty"`
}

// OLMStatus maps the Subscription, InstallPlan and CSV of an operator.
type OLMStatus struct {
	// CSV installed, its phase and version.
	// +optional
	CSV string `json:"csv,omitempty"`
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// InstallPlan of the CSV and its phase.
	// +optional
	InstallPlan string `json:"installPlan,omitempty"`
	// +optional
	InstallPlanPhase string `json:"installPlanPhase,omitempty"`
	// AwaitingApproval lists InstallPlans the controller does not approve
	// (another version than the pinned one), as "<plan>: <CSVs>".
	// +optional
	AwaitingApproval []string `json:"awaitingApproval,omitempty"`
}

// BundleStatus is the bundle an operator runs, and what the channel
// offers beyond it.
type BundleStatus struct {
	// +optional
	Package string `json:"package,omitempty"`
	// +optional
	Channel string `json:"channel,omitempty"`
	// Bundle (its CSV name) and Version deployed.
	// +optional
	Bundle string `json:"bundle,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// Image of the bundle, by digest where the catalog or the registry
	// gives one.
	// +optional
	Image string `json:"image,omitempty"`
	// Pending lists the newer versions of the channel that Manual
	// approval does not install.
	// +optional
	Pending []string `json:"pending,omitempty"`
}

// Tenant gives a team namespaces, quota, isolation and operator instances.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=opctl
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Namespaces",type=string,JSONPath=`.spec.namespaces`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TenantSpec   `json:"spec,omitempty"`
	Status TenantStatus `json:"status,omitempty"`
}

// TenantList is a list of Tenants.
// +kubebuilder:object:root=true
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tenant `json:"items"`
}

// KitStatus implements operatorkit.Object.
func (t *Tenant) KitStatus() *kitapi.Status { return &t.Status.Status }

// KitDeletionPolicy implements operatorkit.Object.
func (t *Tenant) KitDeletionPolicy() kitapi.DeletionPolicy { return t.Spec.DeletionPolicy }

// KitAdoptionAllowed implements operatorkit.Object.
func (t *Tenant) KitAdoptionAllowed() bool { return t.Spec.AdoptNamespaces }

// KitPaused implements operatorkit.Pausable.
func (t *Tenant) KitPaused() bool { return t.Spec.Paused }
