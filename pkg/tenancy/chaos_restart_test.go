package tenancy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// The API server is killed and restarted while 50 tenants provision.
func TestChaosAPIServerRestart(t *testing.T) { restartWhileProvisioning(t, "kube-apiserver") }

// etcd is killed and restarted while 50 tenants provision.
func TestChaosEtcdRestart(t *testing.T) { restartWhileProvisioning(t, "etcd") }

// restartWhileProvisioning runs the controller as a process on a control
// plane of the test's own, creates 50 tenants, and kills and restarts
// component once some are Ready and others are not. Every tenant must end
// Ready with one release history, no pending revision, and its namespace;
// the controller process must ride it out.
func restartWhileProvisioning(t *testing.T, component string) {
	testcluster.Require(t, cluster) // the binaries of make test
	ctx := context.Background()
	pc, err := testcluster.Start(ctx, testcluster.Options{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			pc.DumpLogs(testWriter{t})
		}
		pc.Stop()
	})
	pcl, err := client.New(pc.Config, client.Options{Scheme: tenancy.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.InstallCRDs(ctx, "../../config/crd/bases"); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenancy.DefaultStorageNamespace}},
		apiServerSlice(apiServerIP),
	} {
		if err := pcl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	chart := sampleChart(t, "", "0.1.0")
	_, kubeconfig, err := controllerIdentity(ctx, pc, pcl, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proc := runControllerAt(t, kubeconfig, filepath.Join(t.TempDir(), "controller.log"), nil, "--metrics-bind-address", "0")

	names := make([]string, 50)
	for i := range names {
		names[i] = fmt.Sprintf("restart-%d", i)
		if err := pcl.Create(ctx, newTenant(names[i], []string{names[i]}, chart, 1)); err != nil {
			t.Fatal(err)
		}
	}
	// readyCount counts the Ready tenants and says why the first few
	// others are not.
	readyCount := func(ctx context.Context) (int, error) {
		var list tenancyv1.TenantList
		if err := pcl.List(ctx, &list); err != nil {
			return 0, err
		}
		n := 0
		var waiting []error
		for i := range list.Items {
			if err := ready(&list.Items[i]); err == nil {
				n++
			} else if len(waiting) < 3 {
				waiting = append(waiting, fmt.Errorf("%s: %w", list.Items[i].Name, err))
			}
		}
		return n, errors.Join(waiting...)
	}
	testcluster.Eventually(t, 3*time.Minute, "the first tenants Ready", func(ctx context.Context) error {
		if n, err := readyCount(ctx); n < 5 {
			return fmt.Errorf("%d Ready (%v)", n, err)
		}
		return nil
	})
	before, _ := readyCount(ctx) // the others are still provisioning
	began := time.Now()
	if err := pc.Restart(ctx, component, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if component == "etcd" {
		// kwok stands in for the kubelets, and unlike a kubelet it never
		// relists: a pod bound while etcd was down stays Pending forever.
		// Restart it as a node agent would reconnect; nothing of ours.
		if err := pc.Restart(ctx, "kwok", 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%s restarted in %s with %d of 50 tenants Ready", component, time.Since(began).Round(time.Millisecond), before)
	if before == len(names) {
		t.Fatalf("all tenants were Ready before the restart: it exercised nothing")
	}

	testcluster.Eventually(t, 5*time.Minute, "all 50 tenants Ready after the restart", func(ctx context.Context) error {
		if n, err := readyCount(ctx); n < len(names) {
			return fmt.Errorf("%d Ready (%v)", n, err)
		}
		return nil
	})
	t.Logf("all 50 Ready %s after the restart", time.Since(began).Round(time.Second))
	if !alive(proc.Process.Pid) {
		t.Fatal("the controller process exited during the restart")
	}
	for _, name := range names {
		if err := checkHistory(ctx, pcl, name, []string{name}, true); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		var ns corev1.Namespace
		if err := pcl.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil || ns.Labels[tenancyv1.LabelTenant] != name {
			t.Errorf("namespace %s: %v, labels %v", name, err, ns.Labels)
		}
	}
	var all corev1.NamespaceList
	if err := pcl.List(ctx, &all, client.HasLabels{tenancyv1.LabelTenant}); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != len(names) {
		t.Errorf("%d tenant namespaces, want %d", len(all.Items), len(names))
	}
}

// alive reports whether process pid runs (exists and is no zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// testWriter writes a dump to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }
