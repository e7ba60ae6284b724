package tenancy_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/sharding"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

var benchReplicas = flag.String("replicas", "1,3", "sharded replica counts BenchmarkTenancySharded provisions -tenants with, one after the other")

// BenchmarkTenancySharded provisions -tenants tenants with 1 and then with
// 3 sharded replicas (-replicas) on the same control plane, each run with
// a ring and tenants of its own, and prints the time to all Ready, the
// CPU of every process and the tenants and CPU of each shard. On a small
// machine the API server bounds both runs: what shows scale is the
// controller CPU per tenant and the balance across shards. make
// bench-shards N=1000.
func BenchmarkTenancySharded(b *testing.B) {
	c := testcluster.Require(b, cluster)
	ctx := context.Background()
	n, chart, id := *benchTenants, sampleChart(b, "", "0.1.0"), suffix()
	warmTenant(b, chart, id)

	logs := b.TempDir()
	fmt.Printf("\nsharded tenancy benchmark: %d tenants per run, controller logs in %s\n", n, logs)
	for _, field := range strings.Split(*benchReplicas, ",") {
		k, err := strconv.Atoi(field)
		if err != nil || k < 1 {
			b.Fatalf("-replicas: %q is not a replica count", field)
		}
		ring := fmt.Sprintf("r%d%s", k, id)
		member := map[string]string{"bench.opctl.dev/ring": ring}
		shards := make([]*shardReplica, k)
		for i := range shards {
			r := &shardReplica{id: fmt.Sprintf("%s-%d", ring, i)}
			r.proc = runController(b, filepath.Join(logs, r.id+".log"), []string{"GOMEMLIMIT=" + *benchMemLimit, "GOGC=" + *benchGOGC},
				"--shards", "--ring", ring, "--shard-id", r.id, "--shard-selector", labels.Set(member).String(),
				"--metrics-bind-address", "0", "--max-concurrent-reconciles", strconv.Itoa(*benchWorkers),
				"--kube-api-qps", "2000", "--kube-api-burst", "4000")
			shards[i] = r
		}
		waitLeases(b, ring, k)
		tenants := informer(b, c, &tenancyv1.Tenant{}, cache.ByObject{Label: labels.SelectorFromSet(member)})
		before, _ := apiserverMetrics(ctx, c)
		cpuBefore := processCPU()
		shardCPU := make([]float64, k)
		for i, r := range shards {
			shardCPU[i] = cpuSeconds(r.proc.Process.Pid)
		}
		start := time.Now()
		if err := parallel(16, n, func(i int) error {
			tn := newTenant(fmt.Sprintf("%s-%04d", ring, i), []string{fmt.Sprintf("%s-%04d", ring, i)}, chart, 1)
			tn.Labels = member
			return cl.Create(ctx, tn)
		}); err != nil {
			b.Fatal(err)
		}
		perShard := map[string]int{}
		toReady := waitAll(b, start, n, "Ready", func() (int, string) {
			var list tenancyv1.TenantList
			if err := tenants.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
				b.Fatal(err)
			}
			done := 0
			clear(perShard)
			for i := range list.Items {
				tn := &list.Items[i]
				cond := apimeta.FindStatusCondition(tn.Status.Conditions, "Ready")
				if cond != nil && cond.Status == metav1.ConditionTrue && tn.Status.ObservedGeneration == tn.Generation {
					done++
					perShard[tn.Labels[sharding.ShardLabel(ring)]]++
				}
			}
			return done, fmt.Sprint(perShard)
		})
		cpu := cpuSpent(cpuBefore, processCPU(), toReady.Seconds())
		after, _ := apiserverMetrics(ctx, c)
		etcdGrowth := etcdSize(after) - etcdSize(before)
		total := 0.0
		parts := make([]string, k)
		for i, r := range shards {
			s := cpuSeconds(r.proc.Process.Pid) - shardCPU[i]
			total += s
			rss, _ := testcluster.ProcStatus(r.proc.Process.Pid, "VmHWM")
			parts[i] = fmt.Sprintf("%s: %d tenants, %.1f s CPU, peak RSS %.0f MiB", r.id, perShard[r.id], s, float64(rss)/(1<<20))
		}
		fmt.Printf("  %d replica(s): %.1f s to all Ready; controller CPU %.1f s (%.0f ms per tenant); by shard: %s\n",
			k, toReady.Seconds(), total, 1000*total/float64(n), strings.Join(parts, "; "))
		fmt.Printf("    CPU while provisioning: %s\n", cpu)
		fmt.Printf("    API writes %.1f per tenant; etcd database grew %.1f KiB per tenant (before compaction)\n",
			(writesIn(after)-writesIn(before)-float64(n))/float64(n), etcdGrowth/1024/float64(n))
		b.ReportMetric(toReady.Seconds(), fmt.Sprintf("s-to-all-ready-%dx", k))
		for _, r := range shards {
			_ = r.proc.Process.Kill()
			_, _ = r.proc.Process.Wait()
		}
	}
	b.ReportMetric(0, "ns/op")
}

// etcdSize is the size of the etcd database as the API server reports it
// (apiserver_storage_size_bytes), or 0 when it does not.
func etcdSize(body string) float64 {
	return sumSeries(body, func(line string) bool { return strings.HasPrefix(line, "apiserver_storage_size_bytes") })
}
