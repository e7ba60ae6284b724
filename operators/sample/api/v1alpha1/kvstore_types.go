package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
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

	// Lifecycle is the lifecycle phase wished for: Running (the default),
	// Servicing (maintenance: the store serves while in service) or
	// Stopping (scale to zero pods for good; the claims stay). The API
	// server refuses a change the lifecycle graph forbids.
	// +optional
	Lifecycle kitapi.Lifecycle `json:"lifecycle,omitempty"`
	// AdoptExisting allows the operator to take over objects that already
	// exist with the names it would use and have no controller.
	// +optional
	AdoptExisting bool `json:"adoptExisting,omitempty"`

	// Mode is what the store is for, and sets maxmemory-policy unless
	// spec.config does: cache evicts the least recently used keys at
	// maxmemory (allkeys-lru); store refuses writes there instead
	// (noeviction), so no data is lost silently.
	// +kubebuilder:validation:Enum=cache;store
	// +kubebuilder:default=store
	// +optional
	Mode string `json:"mode,omitempty"`

	// Tuning derives settings from the pod's resources.
	// +optional
	Tuning TuningSpec `json:"tuning,omitempty"`

	// Failover tunes the promotion of a replica when the primary is lost.
	// +optional
	Failover FailoverSpec `json:"failover,omitempty"`

	// Backup schedules backups and keeps a number of them.
	// +optional
	Backup *BackupSpec `json:"backup,omitempty"`

	// Restore creates the store from a KVBackup. It is set at creation
	// only: the backup is loaded into the empty data volume of the first
	// pod, and the replicas copy it from there.
	// +optional
	Restore *RestoreSpec `json:"restore,omitempty"`

	// Autoscaling sets the number of pods from the load the servers
	// report, within minReplicas and maxReplicas; spec.replicas is then
	// ignored.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`
}

// The modes of a store.
const (
	ModeCache = "cache"
	ModeStore = "store"
)

// TuningSpec tunes the server from the pod's resources.
type TuningSpec struct {
	// MaxMemoryPercent of the container's memory limit becomes maxmemory,
	// leaving the rest for the copy-on-write of a snapshot and the
	// replication buffers. 0 turns it off; an explicit spec.config
	// maxmemory always wins.
	// +kubebuilder:default=75
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=95
	// +optional
	MaxMemoryPercent *int32 `json:"maxMemoryPercent,omitempty"`
}

// FailoverSpec tunes automatic failover.
type FailoverSpec struct {
	// After is how long the primary may be unreachable before the most
	// advanced replica is promoted.
	// +kubebuilder:default="30s"
	// +optional
	After *metav1.Duration `json:"after,omitempty"`
}

// BackupSpec schedules backups of a store.
type BackupSpec struct {
	// Schedule is a cron expression (five fields, or @daily and the like)
	// at which a KVBackup is created. Empty takes no scheduled backups;
	// KVBackups can still be created by hand.
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// Retention is how many successful backups of the store are kept:
	// older KVBackups are deleted, and their snapshots with them.
	// +kubebuilder:default=7
	// +kubebuilder:validation:Minimum=1
	// +optional
	Retention int32 `json:"retention,omitempty"`

	// Target is where the snapshots go.
	Target BackupTarget `json:"target"`
}

// BackupTarget is where snapshots are written.
type BackupTarget struct {
	// PersistentVolumeClaim names a claim in the store's namespace; the
	// snapshots go in a directory named after the store. A restore mounts
	// it into the new store's pods too, so across nodes it must be
	// ReadWriteMany.
	PersistentVolumeClaim *ClaimTarget `json:"persistentVolumeClaim"`
}

// ClaimTarget is a PersistentVolumeClaim.
type ClaimTarget struct {
	ClaimName string `json:"claimName"`
}

// RestoreSpec names the backup a store starts from.
type RestoreSpec struct {
	// Backup is a KVBackup in the store's namespace that succeeded.
	Backup string `json:"backup"`
}

