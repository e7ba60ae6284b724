package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/action"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// +kubebuilder:rbac:groups=kv.opctl.dev,resources=kvbackups,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=kv.opctl.dev,resources=kvbackups/status,verbs=get;patch
// +kubebuilder:rbac:groups=kv.opctl.dev,resources=kvbackups/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete

// BackupMountPath is where a backup Job and a restoring pod mount the
// target claim.
const BackupMountPath = "/backups"

// BackupHandler reconciles KVBackups: it runs the backup Job once, with
// operatorkit's action Runner, and records what the snapshot holds.
type BackupHandler struct {
	Client     client.Client
	Runner     *action.Runner
	ToolsImage string
	// Address is the host:port a Job reaches a pod at; nil is its DNS
	// name behind the headless Service.
	Address func(k *kvv1.KVStore, pod string) string
}

func setupBackups(mgr ctrl.Manager, opts Options) error {
	h := &BackupHandler{Client: mgr.GetClient(), ToolsImage: opts.ToolsImage,
		Runner: &action.Runner{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder(FieldManager)}}
	if opts.DataPath != nil {
		h.Address = opts.DataPath.Address
	}
	r := operatorkit.New(mgr, "kvbackup", func() *kvv1.KVBackup { return &kvv1.KVBackup{} }, h, operatorkit.Options{
		FieldManager: FieldManager + "-backup", MaxConcurrentReconciles: opts.Workers,
	})
	return r.SetupWithManager(mgr, &batchv1.Job{})
}

// Check refuses a backup of a store that does not exist or has no target.
func (h *BackupHandler) Check(ctx context.Context, b *kvv1.KVBackup) error {
	if b.Status.Action != nil && b.Status.Action.Finished() {
		return nil // done: the store may be gone since
	}
	k, err := h.store(ctx, b)
	if err != nil {
		return err
	}
	if h.ToolsImage == "" {
		return operatorkit.Terminal("NoToolsImage", errors.New("the operator runs without --tools-image (RELATED_IMAGE_TOOLS), the image of its backup program; set it on the operator's Deployment"))
	}
	if target(b, k) == nil {
		return operatorkit.Terminal("NoTarget", fmt.Errorf("neither spec.target nor the spec.backup.target of KVStore %s names a claim; set one", k.Name))
	}
	return nil
}

func (h *BackupHandler) store(ctx context.Context, b *kvv1.KVBackup) (*kvv1.KVStore, error) {
	k := &kvv1.KVStore{}
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Store}, k); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, operatorkit.Terminal("StoreNotFound", fmt.Errorf("spec.store: KVStore %s does not exist in namespace %s", b.Spec.Store, b.Namespace))
		}
		return nil, fmt.Errorf("reading KVStore %s: %w", b.Spec.Store, err)
	}
	return k, nil
}

func target(b *kvv1.KVBackup, k *kvv1.KVStore) *kvv1.ClaimTarget {
	switch {
	case b.Spec.Target != nil && b.Spec.Target.PersistentVolumeClaim != nil:
		return b.Spec.Target.PersistentVolumeClaim
	case k.Spec.Backup != nil:
		return k.Spec.Backup.Target.PersistentVolumeClaim
	}
	return nil
}

// Build returns nothing: the Job is the action Runner's.
func (h *BackupHandler) Build(context.Context, *kvv1.KVBackup) ([]client.Object, error) {
	return nil, nil
}

// Mutate has nothing to set.
func (h *BackupHandler) Mutate(context.Context, *kvv1.KVBackup, []client.Object) error { return nil }

// Repair starts the backup Job and observes it until it finishes.
func (h *BackupHandler) Repair(ctx context.Context, b *kvv1.KVBackup, _ []operatorkit.ApplyResult) error {
	if b.Status.Action != nil && b.Status.Action.Finished() {
		return nil
	}
	k, err := h.store(ctx, b)
	if err != nil {
		return err
	}
	a := h.action(b, k)
	st, err := h.Runner.Run(ctx, b, a, b.Status.Action)
	if err != nil {
		return err
	}
	b.Status.Action = &st
	switch st.Phase {
	case kitapi.ActionSucceeded:
		var res instance.BackupResult
		if err := json.Unmarshal([]byte(st.Message), &res); err != nil || res.SHA256 == "" || !plainName(res.File) {
			st.Phase, st.Message = kitapi.ActionFailed, fmt.Sprintf("the backup Job succeeded without a result: %q", st.Message)
			b.Status.Action = &st
			backupFailures.WithLabelValues(k.Namespace, k.Name).Inc()
			return nil
		}
		b.Status.File, b.Status.Size, b.Status.SHA256, b.Status.Keys = path.Join(k.Name, res.File), res.Size, res.SHA256, res.Keys
		if st.CompletionTime != nil {
			backupLastSuccess.WithLabelValues(k.Namespace, k.Name).Set(float64(st.CompletionTime.Unix()))
		}
	case kitapi.ActionFailed:
		backupFailures.WithLabelValues(k.Namespace, k.Name).Inc()
	}
	return nil
}

