package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// platformNamespace is where the platform installs charts/opctl, as the
// README's quick start does.
const platformNamespace = "opctl-system"

// platform is the tenancy controller as a platform team runs it: on a
// fresh test control plane, charts/opctl installed with the helm CLI and
// its default values (CRDs, RBAC, guardrails, the tenant ClusterRoles
// ConfigMap), and `opctl tenancy run` as a process with the command, args
// and environment of the chart's Deployment, authenticated by a token of
// the chart's ServiceAccount: the chart's RBAC and the shipped policy,
// never an admin's rights.
type platform struct {
	cluster *testcluster.Cluster
	// admin reads and writes Tenants as the platform team.
	admin client.Client
	// logPath holds the controller's output.
	logPath string
	// stopping ends the controller's restarts; done is closed once its
	// last process has exited.
	stopping, done chan struct{}

	mu       sync.Mutex
	stopped  bool
	proc     *os.Process // the running controller
	restarts int
	lastExit string
}

// startPlatform starts a platform whose files go in dir.
func startPlatform(ctx context.Context, t tools, dir string) (_ *platform, err error) {
	c, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		return nil, fmt.Errorf("starting a test control plane: %w", err)
	}
	p := &platform{cluster: c, logPath: filepath.Join(dir, "controller.log")}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := tenancyv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if p.admin, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	if _, err := run(t.helm3, "install", "opctl", t.platformChart, "--kubeconfig", c.Kubeconfig, "--namespace", platformNamespace, "--create-namespace"); err != nil {
		return nil, fmt.Errorf("installing charts/opctl: %w", err)
	}
	dep, err := p.controllerDeployment(ctx)
	if err != nil {
		return nil, err
	}
	cmdline, env, err := c.ContainerProcess(ctx, dep, "manager", dep.Name+"-corpus")
	if err != nil {
		return nil, err
	}
	cfg, err := c.ServiceAccountTokenConfigFor(ctx, dep.Namespace, dep.Spec.Template.Spec.ServiceAccountName, 6*time.Hour)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "controller.kubeconfig")
	if err := c.WriteTokenKubeconfig(kubeconfig, cfg); err != nil {
		return nil, err
	}
	if len(cmdline) < 2 {
		return nil, fmt.Errorf("charts/opctl's manager container runs %q, want the opctl binary and its args", cmdline)
	}
	// cmdline[0] is the binary's path in the image: the -opctl binary. The
	// process reaches the cluster with the kubeconfig instead of a pod's
	// files, and binds no port of the host.
	args := append(cmdline[1:len(cmdline):len(cmdline)], "--kubeconfig", kubeconfig, "--health-probe-bind-address=0", "--metrics-bind-address=0")
	log, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	p.stopping, p.done = make(chan struct{}), make(chan struct{})
	start := func() (*exec.Cmd, error) {
		cmd := exec.Command(t.opctl, args...)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.Env = append([]string{"HOME=" + dir, "TMPDIR=" + dir}, env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		p.mu.Lock() // stop signals the process it sees: none starts after
		defer p.mu.Unlock()
		if p.stopped {
			return nil, fmt.Errorf("the platform is stopping")
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("running opctl %v: %w", args, err)
		}
		p.proc = cmd.Process
		return cmd, nil
	}
	cmd, err := start()
	if err != nil {
		log.Close()
		close(p.done)
		return nil, err
	}
	go p.keepRunning(cmd, start, log)
	return p, nil
}

// keepRunning waits for the controller and starts it again each time it
// exits (a lost leader election on a loaded machine), as the kubelet
// restarts a pod's container, until stop.
func (p *platform) keepRunning(cmd *exec.Cmd, start func() (*exec.Cmd, error), log *os.File) {
	defer close(p.done)
	defer log.Close()
	for {
		err := cmd.Wait()
		select {
		case <-p.stopping:
			return
		case <-time.After(2 * time.Second):
		}
		b, _ := os.ReadFile(p.logPath)
		p.mu.Lock()
		p.restarts++
		p.lastExit = fmt.Sprintf("%v: %s", err, tail(string(b), 3))
		p.mu.Unlock()
		for cmd, err = start(); err != nil; cmd, err = start() {
			select {
			case <-p.stopping:
				return
			case <-time.After(2 * time.Second):
			}
		}
	}
}

// restarted says how often the controller was started again, "" when
// never.
func (p *platform) restarted() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.restarts == 0 {
		return ""
	}
	return fmt.Sprintf("the controller exited %d times and was started again, as a kubelet restarts a container; the last exit: %s", p.restarts, p.lastExit)
}

// controllerDeployment is the Deployment charts/opctl installed.
func (p *platform) controllerDeployment(ctx context.Context) (*appsv1.Deployment, error) {
	var deps appsv1.DeploymentList
	if err := p.admin.List(ctx, &deps, client.InNamespace(platformNamespace), client.MatchingLabels{"app.kubernetes.io/instance": "opctl"}); err != nil {
		return nil, err
	}
	if len(deps.Items) != 1 {
		return nil, fmt.Errorf("charts/opctl installed %d Deployments in %s, want 1", len(deps.Items), platformNamespace)
	}
	return &deps.Items[0], nil
}

// stop stops the controller and the control plane.
func (p *platform) stop() {
	if p.stopping != nil {
		p.mu.Lock()
		p.stopped = true
		close(p.stopping)
		proc := p.proc
		p.mu.Unlock()
		if proc != nil {
			_ = proc.Signal(syscall.SIGTERM)
		}
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = proc.Kill()
			<-p.done
		}
	}
	p.cluster.Stop()
}
