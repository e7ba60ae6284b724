package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// saDir is where client-go's in-cluster configuration reads a pod's
// ServiceAccount token, CA and namespace.
const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Pod is a Deployment's container run as a local process with its pod's
// identity (RunDeployment).
type Pod struct {
	// Name and Namespace are the pod's, as its downward API gave them.
	Name, Namespace string
	// LogPath holds the process's output.
	LogPath   string
	socketDir string
	proc      *process
}

// RunDeployment runs bin as the container named container (the first if
// "") of the Deployment dep, as its pod would run it, until the test
// ends: in a mount and a network namespace of its own (so two pods of
// one operator bind the same ports), with a token of the pod's
// ServiceAccount, the cluster's CA and the namespace where client-go's
// in-cluster configuration reads them, and KUBERNETES_SERVICE_HOST and
// _PORT on its own loopback, relayed to the API server. bin replaces the
// container's command[0] (the path in its image); its args and env are
// the container's, with $(VAR) references, the downward API (the pod's
// name, namespace, ServiceAccount, IP as 127.0.0.1, labels and
// annotations, resources) and Secret and ConfigMap keys resolved, and its
// Secret, ConfigMap and emptyDir volumes mounted. Nothing of the test's
// environment reaches the process. The tests run as root (mount and
// network namespaces need it), as CI does.
func (c *Cluster) RunDeployment(t testing.TB, bin string, dep *appsv1.Deployment, container string, opts ...RunOption) *Pod {
	t.Helper()
	var ro runOptions
	for _, o := range opts {
		o(&ro)
	}
	ctx := context.Background()
	tmpl := dep.Spec.Template
	ctr, err := pickContainer(tmpl.Spec.Containers, container)
	if err != nil {
		t.Fatalf("Deployment %s/%s: %v", dep.Namespace, dep.Name, err)
	}
	dir := t.TempDir()
	pod := &Pod{Name: dep.Name + "-" + strconv.FormatInt(time.Now().UnixNano()%100000, 36), Namespace: dep.Namespace,
		LogPath: filepath.Join(dir, "pod.log"), socketDir: filepath.Join(dir, "sockets")}
	if err := os.MkdirAll(pod.socketDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sa := tmpl.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	files := filepath.Join(dir, "serviceaccount")
	if err := c.serviceAccountFiles(ctx, dep.Namespace, sa, files); err != nil {
		t.Fatalf("Deployment %s/%s: %v", dep.Namespace, dep.Name, err)
	}
	mounts := []podMount{{Source: files, Target: saDir}}
	vols, err := c.volumeMounts(ctx, dep.Namespace, tmpl.Spec.Volumes, ctr.VolumeMounts, filepath.Join(dir, "volumes"))
	if err != nil {
		t.Fatalf("Deployment %s/%s: %v", dep.Namespace, dep.Name, err)
	}
	mounts = append(mounts, vols...)

	const apiPort = 443
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOSTNAME=" + pod.Name,
		"KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=" + strconv.Itoa(apiPort), "KUBERNETES_SERVICE_PORT_HTTPS=" + strconv.Itoa(apiPort)}
	args, resolved, err := c.ContainerProcess(ctx, dep, container, pod.Name)
	if err != nil {
		t.Fatal(err)
	}
	env = append(env, resolved...)
	if len(ctr.Command) > 0 {
		args = args[1:] // command[0] is the image's binary: bin
	}
	var ports []int
	for _, p := range ctr.Ports {
		ports = append(ports, int(p.ContainerPort))
	}
	spec := podSpec{Bin: bin, Args: args, Env: env, Mounts: mounts, APIPort: apiPort,
		APISocket: filepath.Join(pod.socketDir, "apiserver.sock"), Ports: ports, SocketDir: pod.socketDir}
	if err := c.relayAPIServer(t, spec.APISocket); err != nil {
		t.Fatal(err)
	}
	for i, r := range ro.relays {
		sock := filepath.Join(pod.socketDir, "relay-"+strconv.Itoa(i)+".sock")
		if err := relayTo(t, sock, r.to); err != nil {
			t.Fatal(err)
		}
		spec.Relays = append(spec.Relays, podRelay{Address: r.from, Socket: sock})
	}
	spec.Hosts, spec.Hostname = "127.0.0.1\tlocalhost\n127.0.0.1\t"+pod.Name+"\n", pod.Name
	for _, a := range ro.aliases {
		spec.Hosts += a.ip + "\t" + a.name + "\n"
	}
	specPath := filepath.Join(dir, "pod.json")
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(pod.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = []string{podInitEnv + "=" + specPath}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWUTS, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("running %s as a pod of Deployment %s/%s (mount, network and UTS namespaces need root): %v", filepath.Base(bin), dep.Namespace, dep.Name, err)
	}
	pod.proc = &process{name: pod.Name, bin: bin, cmd: cmd, logPath: pod.LogPath, logFile: log, done: make(chan struct{})}
	go func() {
		pod.proc.err = cmd.Wait()
		close(pod.proc.done)
	}()
	t.Cleanup(func() {
		grace := 15 * time.Second
		if s := tmpl.Spec.TerminationGracePeriodSeconds; s != nil {
			grace = time.Duration(*s) * time.Second
		}
		pod.proc.stop(grace)
		if t.Failed() {
			b, _ := os.ReadFile(pod.LogPath)
			t.Logf("log of pod %s/%s (%s), its errors and last lines:\n%s", pod.Namespace, pod.Name, pod.LogPath, logExcerpt(string(b), 40))
		}
	})
	return pod
}

