package controller

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
)

// The operator needs exactly these permissions; config/rbac/role.yaml is
// generated from them by make generate.
//
// +kubebuilder:rbac:groups=kv.opctl.dev,resources=kvstores,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=kv.opctl.dev,resources=kvstores/status,verbs=get;patch
// +kubebuilder:rbac:groups=kv.opctl.dev,resources=kvstores/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;services;serviceaccounts,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=kv.opctl.dev,resources=kvbackups,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Handler reconciles KVStores; it implements operatorkit.Handler and
// operatorkit.Repairer.
type Handler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads cluster-scoped objects (StorageClasses) uncached, so
	// a namespace-scoped install needs no cluster-wide watch.
	APIReader client.Reader
	// RESTMapper tells whether the ServiceMonitor API is served.
	RESTMapper meta.RESTMapper
	// Recorder records Events on KVStores.
	Recorder events.EventRecorder
	// RelatedImage is RELATED_IMAGE_KVSTORE: the default Valkey image.
	RelatedImage string
	// ExporterImage is RELATED_IMAGE_EXPORTER: the metrics sidecar.
	ExporterImage string
	// ToolsImage runs the backup and restore programs: the operator's
	// own image.
	ToolsImage string
	// DataPath reaches the servers; nil leaves them to their startup
	// configuration: no failover, remediation or autoscaling.
	DataPath *DataPath
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	problems sync.Map // namespace/name → *operatorkit.Problem of the data path
	lost     sync.Map // namespace/name → time.Time the primary was first found unreachable
}

// Options configure Setup.
type Options struct {
	// RelatedImage is the default Valkey image (RELATED_IMAGE_KVSTORE).
	RelatedImage string
	// ExporterImage is the redis_exporter image (RELATED_IMAGE_EXPORTER).
	ExporterImage string
	// ToolsImage is the image whose /manager runs backups and restores.
	ToolsImage string
	// DataPath, when set, lets the operator read and steer the servers.
	DataPath *DataPath
	// MaxCreates bounds the objects created per reconcile; zero is no bound.
	MaxCreates int
	// Workers is the number of concurrent reconciles.
	Workers int
}

// DefaultExporterImage is the metrics sidecar's image when
// Options.ExporterImage is empty.
const DefaultExporterImage = "oliver006/redis_exporter:v1.62.0"

// Setup registers the KVStore and KVBackup controllers with mgr and
// returns the KVStore reconciler.
func Setup(mgr ctrl.Manager, opts Options) (*operatorkit.Reconciler[*kvv1.KVStore], error) {
	if opts.ExporterImage == "" {
		opts.ExporterImage = DefaultExporterImage
	}
	h := &Handler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), RESTMapper: mgr.GetRESTMapper(), Recorder: mgr.GetEventRecorder(FieldManager),
		RelatedImage: opts.RelatedImage, ExporterImage: opts.ExporterImage, ToolsImage: opts.ToolsImage, DataPath: opts.DataPath}
	r := operatorkit.New(mgr, "kvstore", func() *kvv1.KVStore { return &kvv1.KVStore{} }, h, operatorkit.Options{
		FieldManager:            FieldManager,
		LegacyFieldManagers:     []string{LegacyFieldManager},
		MaxCreates:              opts.MaxCreates,
		MaxConcurrentReconciles: opts.Workers,
	})
	err := r.Builder(mgr, &corev1.ServiceAccount{}, &corev1.ConfigMap{}, &corev1.Secret{},
		&corev1.Service{}, &appsv1.StatefulSet{}, &policyv1.PodDisruptionBudget{}).
		Watches(&kvv1.KVBackup{}, handler.EnqueueRequestsFromMapFunc(storeOfBackup)).
		Complete(r)
	if err != nil {
		return nil, err
	}
	return r, setupBackups(mgr, opts)
}

// storeOfBackup maps a KVBackup to its store, whose phase follows it.
func storeOfBackup(_ context.Context, o client.Object) []reconcile.Request {
	b, ok := o.(*kvv1.KVBackup)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Store}}}
}

// Check refuses specs that cannot work, before anything is touched.
func (h *Handler) Check(_ context.Context, k *kvv1.KVStore) error {
	if err := checkVersion(k.Spec.Version); err != nil {
		return operatorkit.Terminal("UnsupportedVersion", err)
	}
	if err := checkConfig(k.Spec.Config); err != nil {
		return operatorkit.Terminal("InvalidConfig", err)
	}
	if err := checkSchedule(k); err != nil {
		return operatorkit.Terminal("InvalidSchedule", err)
	}
	return nil
}

func (h *Handler) event(k client.Object, related client.Object, reason, format string, args ...any) {
	if h.Recorder != nil {
		h.Recorder.Eventf(k, related, corev1.EventTypeNormal, reason, reason, format, args...)
	}
}

func (h *Handler) warn(k client.Object, reason, format string, args ...any) {
	if h.Recorder != nil {
		h.Recorder.Eventf(k, nil, corev1.EventTypeWarning, reason, reason, format, args...)
	}
}
