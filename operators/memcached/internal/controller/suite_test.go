package controller_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/operators/memcached/api/v1alpha1"
	"opctl.dev/opctl/operators/memcached/internal/controller"
	"opctl.dev/opctl/pkg/operatorkit"
)

// agent is the user agent of the in-process Memcached manager.
const agent = "memcached-operator-test"

var (
	cluster    *testcluster.Cluster
	kube       client.Client
	reconciler *operatorkit.Reconciler[*v1alpha1.Memcached]
	scheme     = runtime.NewScheme()
	// servers maps a Memcached (namespace/name) to the address of a real
	// memcached process; the others use shared.
	servers sync.Map
	shared  string
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster, setup)) }

// setup installs the CRD, starts one memcached for every Memcached of the
// tests, and the manager. Pods never run, so the data path (the version
// command) reaches memcached processes on loopback.
func setup(c *testcluster.Cluster) (func(), error) {
	if err := controller.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := c.InstallCRDs(context.Background(), "../../config/crd/bases"); err != nil {
		return nil, err
	}
	var err error
	if kube, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	addr, stopServer, err := startMemcached()
	if err != nil {
		return nil, err
	}
	shared = addr
	h := &controller.MemcachedHandler{Address: func(m *v1alpha1.Memcached) string {
		if a, ok := servers.Load(m.Namespace + "/" + m.Name); ok {
			return a.(string)
		}
		return shared
	}}
	stop, err := c.StartManager(ctrl.Options{Scheme: scheme}, agent, func(mgr ctrl.Manager) error {
		reconciler, err = controller.SetupMemcached(mgr, h, operatorkit.Options{})
		return err
	})
	if err != nil {
		stopServer()
		return nil, err
	}
	return func() { stop(); stopServer() }, nil
}

// startMemcached runs Debian's memcached on a free loopback port.
func startMemcached() (addr string, stop func(), err error) {
	bin, err := exec.LookPath("memcached")
	if err != nil {
		return "", nil, fmt.Errorf("memcached not installed (make test-deps installs Debian's memcached): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "16"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting memcached: %w", err)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := controller.Version(context.Background(), addr); err == nil {
			return addr, stop, nil
		} else if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("memcached on %s did not answer: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
