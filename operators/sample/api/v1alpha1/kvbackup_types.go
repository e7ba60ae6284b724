package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// KVBackupSpec names the store to back up.
type KVBackupSpec struct {
	// Store is the KVStore to back up, in the same namespace.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="store cannot change"
	Store string `json:"store"`
	// Target overrides the store's spec.backup.target.
	// +optional
	Target *BackupTarget `json:"target,omitempty"`
}

// KVBackupStatus is what the backup wrote.
type KVBackupStatus struct {
	kitapi.Status `json:",inline"`

	// Action is the backup Job's state.
	// +optional
	Action *kitapi.ActionStatus `json:"action,omitempty"`
	// ClaimName is the claim the snapshot is in.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// File is the snapshot's path from the claim's root.
	// +optional
	File string `json:"file,omitempty"`
	// Size of the snapshot in bytes.
	// +optional
	Size int64 `json:"size,omitempty"`
	// SHA256 of the snapshot, as the backup verified it; a restore checks
	// the file against it.
	// +optional
	SHA256 string `json:"sha256,omitempty"`
	// Keys in the store when the snapshot began.
	// +optional
	Keys int64 `json:"keys,omitempty"`
	// Source is the pod the snapshot was taken from.
	// +optional
	Source string `json:"source,omitempty"`
}

// KVBackup is one RDB snapshot of a KVStore, taken by a Job over the
// replication protocol and verified by checksum.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kvb,categories=opctl
// +operator-sdk:csv:customresourcedefinitions:displayName="KV Backup",resources={{Job,v1,""}}
// +kubebuilder:printcolumn:name="Store",type=string,JSONPath=`.spec.store`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.action.phase`
// +kubebuilder:printcolumn:name="Keys",type=integer,JSONPath=`.status.keys`
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.status.size`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KVBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KVBackupSpec `json:"spec"`
	// +optional
	Status KVBackupStatus `json:"status,omitempty"`
}

// KVBackupList is a list of KVBackups.
// +kubebuilder:object:root=true
type KVBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KVBackup `json:"items"`
}

// KitStatus implements operatorkit.Object.
func (b *KVBackup) KitStatus() *kitapi.Status { return &b.Status.Status }

// KitDeletionPolicy implements operatorkit.Object: a backup owns only its
// Job.
func (b *KVBackup) KitDeletionPolicy() kitapi.DeletionPolicy { return kitapi.DeletionDelete }

// KitAdoptionAllowed implements operatorkit.Object.
func (b *KVBackup) KitAdoptionAllowed() bool { return false }

// Succeeded reports whether the snapshot was written and verified.
func (b *KVBackup) Succeeded() bool {
	return b.Status.Action != nil && b.Status.Action.Phase == kitapi.ActionSucceeded && b.Status.SHA256 != ""
}
