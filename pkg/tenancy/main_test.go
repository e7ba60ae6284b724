package tenancy_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/packaging"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	releaserecords "opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

var (
	cluster *testcluster.Cluster
	// cl is an admin client with the tenancy types.
	cl client.Client
	// managerBin is the sample operator, opctlBin the CLI.
	managerBin, opctlBin string
	// controllerConfig and controllerKubeconfig authenticate as the
	// ServiceAccount of charts/opctl, with the chart's RBAC: every
	// controller of the tests runs so.
	controllerConfig *rest.Config
	// controllerUser is the controller's user name (controllerIdentity).
	controllerUser string
	// controllerRBAC are the RBAC objects of charts/opctl.
	controllerRBAC       []*unstructured.Unstructured
	controllerKubeconfig string
)

const sampleProject = "../../operators/sample"

// chartRoles are the ClusterRoles charts/opctl's Deployment names for
// every Tenant (--tenant-cluster-roles), none by default: the sample
// operator fits the shipped baseline.
var chartRoles []string

// chartRolesConfigMap is the ConfigMap of further such ClusterRoles that
// charts/opctl's Deployment names (its tenantClusterRoles value).
var chartRolesConfigMap string

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster, setup)) }

func setup(c *testcluster.Cluster) (func(), error) {
	var err error
	if cl, err = client.New(c.Config, client.Options{Scheme: tenancy.Scheme()}); err != nil {
		return nil, err
	}
	if err := c.InstallCRDs(context.Background(), "../../config/crd/bases"); err != nil {
		return nil, err
	}
	// OLM's API and aggregated roles, as on a cluster with OLM: admin may
	// then create Subscriptions, which the guardrails must stop.
	if err := c.InstallOLMAPI(context.Background()); err != nil {
		return nil, err
	}
	// The controller's namespace, which holds every release record.
	storage := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenancy.DefaultStorageNamespace}}
	if err := cl.Create(context.Background(), storage); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	if err := ensureAPIServerSlice(context.Background()); err != nil {
		return nil, err
	}
	// The guardrails, as charts/opctl ships them.
	if err := installGuardrails(context.Background()); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "opctl-tenancy-")
	if err != nil {
		return nil, err
	}
	if controllerConfig, controllerKubeconfig, err = controllerIdentity(context.Background(), c, cl, dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	testcluster.AfterTests(checkRightsExercised)
	testcluster.AfterTests(checkNoTestGrants)
	chartOpts, err := chartControllerOptions()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	chartRoles = append([]string{}, chartOpts.ClusterRoles...)
	chartRolesConfigMap = chartOpts.ClusterRolesConfigMap
	managerBin, err = testcluster.GoBuild(dir, "opctl.dev/opctl/operators/sample/cmd", "")
	if err == nil {
		opctlBin, err = testcluster.GoBuild(dir, "opctl.dev/opctl/cmd/opctl", "")
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return func() { os.RemoveAll(dir) }, nil
}

// startController runs the controller in this process until the test
// ends, or until the stop it returns is called. Unless opts names
// ClusterRoles (an empty list: none), the controller names those
// charts/opctl's Deployment does.
func startController(t *testing.T, opts tenancy.Options) (stop func()) {
	t.Helper()
	shareSampleCRDs(t)
	if opts.ClusterRoles == nil {
		opts.ClusterRoles = chartRoles
	}
	if opts.ClusterRolesConfigMap == "" {
		opts.ClusterRolesConfigMap = chartRolesConfigMap
	}
	// Tests start one controller after another in this process.
	skip := true
	cacheOpts, err := tenancy.CacheOptions(controllerConfig, opts)
	if err != nil {
		t.Fatal(err)
	}
	stop, err = cluster.StartManagerAs(controllerConfig, ctrl.Options{Scheme: tenancy.Scheme(), Cache: cacheOpts,
		Controller: config.Controller{SkipNameValidation: &skip}}, "opctl-tenancy",
		func(mgr ctrl.Manager) error { return tenancy.Setup(mgr, opts) })
	if err != nil {
		t.Fatal(err)
	}
	stop = sync.OnceFunc(stop)
	t.Cleanup(stop)
	return stop
}

// sampleChart packages the sample operator's chart at version with the
// operator image tag version, from project (default the sample).
func sampleChart(t testing.TB, project, version string) string {
	t.Helper()
	if project == "" {
		project = sampleProject
	}
	out := t.TempDir()
	if _, err := packaging.Package(context.Background(), project, packaging.PackageOptions{
		Out: out, Targets: []string{"chart"}, Load: packaging.Options{Version: version, Image: "opctl/kvstore-operator:" + version},
	}); err != nil {
		t.Fatalf("packaging %s %s: %v", project, version, err)
	}
	return filepath.Join(out, "charts", "sample-operator")
}

func suffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newTenant returns a Tenant with one sample operator instance.
func newTenant(name string, namespaces []string, chart string, instances int32, owners ...string) *tenancyv1.Tenant {
	t := &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenancyv1.TenantSpec{Namespaces: namespaces}}
	for _, o := range owners {
		t.Spec.Owners = append(t.Spec.Owners, rbacSubject(o))
	}
	if chart != "" {
		t.Spec.Operators = []tenancyv1.OperatorSpec{{Name: "kv", Chart: &tenancyv1.ChartSource{Path: chart}, Instances: instances}}
	}
	return t
}