// Exited reports an error if the pod's process has stopped.
func (p *Pod) Exited() error { return p.proc.exited() }

// Log is what the pod's process wrote so far.
func (p *Pod) Log() string {
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

// Get GETs path from the pod's port (a containerPort of its container)
// and returns the body of a 200.
func (p *Pod) Get(ctx context.Context, port int, path string) (string, error) {
	sock := filepath.Join(p.socketDir, PortSocket(port))
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer client.CloseIdleConnections()
	return get(ctx, client, "http://pod"+path)
}

// WaitReady waits until the pod answers 200 on its container's readiness
// probe (an httpGet probe), or fails t.
func (p *Pod) WaitReady(t testing.TB, dep *appsv1.Deployment, container string, timeout time.Duration) {
	t.Helper()
	ctr, err := pickContainer(dep.Spec.Template.Spec.Containers, container)
	if err != nil {
		t.Fatal(err)
	}
	probe := ctr.ReadinessProbe
	if probe == nil || probe.HTTPGet == nil {
		t.Fatalf("container %s of Deployment %s/%s has no httpGet readiness probe", ctr.Name, dep.Namespace, dep.Name)
	}
	port := probe.HTTPGet.Port.IntValue()
	for _, cp := range ctr.Ports {
		if probe.HTTPGet.Port.StrVal != "" && cp.Name == probe.HTTPGet.Port.StrVal {
			port = int(cp.ContainerPort)
		}
	}
	Eventually(t, timeout, fmt.Sprintf("pod %s/%s ready", p.Namespace, p.Name), func(ctx context.Context) error {
		if err := p.Exited(); err != nil {
			return err
		}
		_, err := p.Get(ctx, port, probe.HTTPGet.Path)
		return err
	})
}

// pickContainer is the container named name, or the first for "".
func pickContainer(ctrs []corev1.Container, name string) (corev1.Container, error) {
	for _, c := range ctrs {
		if name == "" || c.Name == name {
			return c, nil
		}
	}
	return corev1.Container{}, fmt.Errorf("no container %q", name)
}

// serviceAccountFiles writes, into dir, what the kubelet projects into a
// pod: a token of the ServiceAccount (a TokenRequest, as the kubelet's
// projected volume makes), the cluster's CA and the namespace.
func (c *Cluster) serviceAccountFiles(ctx context.Context, ns, sa, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	expiry := int64(time.Hour.Seconds())
	tr, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("a token of ServiceAccount %s/%s: %w", ns, sa, err)
	}
	return writeFiles(dir, map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": c.Config.CAData, "namespace": []byte(ns)})
}

// RunOption adds to what RunDeployment sets up.
type RunOption func(*runOptions)

type runOptions struct {
	relays  []runRelay
	aliases []hostAlias
}

type runRelay struct{ from, to string }

type hostAlias struct{ name, ip string }

// RelayPort makes the pod's loopback port reach address outside the
// pod (a registry or a server the test started on the host's loopback),
// as a cluster's network would route it.
func RelayPort(port int, address string) RunOption {
	return RelayAddress("127.0.0.1:"+strconv.Itoa(port), address)
}

// RelayAddress makes ip:port inside the pod (a loopback address, 127.x.y.z)
// reach address outside it: with HostAlias, a peer pod's DNS name served
// by a process the test runs on the host.
func RelayAddress(inPod, address string) RunOption {
	return func(o *runOptions) { o.relays = append(o.relays, runRelay{from: inPod, to: address}) }
}

// HostAlias resolves name to ip inside the pod (its /etc/hosts, which Go's
// resolver reads first), as a cluster's DNS would resolve a pod or
// Service name.
func HostAlias(name, ip string) RunOption {
	return func(o *runOptions) { o.aliases = append(o.aliases, hostAlias{name: name, ip: ip}) }
}

// relayAPIServer serves the Unix socket path, relaying every connection
// to the API server, until the test ends.
func (c *Cluster) relayAPIServer(t testing.TB, path string) error {
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	if err := relayTo(t, path, host); err != nil {
		return fmt.Errorf("relaying the API server: %w", err)
	}
	return nil
}

// relayTo serves the Unix socket path, relaying every connection to the
// TCP address, until the test ends.
func relayTo(t testing.TB, path, address string) error {
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("relaying %s: %w", address, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go pipe(in, "tcp", address)
		}
	}()
	return nil
}

// pipe copies in both ways to a new connection to network/address.
func pipe(in net.Conn, network, address string) {
	defer in.Close()
	out, err := net.Dial(network, address)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = copyConn(out, in); done <- struct{}{} }()
	go func() { _, _ = copyConn(in, out); done <- struct{}{} }()
	<-done
}

// expandAll expands $(VAR) references in each of in from env (NAME=value
// pairs), as the kubelet does: an unknown reference stays as written, and
// $$ is a literal $.
func expandAll(in []string, env []string) []string {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vars)
	}
	return out
}

func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
