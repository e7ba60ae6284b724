package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// HelmClient runs Helm SDK actions for releases in many namespaces on one
// shared REST config, discovery cache and REST mapper, so that a release
// costs no discovery round trips. Each release is guarded by its own
// lock: the Helm SDK is not safe for concurrent use on one release.
type HelmClient struct {
	config     *rest.Config
	discovery  discovery.CachedDiscoveryInterface
	Mapper     meta.RESTMapper
	maxHistory int
	log        func(format string, args ...any)
	// Records keeps the release records in the storage namespace, out of
	// the tenants' reach.
	Records *records.Store
	// Impersonate makes cfg act as tenant's actor.
	Impersonate func(cfg *rest.Config, tenant string) *rest.Config
	// actor makes the clients of a tenant's actor (actorClients).
	actor func(tenant string) (kubernetes.Interface, metadata.Interface, error)
	// legacyNames lists a page of a release's record-labelled Secrets by
	// name (legacy.go; a fake clientset serves no tables).
	legacyNames func(ctx context.Context, cs kubernetes.Interface, namespace, name, next string) ([]string, string, error)
	// namespaces reads namespaces with the controller's rights: in one
	// gone or going, or no longer the tenant's, the actor holds nothing
	// (namespaceLost).
	namespaces corev1client.NamespaceInterface
	// cluster builds the clients of a release's cluster-scoped objects,
	// which the controller writes itself once the grant policy passed
	// them (releaseKube.Build).
	cluster *kube.Client

	mu       sync.Mutex
	locks    map[string]*sync.Mutex
	migrated map[string]bool // releases whose legacy records were dropped from the tenant namespace

	caps capabilities
	// Created, when set, is told of every object Helm creates.
	Created func(runtime.Object)
}

func NewHelmClient(cfg *rest.Config, storageNamespace string, maxHistory int, log func(string, ...any)) (*HelmClient, error) {
	cfg = rest.CopyConfig(cfg)
	// Release records (Secrets of ~20 KB) go as protobuf, not as JSON with
	// the data base64-encoded once more: smaller and cheaper to decode on
	// both sides. Helm's object clients set JSON for themselves.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	records := records.NewStore(cs.CoreV1().Secrets(storageNamespace), storageNamespace)
	records.WithIndex(mc)
	cached := memory.NewMemCacheClient(dc)
	h := &HelmClient{
		config: cfg, discovery: cached, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached),
		maxHistory: maxHistory, log: log, locks: map[string]*sync.Mutex{}, migrated: map[string]bool{},
		Records: records, namespaces: cs.CoreV1().Namespaces(),
	}
	h.cluster = kube.New(&restGetter{h: h, config: cfg})
	h.actor, h.legacyNames = h.actorClients, legacyNames
	return h, nil
}

