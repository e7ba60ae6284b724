package testcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options configure Start.
type Options struct {
	// BinDir holds the binaries; default BinDir().
	BinDir string
	// Nodes is the number of kwok nodes; default 2.
	Nodes int
	// Timeout bounds start-up; default 90s.
	Timeout time.Duration
}

// Cluster is a running test control plane, started here or attached to.
type Cluster struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Kubeconfig is the path of an admin kubeconfig, for kubectl and helm.
	Kubeconfig string
	// Dir holds the cluster's certificates, data, logs and audit log.
	Dir string
	// Client is a clientset for Config.
	Client kubernetes.Interface

	procs    []*process
	restarts int
	attached bool
	stopOnce sync.Once
}

// LogDir is where the component logs are written.
func (c *Cluster) LogDir() string { return filepath.Join(c.Dir, "logs") }

// AuditLog is the path of the API server's audit log of write requests
// (JSON lines, audit.k8s.io/v1 Events at Metadata level).
func (c *Cluster) AuditLog() string { return filepath.Join(c.Dir, auditLogName) }

// Attached reports whether the cluster was started by another process.
func (c *Cluster) Attached() bool { return c.attached }

// Start starts a new control plane and waits until it is usable: the API
// server is ready, the controller manager and scheduler are healthy, the
// kwok nodes are Ready and the default ServiceAccount exists.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if opts.BinDir == "" {
		if opts.BinDir, err = BinDir(); err != nil {
			return nil, err
		}
	}
	if opts.Nodes == 0 {
		opts.Nodes = 2
	}
	if opts.Timeout == 0 {
		opts.Timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "opctl-testcluster-")
	if err != nil {
		return nil, fmt.Errorf("creating cluster directory: %w", err)
	}
	c := &Cluster{Dir: dir}
	defer func() {
		if err != nil {
			c.stop()
			err = fmt.Errorf("%w (cluster files kept in %s)", err, dir)
		}
	}()
	if err := os.MkdirAll(c.LogDir(), 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	p, err := allocatePorts()
	if err != nil {
		return nil, err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", p.apiserver)
	if err := writeClusterFiles(dir, server); err != nil {
		return nil, err
	}
	c.Kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := c.loadConfig(); err != nil {
		return nil, err
	}
	bin := func(name string) string { return filepath.Join(opts.BinDir, name) }

	if err := c.start("etcd", bin("etcd"), etcdArgs(dir, p), nil); err != nil {
		return nil, err
	}
	if err := c.waitFor(ctx, "etcd health", func(ctx context.Context) error {
		return httpOK(ctx, fmt.Sprintf("http://127.0.0.1:%d/health", p.etcdClient))
	}); err != nil {
		return nil, err
	}
	if err := c.start("kube-apiserver", bin("kube-apiserver"), apiserverArgs(dir, p), nil); err != nil {
		return nil, err
	}
	if err := c.waitFor(ctx, "kube-apiserver /readyz", func(ctx context.Context) error {
		return c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}); err != nil {
		return nil, err
	}
	if err := c.start("kube-controller-manager", bin("kube-controller-manager"), controllerManagerArgs(dir, p), nil); err != nil {
		return nil, err
	}
	if err := c.start("kube-scheduler", bin("kube-scheduler"), schedulerArgs(dir, p), nil); err != nil {
		return nil, err
	}
	if err := c.setupKwok(ctx, filepath.Join(opts.BinDir, "kwok-data"), opts.Nodes); err != nil {
		return nil, err
	}
	// The monitoring API (ServiceMonitor, PodMonitor, PrometheusRule) is
	// served, as on most clusters that run operators; nothing acts on it.
	if err := c.InstallCRDs(ctx, filepath.Join(opts.BinDir, "monitoring-crds")); err != nil {
		return nil, err
	}
	// kwok reads HOME for its own config; keep it inside the cluster dir.
	if err := c.start("kwok", bin("kwok"), kwokArgs(dir, p), []string{"HOME=" + dir}); err != nil {
		return nil, err
	}
	checks := []struct {
		what  string
		check func(context.Context) error
	}{
		{"kube-controller-manager /healthz", func(ctx context.Context) error {
			return httpOK(ctx, fmt.Sprintf("https://127.0.0.1:%d/healthz", p.controllerManager))
		}},
		{"kube-scheduler /healthz", func(ctx context.Context) error {
			return httpOK(ctx, fmt.Sprintf("https://127.0.0.1:%d/healthz", p.scheduler))
		}},
		{"kwok nodes Ready", c.nodesReady},
		{"default ServiceAccount", func(ctx context.Context) error { return c.serviceAccountExists(ctx, "default", "default") }},
	}
	for _, ch := range checks {
		if err := c.waitFor(ctx, ch.what, ch.check); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Attach returns a Cluster for the running control plane whose admin
// kubeconfig is at path. Stop on it stops nothing.
func Attach(path string) (*Cluster, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("attaching to %s: %w", path, err)
	}
	c := &Cluster{Kubeconfig: abs, Dir: filepath.Dir(abs), attached: true}
	if err := c.loadConfig(); err != nil {
		return nil, fmt.Errorf("attaching to %s: %w", path, err)
	}
	return c, nil
}

// Stop stops the processes this Cluster started, in reverse order, and
// removes its directory. It is a no-op for an attached cluster.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		if c.attached {
			return
		}
		c.stop()
		_ = os.RemoveAll(c.Dir)
	})
}

