package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testregistry"
	"opctl.dev/opctl/pkg/publish"
)

// opctl publishes itself and the sample operator, from source, to a real
// registry; the test then checks the pushed index with the registry's
// HTTP API, installs the controller's chart from the registry on a
// control plane of its own, takes /opctl out of the amd64 image and runs
// it as the chart's Deployment would (its pod's identity, command, args
// and env), and a Tenant of the sample's published chart becomes Ready.
// Nothing here builds the binary it runs.
func TestPublishedControllerImageRuns(t *testing.T) {
	testcluster.Require(t, cluster) // skips with the shared cluster's reason
	ctx := context.Background()
	reg := testregistry.Start(t)
	prefix := reg.Host + "/opctl"
	outs := t.TempDir()
	results := map[string]publish.Result{}
	for name, src := range map[string]string{"opctl": "../..", "sample-operator": "../../operators/sample"} {
		res := publishJSON(t, src, "--out", filepath.Join(outs, name), "--registry", prefix)
		if res.Image == nil || res.Image.Skipped != "" {
			t.Fatalf("publish %s built no image: %+v", src, res.Image)
		}
		results[name] = res
	}
	var img publish.Artifact
	for _, a := range results["opctl"].Artifacts {
		if a.Kind == "image" {
			img = a
		}
	}
	if img.Digest == "" {
		t.Fatalf("no image artifact in %+v", results["opctl"].Artifacts)
	}

	t.Run("the pushed index", func(t *testing.T) {
		idx := reg.Manifest(t, "opctl/opctl", "0.1.0")
		var archs []string
		for _, m := range idx["manifests"].([]any) {
			d := m.(map[string]any)
			archs = append(archs, d["platform"].(map[string]any)["architecture"].(string))
			man := reg.Manifest(t, "opctl/opctl", d["digest"].(string))
			cfg := reg.BlobJSON(t, "opctl/opctl", man["config"].(map[string]any)["digest"].(string))["config"].(map[string]any)
			labels, _ := cfg["Labels"].(map[string]any)
			if cfg["User"] != "65532" || cfg["Entrypoint"].([]any)[0] != "/opctl" || labels["org.opencontainers.image.version"] != "0.1.0" || labels["org.opencontainers.image.source"] == nil {
				t.Errorf("%v: user %v, entrypoint %v, labels %v", d["platform"], cfg["User"], cfg["Entrypoint"], labels)
			}
		}
		if strings.Join(archs, ",") != "amd64,arm64" {
			t.Errorf("platforms %v, want amd64,arm64", archs)
		}
		refs := reg.Manifest(t, "opctl/opctl", strings.Replace(img.Digest, ":", "-", 1))
		var types []string
		for _, m := range refs["manifests"].([]any) {
			types = append(types, m.(map[string]any)["artifactType"].(string))
		}
		if strings.Join(types, ",") != "application/spdx+json" {
			t.Errorf("referrers of %s: %v, want the SPDX SBOM", img.Digest, types)
		}
	})

	bin := extractProgram(t, prefix+"/opctl@"+img.Digest, "opctl")
	pc, err := testcluster.Start(ctx, testcluster.Options{Nodes: 1})
	if err != nil {
		t.Fatalf("a control plane of the test's own (the controller reconciles every Tenant): %v", err)
	}
	t.Cleanup(pc.Stop)
	k8s := testcluster.RequireBinDir(t)
	helm := func(args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(k8s, "helm"), append(args, "--kubeconfig", pc.Kubeconfig)...)
		cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	// The chart's own args, and plain HTTP for this loopback registry.
	args, _ := json.Marshal([]string{"tenancy", "run", "--shards", "--health-probe-bind-address=:8081", "--plain-http-registries"})
	helm("install", "opctl", "oci://"+prefix+"/charts/opctl", "--version", "0.1.0", "--plain-http",
		"-n", "opctl-system", "--create-namespace", "--set-json", "args="+string(args), "--wait", "--timeout", "3m")
	deps, err := pc.Client.AppsV1().Deployments("opctl-system").List(ctx, metav1.ListOptions{})
	if err != nil || len(deps.Items) != 1 {
		t.Fatalf("the controller's Deployment: %v %v", deps, err)
	}
	dep := &deps.Items[0]
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != prefix+"/opctl@"+img.Digest {
		t.Errorf("the chart runs %s, want the published image by digest %s", got, img.Digest)
	}
	_, port, _ := strings.Cut(reg.Host, ":")
	p, _ := strconv.Atoi(port)
	pod := pc.RunDeployment(t, bin, dep, "", testcluster.RelayPort(p, reg.Host))
	pod.WaitReady(t, dep, "", 90*time.Second)

	tenant := `apiVersion: tenancy.opctl.dev/v1alpha1
kind: Tenant
metadata: {name: team-img}
spec:
  namespaces: [team-img]
  owners: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
  operators:
  - name: kv
    chart: {repository: oci://` + prefix + `/charts/sample-operator, version: 0.1.0}
`
	kubectl := exec.Command(filepath.Join(k8s, "kubectl"), "--kubeconfig", pc.Kubeconfig, "apply", "-f", "-")
	kubectl.Stdin = strings.NewReader(tenant)
	if b, err := kubectl.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, b)
	}
	wait := exec.Command(filepath.Join(k8s, "kubectl"), "--kubeconfig", pc.Kubeconfig, "wait", "--for=condition=Ready", "tenant/team-img", "--timeout=4m")
	if b, err := wait.CombinedOutput(); err != nil {
		st, _ := exec.Command(filepath.Join(k8s, "kubectl"), "--kubeconfig", pc.Kubeconfig, "get", "tenant", "team-img", "-o", "yaml").CombinedOutput()
		t.Fatalf("the Tenant did not become Ready under the published controller: %v\n%s\n%s", err, b, st)
	}
	if err := pod.Exited(); err != nil {
		t.Errorf("the controller exited: %v", err)
	}
	sample, err := pc.Client.AppsV1().Deployments("team-img").List(ctx, metav1.ListOptions{})
	if err != nil || len(sample.Items) != 1 {
		t.Fatalf("the tenant's operator Deployment: %v %v", sample, err)
	}
	var sampleImg publish.Artifact
	for _, a := range results["sample-operator"].Artifacts {
		if a.Kind == "image" {
			sampleImg = a
		}
	}
	if got, want := managerImage(&sample.Items[0]), prefix+"/kvstore-operator@"+sampleImg.Digest; got != want {
		t.Fatalf("the tenant's operator runs %s, want the published image %s", got, want)
	}
	t.Run("the sample operator's image serves a KVStore", func(t *testing.T) {
		kvStoreServed(t, pc, &sample.Items[0], extractProgram(t, managerImage(&sample.Items[0]), "manager"))
	})
}

