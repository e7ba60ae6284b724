package tenancy_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	releaserecords "opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// runController starts `opctl tenancy run` on the shared cluster as a
// process logging to logPath, with env added, until the test ends.
func runController(t testing.TB, logPath string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	shareSampleCRDs(t)
	return runControllerAt(t, controllerKubeconfig, logPath, env, args...)
}

// runControllerAt is runController on the cluster of kubeconfig.
func runControllerAt(t testing.TB, kubeconfig, logPath string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(opctlBin, append([]string{"tenancy", "run", "--kubeconfig", kubeconfig, "--health-probe-bind-address", "0"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s:\n%s", logPath, tail(b, 3000))
		}
	})
	return cmd
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// pendingReleases counts the release revisions of tenant in a pending
// state, in the controller's storage namespace.
func pendingReleases(ctx context.Context, tenant string) (int, error) {
	return releasesIn(ctx, cl, tenant, "pending-install", "pending-upgrade", "pending-rollback")
}

// releaseRecords lists tenant's Helm release records in the controller's
// storage namespace.
func releaseRecords(ctx context.Context, cl client.Client, tenant string) ([]corev1.Secret, error) {
	var secrets corev1.SecretList
	err := cl.List(ctx, &secrets, client.InNamespace(tenancy.DefaultStorageNamespace),
		client.MatchingLabels{"owner": "helm", releaserecords.LabelRecordTenant: tenant})
	return secrets.Items, err
}

// releasesIn counts tenant's release revisions in the given states, or all
// of them when none is given.
func releasesIn(ctx context.Context, cl client.Client, tenant string, states ...string) (int, error) {
	records, err := releaseRecords(ctx, cl, tenant)
	n := 0
	for _, r := range records {
		if len(states) == 0 || slices.Contains(states, r.Labels["status"]) {
			n++
		}
	}
	return n, err
}

// The controller, run as a process, is killed in the middle of installs
// and upgrades ten times; the next one recovers every release.
func TestCrashRecovery(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	v1, v2 := sampleChart(t, "", "0.1.0"), sampleChart(t, "", "0.2.0")
	id := suffix()
	logs := t.TempDir()
	var names []string
	hits := 0
	for i := range 10 {
		proc := runController(t, filepath.Join(logs, fmt.Sprintf("controller-%d.log", i)), nil, "--metrics-bind-address", "0", "--upgrade-timeout", "1m")
		var ns string
		if i%2 == 0 { // a new tenant: an install
			ns = fmt.Sprintf("crash-%s-%d", id, i)
			names = append(names, ns)
			createTenant(t, newTenant(ns, []string{ns}, v1, 1))
		} else { // the previous tenant moves to 0.2.0: an upgrade
			ns = names[len(names)-1]
			testcluster.UpdateObject(t, cl, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: ns}}, func(tn *tenancyv1.Tenant) {
				tn.Spec.Operators[0].Chart.Path = v2
			})
		}
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if n, err := pendingReleases(ctx, ns); err == nil && n > 0 {
				hits++
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		_ = proc.Process.Signal(syscall.SIGKILL)
		_, _ = proc.Process.Wait()
	}
	t.Logf("%d of 10 kills landed while a release was pending", hits)
	if hits == 0 {
		t.Fatal("no kill landed during an install or upgrade: the test exercised nothing")
	}

	metricsAddr := freeAddr(t)
	runController(t, filepath.Join(logs, "controller-final.log"), nil, "--metrics-bind-address", metricsAddr, "--upgrade-timeout", "1m")
	// Every tenant was created on 0.1.0 and then moved to 0.2.0.
	const want = "0.2.0"
	for _, name := range names {
		waitTenant(t, name, 3*time.Minute, "Tenant Ready after the crashes", func(tn *tenancyv1.Tenant) error {
			if err := ready(tn); err != nil {
				return err
			}
			if v := tn.Status.Operators[0].ChartVersion; v != want {
				return fmt.Errorf("running %s, want %s", v, want)
			}
			return nil
		})
		if n, err := pendingReleases(ctx, name); err != nil || n != 0 {
			t.Errorf("%s: %d pending release revisions left (%v)", name, n, err)
		}
	}
	// Each recovery left an Event on its tenant (recoveries happen in
	// whichever controller process starts next).
	var events eventsv1.EventList
	if err := cl.List(ctx, &events); err != nil {
		t.Fatal(err)
	}
	recovered := 0
	for _, e := range events.Items {
		if e.Reason == "RecoveredStuckRelease" && strings.HasPrefix(e.Regarding.Name, "crash-"+id) {
			recovered++
		}
	}
	if recovered == 0 {
		t.Errorf("no RecoveredStuckRelease event after %d kills mid-operation", hits)
	}
	// The tenants show in the final controller's metrics.
	body, err := testcluster.HTTPGet(ctx, "http://"+metricsAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`opctl_tenancy_tenants{condition="Ready",status="True"}`,
		`opctl_tenancy_quota_utilisation_ratio{namespace="` + names[0] + `",resource="pods",tenant="` + names[0] + `"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
