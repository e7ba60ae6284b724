package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/internal/testcluster"
)

const (
	operatorNamespace = "kvstore-system"
	operatorSA        = "kvstore-controller-manager"
)

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bin := testcluster.RequireBinDir(t)
	out, err := exec.Command(filepath.Join(bin, "kubectl"), append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestShippedConfigAndManagerProcess(t *testing.T) {
	c := testcluster.Require(t, cluster)
	root := filepath.Join("..", "..")
	kubectl(t, "apply", "--server-side", "--force-conflicts", "-k", filepath.Join(root, "config", "default"))
	testcluster.Eventually(t, 30*time.Second, "operator ServiceAccount", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts(operatorNamespace).Get(ctx, operatorSA, metav1.GetOptions{})
		return err
	})
	ns := c.Namespace(t, "kv-e2e", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})

	// Pods under kwok have no network, so the manager runs without its
	// data path here; the controller's data-path tests run it against
	// real servers.
	op := testcluster.StartOperator(t, managerBin, c.ServiceAccountKubeconfig(t, operatorNamespace, operatorSA),
		[]string{"RELATED_IMAGE_KVSTORE=valkey/valkey:8.1.3"},
		"--watch-namespaces", ns, "--leader-elect", "--leader-election-namespace", operatorNamespace, "--data-path=false")

	kubectl(t, "apply", "-n", ns, "-f", filepath.Join(root, "config", "samples", "kv_v1alpha1_kvstore.yaml"))
	// kubectl wait reads the Ready condition, as kstatus-style tools do.
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=90s", "kvstore/kvstore-sample")
	phase := kubectl(t, "get", "-n", ns, "kvstore/kvstore-sample", "-o", "jsonpath={.status.phase} {.status.currentVersion} {.status.readyReplicas}")
	if phase != "Running 8.1.3 3" {
		t.Errorf("status = %q, want \"Running 8.1.3 3\"", phase)
	}

	metrics, err := testcluster.HTTPGet(context.Background(), op.MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`operatorkit_apply_total{kind="StatefulSet",result="created"} 1`,
		`operatorkit_lifecycle_transitions_total{from="Starting",kind="KVStore",result="ok",to="Running"} `,
		`controller_runtime_reconcile_total{controller="kvstore-operator"`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	lease := &coordinationv1.Lease{}
	if err := c.Client.CoordinationV1().RESTClient().Get().Namespace(operatorNamespace).Resource("leases").
		Name("kvstore-operator.kv.opctl.dev").Do(context.Background()).Into(lease); err != nil {
		t.Errorf("no leader election lease: %v", err)
	}

	kubectl(t, "delete", "-n", ns, "--wait", "--timeout=60s", "kvstore/kvstore-sample")
	if out := kubectl(t, "get", "-n", ns, "statefulsets,secrets,services,poddisruptionbudgets", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("objects left after deleting the KVStore:\n%s", out)
	}
	forbidden, err := os.ReadFile(op.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(forbidden), "forbidden") {
		t.Errorf("the manager hit RBAC denials; config/rbac is missing permissions (see its log)")
	}
}
