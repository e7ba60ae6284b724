package controller_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

const benchStores = 1000

// benchSetup creates the KVStores once per process: the testing package
// runs a benchmark with N=1 before the requested N.
var benchSetup struct {
	sync.Once
	ns      string
	toReady time.Duration
	err     error
}

// BenchmarkKVStore1000 creates 1,000 KVStores on the test control plane
// and waits until all are Ready (reported as s-to-all-ready). Each
// iteration is then one steady-state resync: every KVStore reconciled
// once, each reconcile timed (p50-ms, p99-ms) and the writes counted in the
// API server's audit log (writes/resync). The KVStores are left in place:
// run it on a cluster of its own (make bench-sample).
func BenchmarkKVStore1000(b *testing.B) {
	c := testcluster.Require(b, cluster)
	ctx := context.Background()
	benchSetup.Do(func() { benchSetup.ns, benchSetup.toReady, benchSetup.err = createStores(ctx, c) })
	if benchSetup.err != nil {
		b.Fatal(benchSetup.err)
	}
	ns := benchSetup.ns
	var latencies []time.Duration
	writesTotal := 0
	b.ResetTimer()
	for range b.N {
		w := c.WritesDuring(b, agent, ns, func() {
			for i := range benchStores {
				req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("kv-%04d", i)}}
				t0 := time.Now()
				if _, err := reconciler.Reconcile(ctx, req); err != nil {
					b.Fatal(err)
				}
				latencies = append(latencies, time.Since(t0))
			}
		})
		writesTotal += len(w)
	}
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(benchSetup.toReady.Seconds(), "s-to-all-ready")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(writesTotal)/float64(b.N), "writes/resync")
	b.ReportMetric(0, "ns/op")
}

// createStores creates benchStores KVStores in a new namespace and waits
// until every one is Ready.
func createStores(ctx context.Context, c *testcluster.Cluster) (string, time.Duration, error) {
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "kv-bench-", Labels: restricted},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", 0, err
	}
	start := time.Now()
	for i := range benchStores {
		if err := kube.Create(ctx, newKVStore(ns.Name, fmt.Sprintf("kv-%04d", i), 1)); err != nil {
			return "", 0, err
		}
	}
	deadline := time.Now().Add(20 * time.Minute)
	for {
		list := &kvv1.KVStoreList{}
		if err := kube.List(ctx, list, client.InNamespace(ns.Name)); err != nil {
			return "", 0, err
		}
		n := 0
		for i := range list.Items {
			if ready(&list.Items[i]) == nil {
				n++
			}
		}
		if n == benchStores {
			break
		}
		if time.Now().After(deadline) {
			return "", 0, fmt.Errorf("%d of %d KVStores Ready after 20 minutes", n, benchStores)
		}
		time.Sleep(time.Second)
	}
	toReady := time.Since(start)
	time.Sleep(3 * time.Second) // let the last watch events settle
	return ns.Name, toReady, nil
}