func (c *Cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	c.procs = nil
}

// DumpLogs writes the tail of every component log to w.
func (c *Cluster) DumpLogs(w io.Writer) { dumpLogs(w, c.LogDir(), 60) }

func (c *Cluster) loadConfig() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	c.Config, c.Client = cfg, cs
	return nil
}

func (c *Cluster) start(name, bin string, args, env []string) error {
	p, err := startProcess(name, bin, args, c.LogDir(), environ(nil, env...))
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

// waitFor polls check until it succeeds, a process dies, or ctx ends.
func (c *Cluster) waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	var last error
	for {
		for _, p := range c.procs {
			if err := p.exited(); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// writeClusterFiles writes the PKI, kubeconfigs and audit policy.
func writeClusterFiles(dir, server string) error {
	ca, err := newPKI()
	if err != nil {
		return err
	}
	serving, err := ca.serving()
	if err != nil {
		return err
	}
	saKey, saPub, err := serviceAccountKey()
	if err != nil {
		return err
	}
	if err := writeFiles(dir, map[string][]byte{
		"ca.crt":            ca.caPEM,
		"apiserver.crt":     serving.certPEM,
		"apiserver.key":     serving.keyPEM,
		"sa.key":            saKey,
		"sa.pub":            saPub,
		"audit-policy.yaml": []byte(auditPolicy),
	}); err != nil {
		return err
	}
	users := []struct{ file, user, group string }{
		{"admin.kubeconfig", "opctl-test-admin", "system:masters"},
		{"controller-manager.kubeconfig", "system:kube-controller-manager", ""},
		{"scheduler.kubeconfig", "system:kube-scheduler", ""},
		{"kwok.kubeconfig", "kwok", "system:masters"},
	}
	for _, u := range users {
		var groups []string
		if u.group != "" {
			groups = []string{u.group}
		}
		cred, err := ca.client(u.user, groups...)
		if err != nil {
			return err
		}
		if err := writeKubeconfig(filepath.Join(dir, u.file), server, ca.caPEM, u.user, cred); err != nil {
			return err
		}
	}
	return nil
}

// probeClient reads the components' health endpoints, which serve
// self-signed certificates on loopback.
var probeClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback health probe

// httpOK GETs url with probeClient and wants a 200.
func httpOK(ctx context.Context, url string) error {
	_, err := get(ctx, probeClient, url)
	return err
}