// AutoscalingSpec scales the store from its own load.
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
type AutoscalingSpec struct {
	// +kubebuilder:validation:Minimum=1
	MinReplicas int32 `json:"minReplicas"`
	// +kubebuilder:validation:Maximum=9
	MaxReplicas int32 `json:"maxReplicas"`
	// TargetOpsPerSecond is the load one pod should serve (INFO's
	// instantaneous_ops_per_sec). The store scales out at once to what
	// the load needs, and in by one pod when the others would each serve
	// less than 80% of it.
	// +kubebuilder:validation:Minimum=1
	TargetOpsPerSecond int64 `json:"targetOpsPerSecond"`
	// CooldownSeconds is the least time between two scalings.
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=0
	// +optional
	CooldownSeconds int32 `json:"cooldownSeconds,omitempty"`
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

	// Primary is the pod that takes writes; the others replicate it.
	// +optional
	Primary string `json:"primary,omitempty"`

	// Replicas is the number of pods the operator runs: spec.replicas, or
	// what autoscaling decided.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Failover records the promotions of replicas.
	// +optional
	Failover *FailoverStatus `json:"failover,omitempty"`

	// Autoscaling is the last scaling decision.
	// +optional
	Autoscaling *AutoscalingStatus `json:"autoscaling,omitempty"`

	// Backup records the scheduled backups.
	// +optional
	Backup *BackupStatus `json:"backup,omitempty"`

	// Config is the spec.config that last ran on every pod, kept to roll
	// a config change back when it crash-loops the pods.
	// +optional
	Config *ConfigStatus `json:"config,omitempty"`
}

// FailoverStatus records failovers.
type FailoverStatus struct {
	// Count of promotions so far.
	Count int32 `json:"count,omitempty"`
	// PrimaryLostSince is when the primary was first found unreachable;
	// empty while it serves.
	// +optional
	PrimaryLostSince *metav1.Time `json:"primaryLostSince,omitempty"`
	// LastTime, From and To describe the last promotion.
	// +optional
	LastTime *metav1.Time `json:"lastTime,omitempty"`
	// +optional
	From string `json:"from,omitempty"`
	// +optional
	To string `json:"to,omitempty"`
}

// AutoscalingStatus is the autoscaler's state.
type AutoscalingStatus struct {
	// OpsPerSecond is the load last read, over all pods.
	OpsPerSecond int64 `json:"opsPerSecond,omitempty"`
	// LastScaleTime is when the number of pods last changed.
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`
	// Reason explains the last decision.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// BackupStatus records the scheduled backups.
type BackupStatus struct {
	// LastScheduleTime is the schedule time of the last KVBackup created.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// LastSuccessful names the newest KVBackup that succeeded.
	// +optional
	LastSuccessful string `json:"lastSuccessful,omitempty"`
}

// ConfigStatus tracks config changes.
type ConfigStatus struct {
	// Good is the spec.config that last ran ready on every pod.
	// +optional
	Good map[string]string `json:"good,omitempty"`
	// FailedSHA256 is the checksum of a spec.config that crash-looped the
	// pods and was rolled back; it is not tried again until spec.config
	// changes.
	// +optional
	FailedSHA256 string `json:"failedSHA256,omitempty"`
}

// KVStore is a Redis-protocol key-value store run with Valkey.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:resource:shortName=kvs;kv,categories=opctl
// +kubebuilder:validation:XValidation:rule="has(self.spec.restore) == has(oldSelf.spec.restore) && (!has(self.spec.restore) || self.spec.restore == oldSelf.spec.restore)",message="spec.restore is set when the KVStore is created and cannot change"
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.status.primary`
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

// KitWish implements operatorkit.Wisher.
func (k *KVStore) KitWish() lifecycle.Phase { return lifecycle.Phase(k.Spec.Lifecycle) }
