package testcluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount namespace/name with a real token, and returns its path.
func (c *Cluster) ServiceAccountKubeconfig(t testing.TB, namespace, name string) string {
	t.Helper()
	cfg, err := c.ServiceAccountTokenConfig(context.Background(), namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: c.Config.CAData}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Operator is an operator manager binary running as a process.
type Operator struct {
	// MetricsURL serves the Prometheus metrics.
	MetricsURL string
	// LogPath holds the process's output.
	LogPath string
}

// StartOperator runs a controller-runtime manager binary with
// --kubeconfig, loopback metrics and health ports and args, waits until
// /readyz answers, and stops it (SIGTERM) when the test ends. Its log is
// printed when the test failed.
func StartOperator(t testing.TB, bin, kubeconfig string, env []string, args ...string) *Operator {
	t.Helper()
	ports, err := freePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	op := &Operator{
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[0]),
		LogPath:    filepath.Join(t.TempDir(), "operator.log"),
	}
	proc := runProcess(t, op.LogPath, bin, environ(nil, env...), append([]string{"--kubeconfig", kubeconfig,
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[0]),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[1])}, args...)...)
	Eventually(t, 30*time.Second, "operator /readyz", func(ctx context.Context) error {
		if err := proc.exited(); err != nil {
			return err
		}
		_, err := HTTPGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1]))
		return err
	})
	return op
}

// runProcess starts bin with its output in logPath and the environment
// env and stops it (SIGTERM, then SIGKILL after 15 s) when the test ends,
// printing the log if the test failed.
func runProcess(t testing.TB, logPath, bin string, env []string, args ...string) *process {
	t.Helper()
	p, err := startProcess(strings.TrimSuffix(filepath.Base(logPath), ".log"), bin, args, filepath.Dir(logPath), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stop(15 * time.Second)
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("log of %s (%s), its errors and last lines:\n%s", filepath.Base(bin), logPath, logExcerpt(string(b), 40))
		}
	})
	return p
}

// environ is this process's environment without the variables unset,
// plus extra.
func environ(unset []string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(unset, name) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// HTTPGet returns the body of a GET that answered 200.
func HTTPGet(ctx context.Context, url string) (string, error) {
	return get(ctx, http.DefaultClient, url)
}

// get returns the body of a GET with client, or an error naming the
// status when it is not 200.
func get(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%w: %s answered %d: %s", errNotReady, url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return string(b), err
}

// logExcerpt keeps a process log's lines that report errors or warnings
// and its last n lines, at most 2n in all: a failing test's output stays
// readable when the process logged for minutes.
func logExcerpt(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	tail := max(0, len(lines)-n)
	var out []string
	for _, l := range lines[:tail] {
		if len(out) < n && (strings.Contains(l, "level=error") || strings.Contains(l, "level=warn") || strings.Contains(l, "rror")) {
			out = append(out, l)
		}
	}
	if tail > 0 {
		out = append(out, fmt.Sprintf("… (%d earlier lines)", tail))
	}
	return strings.Join(append(out, lines[tail:]...), "\n")
}