// createTenant creates t and deletes it when the test ends.
func createTenant(t testing.TB, tenant *tenancyv1.Tenant) {
	t.Helper()
	shareSampleCRDs(t)
	if err := cl.Create(context.Background(), tenant); err != nil {
		t.Fatalf("creating Tenant %s: %v", tenant.Name, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: tenant.Name}})
	})
}

// waitTenant waits until check passes on the Tenant.
func waitTenant(t testing.TB, name string, timeout time.Duration, what string, check func(*tenancyv1.Tenant) error) *tenancyv1.Tenant {
	t.Helper()
	tn := &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}
	testcluster.WaitObject(t, cl, tn, timeout, what, check)
	return tn
}

func ready(tn *tenancyv1.Tenant) error {
	if err := testcluster.ReadyAt(tn, tn.Status.Conditions, tn.Status.ObservedGeneration); err != nil {
		return fmt.Errorf("%w; operators %s", err, dump(tn.Status.Operators))
	}
	return nil
}

func rbacSubject(user string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// storedRelease reads revision version of tenant's release name (in
// namespace ns) from the controller's storage namespace.
func storedRelease(t testing.TB, tenant, ns, name string, version int) *release.Release {
	t.Helper()
	key := fmt.Sprintf("sh.helm.release.v1.%s.%s.%s.v%d", tenant, ns, name, version)
	sec, err := cluster.Client.CoreV1().Secrets(tenancy.DefaultStorageNamespace).Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("release record %s: %v", key, err)
	}
	if sec.Labels[releaserecords.LabelRecordTenant] != tenant || sec.Labels[releaserecords.LabelRecordNamespace] != ns {
		t.Errorf("release record %s labels %v", key, sec.Labels)
	}
	rel, err := tenancy.DecodeRelease(string(sec.Data["release"]))
	if err != nil {
		t.Fatalf("decoding %s: %v", key, err)
	}
	return rel
}

// storedRecords counts the release records of tenant in the storage
// namespace.
func storedRecords(ctx context.Context, tenant string) (int, error) {
	var secrets corev1.SecretList
	err := cl.List(ctx, &secrets, client.InNamespace(tenancy.DefaultStorageNamespace), client.MatchingLabels{releaserecords.LabelRecordTenant: tenant, "owner": "helm"})
	return len(secrets.Items), err
}

// shareSampleCRDs labels the sample and memcached operators' CRDs shared where another
// package's tests on the shared control plane (the sample's controller
// tests, e2e) installed them unlabelled, as a platform team that installed
// them itself would (README): only the label makes a kind the tenants'.
func shareSampleCRDs(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{"kvstores.kv.opctl.dev", "kvbackups.kv.opctl.dev", "memcacheds.cache.opctl.dev"} {
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, crd); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if crd.Labels[tenancyv1.LabelSharedCRD] == "true" {
			continue
		}
		patch := client.MergeFrom(crd.DeepCopy())
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		crd.Labels[tenancyv1.LabelSharedCRD] = "true"
		if err := cl.Patch(ctx, crd, patch); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}
