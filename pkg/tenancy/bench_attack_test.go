package tenancy_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"opctl.dev/opctl/internal/testcluster"
)

var benchAttackers = flag.Int("attackers", 10, "tenants whose owners attack the controller's memory after BenchmarkTenancyProvision's tenants are Ready (0: none)")

// memoryAttacks are what an owner tried against the controller's memory
// (issue "holds under abuse", items 1 and 2), each in its own namespace
// ns as owner: what the API server refuses is counted, the rest stays.
var memoryAttacks = []struct {
	name string
	run  func(ctx context.Context, owner kubernetes.Interface, ns string, i int) error
}{
	{"Roles of 1 MB labelled as the tenant's (the cache selects the label)", func(ctx context.Context, owner kubernetes.Interface, ns string, i int) error {
		_, err := owner.RbacV1().Roles(ns).Create(ctx, bigRole(fmt.Sprintf("planted-%d", i), map[string]string{tenancyv1.LabelTenant: ns}), metav1.CreateOptions{})
		return err
	}},
	{"Roles of 1 MB, unlabelled", func(ctx context.Context, owner kubernetes.Interface, ns string, i int) error {
		_, err := owner.RbacV1().Roles(ns).Create(ctx, bigRole(fmt.Sprintf("big-%d", i), nil), metav1.CreateOptions{})
		return err
	}},
	{"Deployments with Helm's label and 200 KB of annotations", func(ctx context.Context, owner kubernetes.Interface, ns string, i int) error {
		labels := map[string]string{"app": "big"}
		_, err := owner.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%d", i), Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"},
				Annotations: map[string]string{"filler": strings.Repeat("x", 200<<10)}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: restrictedPod("c", "10m").Spec}}}, metav1.CreateOptions{})
		return err
	}},
	{"a Secret shaped as the release's Helm record, 400 MB inflated", func(ctx context.Context, owner kubernetes.Interface, ns string, i int) error {
		if i > 0 {
			return errSkipped
		}
		_, err := owner.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.kv.v9",
				Labels: map[string]string{"owner": "helm", "name": "kv", "status": "deployed", "version": "9"}},
			Type: "helm.sh/release.v1", Data: map[string][]byte{"release": bomb400MB()}}, metav1.CreateOptions{})
		return err
	}},
	{"Secrets labelled as the release's Helm records, 100,000 labels each, 20 in each of the first two namespaces (listed at start)", func(ctx context.Context, owner kubernetes.Interface, ns string, i int) error {
		if (!strings.HasSuffix(ns, "-0000") && !strings.HasSuffix(ns, "-0001")) || i > 0 {
			return errSkipped
		}
		labels := map[string]string{"owner": "helm", "name": "kv"}
		for k := range 100000 {
			labels[fmt.Sprintf("p%06d", k)] = ""
		}
		for j := range 20 {
			if _, err := owner.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pad-%d", j), Labels: labels}}, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		return nil
	}},
}

// errSkipped is an attack not run in a namespace.
var errSkipped = errors.New("skipped")

// bomb400MB is a Helm record's payload (base64 of gzip) that inflates
// to 400 MB of zeros.
var bomb400MB = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for range 400 {
		_, _ = zw.Write(zero)
	}
	_ = zw.Close()
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
})

// bigRole is a Role of about 1 MB of rules.
func bigRole(name string, labels map[string]string) *rbacv1.Role {
	names := make([]string, 0, 1000)
	for i := range 1000 {
		names = append(names, fmt.Sprintf("%04d-%s", i, strings.Repeat("r", 1000)))
	}
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: names}}}
}

// attackMemory has the owners of the first -attackers tenants run
// memoryAttacks (6 of each a namespace), then restarts the controller
// (records are read at start), and prints the controller's RSS before the
// attacks, after them, and once the restarted controller has reconciled
// every tenant (reconciles of any result, n + 1 with the warm-up tenant:
// most end requeued for the next drift sweep). It returns
// the restarted process.
func attackMemory(b *testing.B, c *testcluster.Cluster, proc *exec.Cmd, names []string, metricsAddr string, restart func() *exec.Cmd) *exec.Cmd {
	b.Helper()
	n := min(*benchAttackers, len(names))
	if n == 0 {
		return proc
	}
	ctx := context.Background()
	// The anonymous part is what a memory limit holds against the process:
	// the binary's file-backed pages can be reclaimed.
	rss := func(p *exec.Cmd) string {
		now, _ := testcluster.ProcStatus(p.Process.Pid, "VmRSS")
		anon, _ := testcluster.ProcStatus(p.Process.Pid, "RssAnon")
		peak, _ := testcluster.ProcStatus(p.Process.Pid, "VmHWM")
		return fmt.Sprintf("RSS %.0f MiB, anonymous %.0f MiB (peak RSS %.0f MiB)", float64(now)/(1<<20), float64(anon)/(1<<20), float64(peak)/(1<<20))
	}
	before := rss(proc)
	const each = 6
	results := make([]string, len(memoryAttacks))
	for a, attack := range memoryAttacks {
		refused, made := 0, 0
		for t := range n {
			owner := kubernetes.NewForConfigOrDie(c.As("owner-" + names[t]))
			for i := range each {
				switch err := attack.run(ctx, owner, names[t], i); {
				case errors.Is(err, errSkipped):
				case err != nil && strings.Contains(err.Error(), "denied request"):
					refused++
				case err != nil && strings.Contains(err.Error(), "exceeded quota"):
					refused++
				case err != nil:
					b.Fatalf("%s in %s: %v", attack.name, names[t], err)
				default:
					made++
				}
			}
		}
		results[a] = fmt.Sprintf("%s: %d runs made it, %d refused", attack.name, made, refused)
	}
	time.Sleep(20 * time.Second) // watches delivered, reconciles done
	after := rss(proc)
	_ = proc.Process.Kill()
	_, _ = proc.Process.Wait()
	start := time.Now()
	proc = restart()
	peakAnon := sampleAnon(b, proc.Process.Pid)
	toReady := waitAll(b, start, len(names)+1, "reconciled after the restart", func() (int, string) {
		body, _ := testcluster.HTTPGet(ctx, "http://"+metricsAddr+"/metrics")
		done := sumSeries(body, func(line string) bool {
			return strings.HasPrefix(line, "controller_runtime_reconcile_total") && strings.Contains(line, `controller="opctl-tenancy"`)
		})
		return min(int(done), len(names)+1), ""
	})
	restarted := rss(proc)

	fmt.Printf("  memory attacks by %d owners:\n", n)
	for _, r := range results {
		fmt.Printf("    %s\n", r)
	}
	fmt.Printf("  controller before the attacks:     %s\n", before)
	fmt.Printf("  controller after the attacks:      %s\n", after)
	fmt.Printf("  controller restarted, reconciled:  %s, in %.1f s; peak anonymous %.0f MiB\n", restarted, toReady.Seconds(), float64(peakAnon.Load())/(1<<20))
	return proc
}