// lock takes the release's lock and returns its unlock.
func (h *HelmClient) lock(namespace, name string) func() {
	key := namespace + "/" + name
	h.mu.Lock()
	l, ok := h.locks[key]
	if !ok {
		l = &sync.Mutex{}
		h.locks[key] = l
	}
	h.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// action returns an action configuration for the releases of tenant in
// namespace, with their records in the storage namespace.
func (h *HelmClient) action(tenant, namespace string) (*action.Configuration, error) {
	cfg := new(action.Configuration)
	// Helm acts as the tenant's actor: the API server bounds what it does
	// in a namespace by what the tenant holds there (actor.go).
	getter := &restGetter{h: h, namespace: namespace, config: h.Impersonate(h.config, tenant)}
	if err := cfg.Init(getter, namespace, "secret", h.log); err != nil {
		return nil, fmt.Errorf("helm configuration for %s: %w", namespace, err)
	}
	cfg.Releases = storage.Init(h.storage(tenant, namespace))
	kc, ok := cfg.KubeClient.(*kube.Client)
	if !ok {
		return nil, fmt.Errorf("helm configuration for %s: unexpected Kubernetes client %T", namespace, cfg.KubeClient)
	}
	// An object without a namespace goes to the release namespace (Helm
	// would take the kubeconfig's, "default").
	kc.Namespace = namespace
	// Without a client getter Helm renders templates with no cluster
	// access: a chart's `lookup` must not read the cluster (another
	// tenant's Secrets, the release records) with the controller's rights.
	// The capabilities are set per action (setCapabilities).
	cfg.RESTClientGetter = nil
	cfg.KubeClient = &releaseKube{Client: kc, cluster: h.cluster, created: h.Created, namespace: namespace, gone: func(ctx context.Context, ns string) (bool, error) { return h.namespaceLost(ctx, tenant, ns) }}
	return cfg, nil
}

// storage is the driver of tenant's release records of namespace.
func (h *HelmClient) storage(tenant, namespace string) driver.Driver {
	return &records.Driver{Store: h.Records, Tenant: tenant, Namespace: namespace, Log: h.log}
}

// legacy is the driver of the records Helm keeps by default: in the
// release namespace, where the tenant can write. It is only written
// (handBack), never read, as the tenant's actor.
func (h *HelmClient) legacy(tenant, namespace string) (driver.Driver, error) {
	cs, _, err := h.actor(tenant)
	if err != nil {
		return nil, err
	}
	d := driver.NewSecrets(cs.CoreV1().Secrets(namespace))
	d.Log = h.log
	return d, nil
}

// actorClients are clients acting as tenant's actor, for what the
// controller does in the tenant's namespaces outside Helm's actions.
func (h *HelmClient) actorClients(tenant string) (kubernetes.Interface, metadata.Interface, error) {
	cfg := h.Impersonate(h.config, tenant)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cs, mc, nil
}

// namespaceLost reports whether namespace ns is no longer tenant's: deleted,
// being deleted, or labelled for another tenant or none (the platform took
// it, deleted it and gave the name to another while the controller was not
// looking). The actor holds nothing there, and nothing there is the
// tenant's release's to delete or read.
func (h *HelmClient) namespaceLost(ctx context.Context, tenant, ns string) (bool, error) {
	if h.namespaces == nil {
		return false, nil
	}
	n, err := h.namespaces.Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	return n.DeletionTimestamp != nil || n.Labels[tenancyv1.LabelTenant] != tenant, nil
}

// releaseRef names a release of a tenant in the client's maps.
func releaseRef(tenant, namespace, name string) string {
	return tenant + "/" + namespace + "/" + name
}

// last returns the latest revision of a release, or nil.
func last(cfg *action.Configuration, name string) (*release.Release, error) {
	rel, err := cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	return rel, err
}

// latestReader is a storage driver that reads the latest and latest
// deployed revisions without the whole history (recordDriver).
type latestReader interface {
	latest(name string) (cur, deployed *release.Release, ok bool)
}

// LastAndDeployed returns the latest revision and the latest deployed
// one (nil when there is none) from one read of the history.
func LastAndDeployed(cfg *action.Configuration, name string) (cur, deployed *release.Release, err error) {
	if d, ok := cfg.Releases.Driver.(latestReader); ok {
		if cur, deployed, ok := d.latest(name); ok {
			return cur, deployed, nil
		}
	}
	hist, err := cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, r := range hist {
		if cur == nil || r.Version > cur.Version {
			cur = r
		}
		if r.Info.Status == release.StatusDeployed && (deployed == nil || r.Version > deployed.Version) {
			deployed = r
		}
	}
	return cur, deployed, nil
}

// interruptedPrefix starts the description of recovered revisions.
const interruptedPrefix = "interrupted"

// markFailed records a pending revision left by a crashed controller as
// failed, so that Helm accepts new operations on the release. It writes
// the whole record, read again: the one observed may lack the chart.
func markFailed(cfg *action.Configuration, observed *release.Release) error {
	rel, err := cfg.Releases.Get(observed.Name, observed.Version)
	if err != nil {
		return err
	}
	if rel.Info.Status != observed.Info.Status {
		return fmt.Errorf("revision %d of %s changed from %s to %s since it was read", rel.Version, rel.Name, observed.Info.Status, rel.Info.Status)
	}
	rel.SetStatus(release.StatusFailed, fmt.Sprintf("%s while %s: recovered by the tenancy controller", interruptedPrefix, rel.Info.Status))
	return cfg.Releases.Update(rel)
}

func (h *HelmClient) install(ctx context.Context, cfg *action.Configuration, spec Spec, guard postrender.PostRenderer) (*release.Release, error) {
	in := action.NewInstall(cfg)
	in.PostRenderer = guard
	in.ReleaseName, in.Namespace = spec.Name, spec.Namespace
	in.SkipCRDs = true // the controller owns shared CRDs
	// Helm runs hooks past the post-renderer, so no check would see them:
	// a tenant's release runs none (noHooks).
	in.DisableHooks = true
	in.Timeout = 2 * time.Minute
	// The API server validates every object anyway; client-side OpenAPI
	// validation would fetch the whole schema for each release.
	in.DisableOpenAPIValidation = true
	in.SkipSchemaValidation = valuesMeetSchema(spec.Install, spec.Values)
	if err := h.setCapabilities(cfg); err != nil {
		return nil, err
	}
	return in.RunWithContext(ctx, spec.Install, spec.Values)
}

func (h *HelmClient) upgrade(ctx context.Context, cfg *action.Configuration, spec Spec, guard postrender.PostRenderer) (*release.Release, error) {
	up := action.NewUpgrade(cfg)
	up.PostRenderer = guard
	up.Namespace = spec.Namespace
	up.SkipCRDs = true
	up.DisableHooks = true
	up.MaxHistory = 0 // prune.go
	up.Timeout = 2 * time.Minute
	up.DisableOpenAPIValidation = true
	// With no values Helm reuses the release's, which it validates.
	up.SkipSchemaValidation = len(spec.Values) > 0 && valuesMeetSchema(spec.Install, spec.Values)
	if err := h.setCapabilities(cfg); err != nil {
		return nil, err
	}
	return up.RunWithContext(ctx, spec.Name, spec.Install, spec.Values)
}

func (h *HelmClient) rollback(cfg *action.Configuration, name string, version int) error {
	rb := action.NewRollback(cfg)
	rb.Version = version
	rb.DisableHooks = true
	rb.MaxHistory = 0 // prune.go
	rb.Timeout = 2 * time.Minute
	return rb.Run(name)
}

// uninstall removes a release, deleting only the objects it owns
// (releaseKube.deleteOwned).
func (h *HelmClient) uninstall(cfg *action.Configuration, name string) error {
	if k, ok := cfg.KubeClient.(*releaseKube); ok {
		k.release = name
		defer func() { k.release = "" }()
	}
	un := action.NewUninstall(cfg)
	un.DisableHooks = true
	un.Timeout = 2 * time.Minute
	_, err := un.Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil
	}
	return err
}

// restGetter hands Helm the shared discovery and mapper, and config.
type restGetter struct {
	h         *HelmClient
	namespace string
	config    *rest.Config
}

var _ genericclioptions.RESTClientGetter = &restGetter{}

func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }
func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.h.discovery, nil
}
func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.h.Mapper, nil }
func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	cfg := clientcmdapi.NewConfig()
	cfg.Contexts["tenancy"] = &clientcmdapi.Context{Namespace: g.namespace}
	cfg.CurrentContext = "tenancy"
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{})
}
