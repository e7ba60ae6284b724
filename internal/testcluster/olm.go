package testcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// OLMNamespace is where the OLM operators run their global catalogs.
const OLMNamespace = "olm"

// StartOLM installs OLM v0's CRDs and runs its olm and catalog operators
// (built by hack/testbin.sh) as processes on this control plane until the
// test ends. Both listen on :8080, hard-coded, so one OLM runs per
// machine at a time. Bundles must come from image-less catalogs: the
// unpack Job of an image bundle never runs under kwok.
func (c *Cluster) StartOLM(t testing.TB) {
	t.Helper()
	bin, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	if l, err := net.Listen("tcp", ":8080"); err != nil {
		t.Fatalf("OLM needs port 8080, which is in use: %v", err)
	} else {
		l.Close()
	}
	ctx := context.Background()
	if err := c.InstallOLMAPI(ctx); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OLMNamespace}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// OLM's own CI wraps its clients, when CI is set at all, with a round
	// tripper that panics on any object created without its olm.managed
	// label, a TokenRequest for an OperatorGroup's ServiceAccount
	// included: a development aid that no cluster runs with.
	env := environ([]string{"CI"}, "KUBECONFIG="+c.Kubeconfig)
	dir := t.TempDir()
	olm := runProcess(t, filepath.Join(dir, "olm.log"), filepath.Join(bin, "olm"), env,
		"--namespace", OLMNamespace, "--writeStatusName", "", "--writePackageServerStatusName", "")
	catalog := runProcess(t, filepath.Join(dir, "catalog.log"), filepath.Join(bin, "catalog"), env,
		"--namespace", OLMNamespace, "--kubeconfig", c.Kubeconfig, "--writeStatusName", "")
	// Both must stay up: a crash shows in the first seconds, or fails the
	// test when it ends.
	time.Sleep(3 * time.Second)
	for _, p := range []*process{olm, catalog} {
		if err := p.exited(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range []*process{olm, catalog} {
			if err := p.exited(); err != nil {
				t.Errorf("during the test: %v", err)
			}
		}
	})
}

// InstallOLMAPI installs what a cluster with OLM v0 serves without its
// processes: OLM's CRDs and its aggregated ClusterRoles, which add
// create on Subscriptions and delete on CSVs, CatalogSources and
// InstallPlans to admin and edit.
func (c *Cluster) InstallOLMAPI(ctx context.Context) error {
	bin, err := BinDir()
	if err != nil {
		return err
	}
	if err := c.InstallCRDs(ctx, filepath.Join(bin, "olm-crds")); err != nil {
		return fmt.Errorf("installing OLM's CRDs (run `make testbin`): %w", err)
	}
	b, err := os.ReadFile(filepath.Join(bin, "olm-rbac", "aggregated.clusterrole.yaml"))
	if err != nil {
		return fmt.Errorf("OLM's aggregated ClusterRoles (run `make testbin`): %w", err)
	}
	for _, doc := range strings.Split(string(b), "\n---") {
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), role); err != nil {
			return fmt.Errorf("OLM's aggregated ClusterRoles: %w", err)
		}
		if role.Name == "" {
			continue
		}
		if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
		}
	}
	return nil
}
