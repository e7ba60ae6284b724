package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// DefaultVersion is the Valkey version a KVStore runs when spec.version is
// not set.
const DefaultVersion = "8.1.3"

// KVStoreSpec is the desired state of a KVStore.
type KVStoreSpec struct {
	// Version is the Valkey version to run, as MAJOR.MINOR.PATCH. Versions
	// from 7.2.0 up to, not including, 9.0.0 are supported. Changing it
	// rolls the pods over one at a time and rolls back when the new version
	// does not become ready within upgrade.progressDeadlineSeconds.
	// +kubebuilder:default="8.1.3"
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+$`
	// +optional
	Version string `json:"version,omitempty"`

	// Image overrides the container image; its tag is ignored and
	// spec.version is used. Default: the operator's RELATED_IMAGE_KVSTORE,
	// else valkey/valkey.
	// +optional
	Image string `json:"image,omitempty"`

	// Replicas is the number of Valkey pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Config holds valkey.conf directives, name to value, for example
	// maxmemory: 100mb. port, dir and requirepass are managed by the
	// operator and cannot be set.
	// +optional
	Config map[string]string `json:"config,omitempty"`

	// Resources of the Valkey container. Default: requests 100m CPU and
	// 128Mi memory, limits 500m CPU and 256Mi memory.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Storage gives each pod a PersistentVolumeClaim for its data. Without
	// it the data lives in an emptyDir and is lost with the pod.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// NodeSelector constrains the pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Upgrade tunes version upgrades.
	// +optional
	Upgrade UpgradeSpec `json:"upgrade,omitempty"`

	// DeletionPolicy says what deleting the KVStore does: Delete removes
	// every object the operator created, including the data volumes;
	// Orphan disconnects them and leaves the store running.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy kitapi.DeletionPolicy `json:"deletionPolicy,omitempty"`

	// AdoptExisting allows the operator to take over objects that already
	// exist with the names it would use and have no controller.
	// +optional
	AdoptExisting bool `json:"adoptExisting,omitempty"`
}

// StorageSpec describes the data volumes.
type StorageSpec struct {
	// Size of each pod's volume. It can grow where the StorageClass allows
	// volume expansion; it never shrinks.
	// +kubebuilder:validation:XIntOrString
	Size resource.Quantity `json:"size"`

	// StorageClassName of the volumes; empty uses the cluster default.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// UpgradeSpec tunes version upgrades.
type UpgradeSpec struct {
	// ProgressDeadlineSeconds is how long the pods of a new version may
	// take to become ready before the operator rolls back.
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=5
	// +optional
	ProgressDeadlineSeconds int32 `json:"progressDeadlineSeconds,omitempty"`
}

// KVStoreStatus is the observed state of a KVStore.
type KVStoreStatus struct {
	kitapi.Status `json:",inline"`

	// Endpoint is the host:port clients connect to.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// SecretName names the Secret whose "password" key authenticates
	// clients.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// ReadyReplicas is the number of ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// CurrentVersion is the version every pod runs once a rollout is
	// complete: the version actually serving.
	// +optional
	CurrentVersion string `json:"currentVersion,omitempty"`

	// TargetVersion is the version being rolled out, if any.
	// +optional
	TargetVersion string `json:"targetVersion,omitempty"`

	// FailedVersion is a version whose rollout failed and was rolled back;
	// it is not retried until spec.version changes.
	// +optional
	FailedVersion string `json:"failedVersion,omitempty"`

	// UpgradeStartTime is when the rollout of targetVersion began.
	// +optional
	UpgradeStartTime *metav1.Time `json:"upgradeStartTime,omitempty"`
}

// KVStore is a Redis-protocol key-value store run with Valkey.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kvs;kv,categories=opctl
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.currentVersion`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KVStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec KVStoreSpec `json:"spec,omitempty"`
	// Status is the observed state.
	// +optional
	Status KVStoreStatus `json:"status,omitempty"`
}

// KVStoreList is a list of KVStores.
// +kubebuilder:object:root=true
type KVStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the KVStores.
	Items []KVStore `json:"items"`
}

// KitStatus implements operatorkit.Object.
func (k *KVStore) KitStatus() *kitapi.Status { return &k.Status.Status }

// KitDeletionPolicy implements operatorkit.Object.
func (k *KVStore) KitDeletionPolicy() kitapi.DeletionPolicy { return k.Spec.DeletionPolicy }

// KitAdoptionAllowed implements operatorkit.Object.
func (k *KVStore) KitAdoptionAllowed() bool { return k.Spec.AdoptExisting }
