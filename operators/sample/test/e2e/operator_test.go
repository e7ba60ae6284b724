package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"opctl.dev/opctl/internal/testcluster"
)

const (
	operatorNamespace = "kvstore-system"
	operatorSA        = "kvstore-controller-manager"
)

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := testcluster.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "kubectl"), append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// operator's ServiceAccount with a real token.
func serviceAccountKubeconfig(t *testing.T) string {
	t.Helper()
	cfg, err := cluster.ServiceAccountTokenConfig(context.Background(), operatorNamespace, operatorSA)
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cluster.Config.CAData}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "operator.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
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

	metricsPort, probePort := freePort(t), freePort(t)
	logPath := filepath.Join(t.TempDir(), "manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(managerBin,
		"--kubeconfig", serviceAccountKubeconfig(t),
		"--watch-namespaces", ns,
		"--leader-elect", "--leader-election-namespace", operatorNamespace,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probePort))
	cmd.Env = append(os.Environ(), "RELATED_IMAGE_KVSTORE=valkey/valkey:8.1.3")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("manager log:\n%s", b)
		}
	})
	testcluster.Eventually(t, 30*time.Second, "manager /readyz", func(ctx context.Context) error {
		_, err := httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort))
		return err
	})

	kubectl(t, "apply", "-n", ns, "-f", filepath.Join(root, "config", "samples", "kv_v1alpha1_kvstore.yaml"))
	// kubectl wait reads the Ready condition, as kstatus-style tools do.
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=90s", "kvstore/kvstore-sample")
	phase := kubectl(t, "get", "-n", ns, "kvstore/kvstore-sample", "-o", "jsonpath={.status.phase} {.status.currentVersion} {.status.readyReplicas}")
	if phase != "Running 8.1.3 3" {
		t.Errorf("status = %q, want \"Running 8.1.3 3\"", phase)
	}

	metrics, err := httpGet(context.Background(), fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
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
	forbidden, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(forbidden), "forbidden") {
		t.Errorf("the manager hit RBAC denials; config/rbac is missing permissions (see its log)")
	}
}