// action is the backup Job: the operator's backup program against the
// primary, writing into the claim.
func (h *BackupHandler) action(b *kvv1.KVBackup, k *kvv1.KVStore) action.Action {
	n := namesOf(k)
	claim := target(b, k)
	primary := primaryOf(k)
	b.Status.ClaimName, b.Status.Source = claim.ClaimName, primary
	addr := serverAddr(h.Address, k, primary)
	keep := 0
	if k.Spec.Backup != nil && b.Labels[StoreLabel] == k.Name {
		keep = int(retention(k))
	}
	restricted := &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return action.Action{
		Name: "backup", Key: "1", Deadline: time.Hour, Retries: 2, TTL: time.Hour,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](valkeyUID), FSGroup: ptr.To[int64](valkeyUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "backup", Image: h.ToolsImage, Command: []string{"/manager", "backup"},
				Args:         []string{"--addr", addr, "--dir", path.Join(BackupMountPath, k.Name), "--name", b.Name, "--keep", strconv.Itoa(keep)},
				Env:          []corev1.EnvVar{passwordEnv("VALKEY_PASSWORD", n.secret)},
				VolumeMounts: []corev1.VolumeMount{{Name: "backups", MountPath: BackupMountPath}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resourceMust("10m"), corev1.ResourceMemory: resourceMust("32Mi")},
					Limits: corev1.ResourceList{corev1.ResourceCPU: resourceMust("200m"), corev1.ResourceMemory: resourceMust("128Mi")}},
				SecurityContext: restricted,
			}},
			Volumes: []corev1.Volume{{Name: "backups", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.ClaimName}}}},
		}},
	}
}

// Status reports the backup's phase: Ready once the snapshot is verified.
func (h *BackupHandler) Status(_ context.Context, b *kvv1.KVBackup, _ []operatorkit.ApplyResult) (operatorkit.Observation, error) {
	a := b.Status.Action
	switch {
	case a == nil:
		return operatorkit.Observation{Progressing: true, Reason: "Starting", Message: "starting the backup Job"}, nil
	case a.Phase == kitapi.ActionSucceeded:
		return operatorkit.Observation{Ready: true, Available: true, Reason: "Succeeded",
			Message: fmt.Sprintf("%d keys, %d bytes in %s of claim %s (sha256 %s)", b.Status.Keys, b.Status.Size, b.Status.File, b.Status.ClaimName, b.Status.SHA256)}, nil
	case a.Phase == kitapi.ActionFailed:
		msg := "the backup failed: " + a.Message
		return operatorkit.Observation{Reason: "Failed", Message: msg, Degraded: &operatorkit.Problem{Reason: "BackupFailed", Stalled: true, Message: msg}}, nil
	}
	return operatorkit.Observation{Progressing: true, Reason: string(a.Phase), Message: fmt.Sprintf("Job %s is %s", a.Job, a.Phase)}, nil
}

var errNoBackup = errors.New("no backup")

// backupFor returns the KVBackup a store restores from, once it has
// succeeded.
func backupFor(ctx context.Context, c client.Reader, k *kvv1.KVStore) (*kvv1.KVBackup, error) {
	b := &kvv1.KVBackup{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Spec.Restore.Backup}, b); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: spec.restore.backup: KVBackup %s does not exist", errNoBackup, k.Spec.Restore.Backup)
		}
		return nil, err
	}
	if !b.Succeeded() {
		return nil, fmt.Errorf("%w: spec.restore.backup: KVBackup %s has not succeeded", errNoBackup, b.Name)
	}
	return b, nil
}

// plainName reports whether a snapshot's file name is one path element, so
// that a restore of it stays in the store's directory of the claim.
func plainName(name string) bool {
	return name != "" && name == path.Base(name) && !strings.HasPrefix(name, ".")
}