func managerImage(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c.Image
		}
	}
	return ""
}

// kvStoreServed runs the sample operator's published program as the
// tenant's release Deployment with its pod's identity, the store's pod
// name resolved and routed (as the cluster's DNS and network would) to a
// real redis-server, and checks that a KVStore becomes Ready with the
// operator having talked to that server.
func kvStoreServed(t *testing.T, c *testcluster.Cluster, dep *appsv1.Deployment, bin string) {
	ns := dep.Namespace
	const password = "e2e-image-password"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	server := exec.Command(testcluster.DebianProgram(t, "redis-server", "redis-server"), "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--requirepass", password, "--masterauth", password, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	cli := func(args ...string) string {
		out, _ := exec.Command(testcluster.DebianProgram(t, "redis-cli", "redis-tools"), append([]string{"-p", strconv.Itoa(port), "--no-auth-warning", "-a", password}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	testcluster.Eventually(t, 10*time.Second, "redis-server answering", func(context.Context) error {
		if got := cli("PING"); got != "PONG" {
			return fmt.Errorf("PING: %s", got)
		}
		return nil
	})
	connections := func() int {
		for _, line := range strings.Split(cli("INFO", "stats"), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_connections_received:"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatal("INFO stats has no total_connections_received")
		return 0
	}
	before := connections()
	pod := c.RunDeployment(t, bin, dep, "manager",
		testcluster.HostAlias("kv-0.kv-headless."+ns+".svc", "127.0.0.2"),
		testcluster.RelayAddress("127.0.0.2:6379", "127.0.0.1:"+strconv.Itoa(port)))
	pod.WaitReady(t, dep, "manager", 90*time.Second)

	apply := exec.Command(filepath.Join(testcluster.RequireBinDir(t), "kubectl"), "--kubeconfig", c.Kubeconfig, "apply", "-n", ns, "-f", "-")
	apply.Stdin = strings.NewReader(`apiVersion: v1
kind: Secret
metadata: {name: kv-auth}
stringData: {password: ` + password + `}
---
apiVersion: kv.opctl.dev/v1alpha1
kind: KVStore
metadata: {name: kv}
spec: {replicas: 1, adoptExisting: true}
`)
	if b, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, b)
	}
	dc := dynamic.NewForConfigOrDie(c.Config)
	gvr := schema.GroupVersionResource{Group: "kv.opctl.dev", Version: "v1alpha1", Resource: "kvstores"}
	testcluster.Eventually(t, 3*time.Minute, "KVStore kv Ready with its primary known", func(ctx context.Context) error {
		if err := pod.Exited(); err != nil {
			return err
		}
		kv, err := dc.Resource(gvr).Namespace(ns).Get(ctx, "kv", metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(kv.Object, "status", "conditions")
		ready := false
		for _, c := range conds {
			m := c.(map[string]any)
			ready = ready || (m["type"] == "Ready" && m["status"] == "True")
		}
		primary, _, _ := unstructured.NestedString(kv.Object, "status", "primary")
		if !ready || primary != "kv-0" {
			return fmt.Errorf("ready %v, primary %q: %v", ready, primary, conds)
		}
		return nil
	})
	// Each redis-cli call is one connection: more than the one reading
	// the count are the operator's, through the pod's name.
	if n := connections() - before; n <= 1 {
		t.Errorf("the server saw no connection from the operator (%d new, the count's own included)", n)
	}
	if strings.Contains(strings.ToLower(pod.Log()), "forbidden") {
		t.Errorf("the operator logged forbidden:\n%s", pod.Log())
	}
}

// extractProgram pulls ref's linux/amd64 image and writes the file at
// path in its layers to a temporary executable, checked to be an amd64 ELF.
func extractProgram(t *testing.T, ref, path string) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"}))
	if err != nil {
		t.Fatalf("pulling %s: %v", ref, err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s holds no %s", ref, path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != path {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if f, err := elf.NewFile(bytes.NewReader(b)); err != nil || f.Machine != elf.EM_X86_64 {
			t.Fatalf("/%s of %s is not an amd64 ELF: %v", path, ref, err)
		}
		out := filepath.Join(t.TempDir(), path)
		if err := os.WriteFile(out, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return out
	}
}
