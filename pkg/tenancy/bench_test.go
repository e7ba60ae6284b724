package tenancy_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

var (
	benchTenants   = flag.Int("tenants", 100, "tenants BenchmarkTenancyProvision provisions")
	benchWorkers   = flag.Int("workers", 32, "--max-concurrent-reconciles of the controller")
	benchMemLimit  = flag.String("gomemlimit", "120MiB", "GOMEMLIMIT of the controller process")
	benchGOGC      = flag.String("gogc", "50", "GOGC of the controller process, as charts/opctl sets it")
	benchPprof     = flag.String("pprof", "", "address the controller serves /debug/pprof on, for profiling a run")
	benchCLISample = flag.Int("helm-cli-sample", 10, "helm install --wait CLI calls the reference loop runs (its per-install time is extrapolated to -tenants)")
)

// BenchmarkTenancyProvision provisions -tenants tenants (namespace, quota,
// limits, NetworkPolicies, owner RoleBinding and a Helm release of the
// sample chart each) with the controller running as its own process, and
// prints the wall time to all-Ready, the controller's peak RSS, the API
// writes of the provisioning and of one steady-state resync, and two
// references: a loop of `helm install --wait` CLI calls and a raw
// write-throughput probe, which gives the physical floor. Then the owners
// of -attackers tenants attack the controller's memory (attackMemory).
// Run it on a control plane of its own: make bench-tenancy N=1000.
func BenchmarkTenancyProvision(b *testing.B) {
	c := testcluster.Require(b, cluster)
	ctx := context.Background()
	n := *benchTenants
	chart := sampleChart(b, "", "0.1.0")
	id := suffix()

	metricsAddr := freeAddr(b)
	proc := benchController(b, metricsAddr)
	// A warm-up tenant installs the shared CRD, which the quota controller
	// discovers within 30 s; the measured tenants find the platform warm.
	warm := "warm-" + id
	warmStart := time.Now()
	createTenant(b, newTenant(warm, []string{warm}, chart, 1))
	waitTenant(b, warm, 2*time.Minute, "warm-up tenant Ready", ready)
	warmUp := time.Since(warmStart)
	off, err := c.AuditOffset()
	if err != nil {
		b.Fatal(err)
	}
	w := openWindow(b, c)
	start := w.start
	names := make([]string, n)
	createErr := parallel(16, n, func(i int) error {
		names[i] = fmt.Sprintf("b%s-%04d", id, i)
		return cl.Create(ctx, newTenant(names[i], []string{names[i]}, chart, 1, "owner-"+names[i]))
	})
	if createErr != nil {
		b.Fatal(createErr)
	}
	// Readiness is watched through an informer: polling LISTs of 1,000
	// Tenants would cost the control plane more than the controller does.
	tenants := informer(b, c, &tenancyv1.Tenant{}, cache.ByObject{})
	peakAnon := sampleAnon(b, proc.Process.Pid)
	toReady := waitAll(b, start, n, "Ready", func() (int, string) {
		// The benchmark shares the machine with what it measures: no deep
		// copies, no error strings per Tenant.
		var list tenancyv1.TenantList
		if err := tenants.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
			b.Fatal(err)
		}
		readyN := 0
		waiting := map[string]int{}
		for i := range list.Items {
			tn := &list.Items[i]
			if !strings.HasPrefix(tn.Name, "b"+id) {
				continue
			}
			cond := apimeta.FindStatusCondition(tn.Status.Conditions, "Ready")
			switch {
			case cond == nil:
				waiting["NoStatus"]++
			case cond.Status == metav1.ConditionTrue && tn.Status.ObservedGeneration == tn.Generation:
				readyN++
			default:
				waiting[cond.Reason]++
			}
		}
		return readyN, fmt.Sprint(waiting)
	})
	writes, cpu := w.close(b, c, toReady, n)
	ctrlWrites, err := c.AuditWritesSince(off, func(e testcluster.AuditEvent) bool { return e.UserAgent == "opctl-tenancy" })
	if err != nil {
		b.Fatal(err)
	}
	totalWrites := writes - float64(n) // not the benchmark's own creates

	// One steady-state resync: every tenant reconciled once more.
	time.Sleep(15 * time.Second) // let phases and quota counts settle
	offResync, _ := c.AuditOffset()
	if err := parallel(16, n, func(i int) error {
		tn := &tenancyv1.Tenant{}
		if err := cl.Get(ctx, client.ObjectKey{Name: names[i]}, tn); err != nil {
			return err
		}
		patch := client.MergeFrom(tn.DeepCopy())
		metav1.SetMetaDataAnnotation(&tn.ObjectMeta, "bench.opctl.dev/resync", "1")
		return cl.Patch(ctx, tn, patch)
	}); err != nil {
		b.Fatal(err)
	}
	time.Sleep(20 * time.Second)
	resyncWrites, err := c.AuditWritesSince(offResync, func(e testcluster.AuditEvent) bool { return e.UserAgent == "opctl-tenancy" })
	if err != nil {
		b.Fatal(err)
	}
	rss, _ := testcluster.ProcStatus(proc.Process.Pid, "VmHWM")
	rssFile, _ := testcluster.ProcStatus(proc.Process.Pid, "RssFile")
	ctrlCPU := cpuSeconds(proc.Process.Pid)
	body, _ := testcluster.HTTPGet(ctx, "http://"+metricsAddr+"/metrics")

	rate, rates := w.floorRate(b, c)
	cliPer := helmCLILoop(b, c, chart, *benchCLISample)

	floor := totalWrites / rate
	fmt.Printf("\ntenancy benchmark: %d tenants on this machine (after a warm-up tenant: %.1f s)\n", n, warmUp.Seconds())
	fmt.Printf("  wall time to all Ready:            %.1f s (%.1f ms per tenant)\n", toReady.Seconds(), float64(toReady.Milliseconds())/float64(n))
	fmt.Printf("  controller peak RSS:               %.0f MiB (GOMEMLIMIT=%s GOGC=%s; peak anonymous %.0f MiB, file-backed now %.0f MiB); CPU %.1f s\n",
		float64(rss)/(1<<20), *benchMemLimit, *benchGOGC, float64(peakAnon.Load())/(1<<20), float64(rssFile)/(1<<20), ctrlCPU)
	fmt.Printf("  API writes, provisioning (all):    %.0f (%.1f per tenant); by the controller: %d\n", totalWrites, totalWrites/float64(n), len(ctrlWrites))
	fmt.Printf("  controller writes, one resync:     %d (of %d tenants)\n", len(resyncWrites), n)
	fmt.Printf("  reference, raw write probe:        %s -> physical floor %.1f s; controller at %.1fx the floor\n", rates, floor, toReady.Seconds()/floor)
	fmt.Printf("  CPU while provisioning:            %s\n", cpu)
	fmt.Printf("  reference, helm install --wait:    %.2f s per install (%d measured) -> %.1f min for %d\n", cliPer.Seconds(), *benchCLISample, cliPer.Seconds()*float64(n)/60, n)
	byKind := map[string]int{}
	for _, w := range ctrlWrites {
		byKind[w.Verb+" "+w.ObjectRef.Resource+"/"+w.ObjectRef.Subresource]++
	}
	fmt.Printf("  controller writes by kind:         %v\n", byKind)
	fmt.Printf("  API requests per tenant:           %s\n", w.requests)
	fmt.Printf("  controller: %s\n", meanOf(body, "opctl_tenancy_release_operation_duration_seconds", `operation="install"`, "helm install"))
	fmt.Printf("  controller: %s\n", meanOf(body, "controller_runtime_reconcile_time_seconds", `controller="opctl-tenancy"`, "reconcile"))
	if len(resyncWrites) > 0 {
		fmt.Printf("  resync writes: %s\n", testcluster.Describe(resyncWrites[:min(10, len(resyncWrites))]))
	}
	attackMemory(b, c, proc, names, metricsAddr, func() *exec.Cmd { return benchController(b, metricsAddr) })
	b.ReportMetric(toReady.Seconds(), "s-to-all-ready")
	b.ReportMetric(float64(rss)/(1<<20), "MiB-peak-rss")
	b.ReportMetric(float64(len(resyncWrites)), "writes/resync")
	b.ReportMetric(totalWrites, "writes-total")
	b.ReportMetric(toReady.Seconds()/floor, "x-floor")
	b.ReportMetric(0, "ns/op")
}

// waitAll polls count every 250 ms until it counts n done, prints its
// progress every 10 s, and returns the time since start.
func waitAll(b testing.TB, start time.Time, n int, what string, count func() (done int, waiting string)) time.Duration {
	b.Helper()
	last := time.Now()
	for {
		done, waiting := count()
		if done == n {
			return time.Since(start)
		}
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Printf("  %5.1f s: %d %s, waiting: %s\n", time.Since(start).Seconds(), done, what, waiting)
		}
		if time.Since(start) > 30*time.Minute {
			b.Fatalf("%d of %d %s after 30 minutes", done, n, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// sampleAnon tracks the peak RssAnon of a process (the kernel keeps only
// the peak of the whole RSS, VmHWM, which counts the binary's file-backed
// pages too) every 100 ms until the benchmark ends.
func sampleAnon(b *testing.B, pid int) *atomic.Int64 {
	var peak atomic.Int64
	done := make(chan struct{})
	b.Cleanup(func() { close(done) })
	go func() {
		for {
			if v, err := testcluster.ProcStatus(pid, "RssAnon"); err == nil && v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return &peak
}

// informer is a started, synced cache of obj's kind.
func informer(b testing.TB, c *testcluster.Cluster, obj client.Object, by cache.ByObject) cache.Cache {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	ctrllog.SetLogger(logr.Discard())
	ca, err := cache.New(c.Config, cache.Options{Scheme: tenancy.Scheme(), ByObject: map[client.Object]cache.ByObject{obj: by}})
	if err == nil {
		_, err = ca.GetInformer(ctx, obj)
	}
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		b.Fatalf("%T cache did not sync", obj)
	}
	return ca
}

// benchController runs `opctl tenancy run` for the benchmark. As
// charts/opctl does, it sets GOMEMLIMIT (there from the memory limit: a
// soft heap limit makes the GC work harder before the process grows) and
// GOGC=50.
func benchController(b *testing.B, metricsAddr string) *exec.Cmd {
	b.Helper()
	logPath := filepath.Join(os.TempDir(), "opctl-tenancy-bench-controller.log")
	fmt.Printf("  controller log: %s\n", logPath)
	return runController(b, logPath, []string{"GOMEMLIMIT=" + *benchMemLimit, "GOGC=" + *benchGOGC}, "--metrics-bind-address", metricsAddr,
		"--max-concurrent-reconciles", strconv.Itoa(*benchWorkers), "--kube-api-qps", "2000", "--kube-api-burst", "4000",
		"--pprof-bind-address", *benchPprof)
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(workers, n int, f func(i int) error) error {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Value
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := f(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return err
	}
	return nil
}

// apiserverMetrics is the API server's Prometheus text exposition.
func apiserverMetrics(ctx context.Context, c *testcluster.Cluster) (string, error) {
	body, err := c.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	return string(body), err
}

// isRequest matches the series of apiserver_request_total.
func isRequest(line string) bool { return strings.HasPrefix(line, "apiserver_request_total{") }

// writesIn sums apiserver_request_total over the write verbs.
func writesIn(body string) float64 {
	return sumSeries(body, func(line string) bool {
		if !isRequest(line) {
			return false
		}
		for _, v := range []string{`verb="POST"`, `verb="PUT"`, `verb="PATCH"`, `verb="DELETE"`, `verb="APPLY"`, `verb="CREATE"`, `verb="UPDATE"`} {
			if strings.Contains(line, v) {
				return true
			}
		}
		return false
	})
}

// sumSeries sums the values of the series of a Prometheus text exposition
// whose line match accepts.
func sumSeries(body string, match func(line string) bool) float64 {
	total := 0.0
	eachSeries(body, func(line string, v float64) {
		if match(line) {
			total += v
		}
	})
	return total
}

// eachSeries calls f with every series line of a Prometheus text
// exposition and its value.
func eachSeries(body string, f func(line string, v float64)) {
	for line := range strings.SplitSeq(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64); err == nil {
			f(line, v)
		}
	}
}

// rawWriteRate creates small ConfigMaps from 32 goroutines for 5 s with no
// client-side rate limit: the write throughput of this control plane.
func rawWriteRate(b *testing.B, c *testcluster.Cluster) float64 {
	b.Helper()
	ctx := context.Background()
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := c.Namespace(b, "raw-writes", nil)
	var count atomic.Int64
	deadline := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d-%d", w, i)}, Data: map[string]string{"k": "v"}}
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err == nil {
					count.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(count.Load()) / 5
}

// runWindow is one measured provisioning: the write probe just before
// it, and the API writes and CPU time from its start.
type runWindow struct {
	start      time.Time
	rateBefore float64
	metrics    string // the API server's, when the window opened
	cpu        map[string]float64
	// requests describes the API requests of the closed window by verb
	// and resource, per tenant.
	requests string
}

// openWindow probes the write rate, then starts the window.
func openWindow(b *testing.B, c *testcluster.Cluster) *runWindow {
	b.Helper()
	w := &runWindow{rateBefore: rawWriteRate(b, c)}
	var err error
	if w.metrics, err = apiserverMetrics(context.Background(), c); err != nil {
		b.Fatal(err)
	}
	w.cpu = processCPU()
	w.start = time.Now()
	return w
}

// close returns the API writes since the window opened and the CPU each
// process spent in wall, described, and sets w.requests for n tenants.
func (w *runWindow) close(b *testing.B, c *testcluster.Cluster, wall time.Duration, n int) (float64, string) {
	b.Helper()
	cpu := cpuSpent(w.cpu, processCPU(), wall.Seconds())
	body, err := apiserverMetrics(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	before, after := requestsIn(w.metrics), requestsIn(body)
	type kind struct {
		name string
		n    float64
	}
	var kinds []kind
	for k, v := range after {
		if d := v - before[k]; d >= float64(n)/2 {
			kinds = append(kinds, kind{k, d})
		}
	}
	slices.SortFunc(kinds, func(a, b kind) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name)) })
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %.1f", k.name, k.n/float64(n))
	}
	w.requests = strings.Join(parts, ", ")
	return writesIn(body) - writesIn(w.metrics), cpu
}

// requestsIn counts apiserver_request_total by verb and resource.
func requestsIn(body string) map[string]float64 {
	out := map[string]float64{}
	label := func(line, name string) string {
		_, rest, ok := strings.Cut(line, name+`="`)
		if !ok {
			return ""
		}
		v, _, _ := strings.Cut(rest, `"`)
		return v
	}
	eachSeries(body, func(line string, v float64) {
		if isRequest(line) {
			out[label(line, "verb")+" "+label(line, "resource")] += v
		}
	})
	return out
}

// floorRate probes the write rate again after a run and returns the
// better of before and after (the floor is what the control plane can do
// at best) and both, described.
func (w *runWindow) floorRate(b *testing.B, c *testcluster.Cluster) (float64, string) {
	after := rawWriteRate(b, c)
	best := max(w.rateBefore, after)
	return best, fmt.Sprintf("%.0f writes/s (%.0f before the run, %.0f after)", best, w.rateBefore, after)
}

// helmCLILoop installs the chart with `helm install --wait` k times, one
// after the other, into namespaces of their own, and returns the mean time
// per install.
func helmCLILoop(b *testing.B, c *testcluster.Cluster, chart string, k int) time.Duration {
	b.Helper()
	bin, err := testcluster.BinDir()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := range k {
		helmInstall(b, c, filepath.Join(bin, "helm"), chart, c.Namespace(b, fmt.Sprintf("helm-cli-%d", i), nil), "--wait", "--timeout", "2m")
	}
	return time.Since(start) / time.Duration(k)
}

// helmInstall installs the chart as release kv into ns with the helm CLI
// at path, with a Helm home of its own and the CRDs left out.
func helmInstall(b *testing.B, c *testcluster.Cluster, path, chart, ns string, args ...string) {
	b.Helper()
	cmd := exec.Command(path, append([]string{"install", "kv", chart, "-n", ns, "--kubeconfig", c.Kubeconfig, "--set", "crds.install=false"}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+b.TempDir(), "HELM_CACHE_HOME="+b.TempDir(), "HELM_DATA_HOME="+b.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s install: %v\n%s", filepath.Base(path), err, out)
	}
}

// meanOf reads name_sum and name_count for the series matching label in a
// Prometheus text exposition and describes the mean.
func meanOf(body, name, label, what string) string {
	of := func(series string) float64 {
		return sumSeries(body, func(line string) bool {
			return strings.HasPrefix(line, series) && strings.Contains(line, label)
		})
	}
	sum, count := of(name+"_sum"), of(name+"_count")
	if count == 0 {
		return what + ": no samples"
	}
	return fmt.Sprintf("%s: %.0f, mean %.0f ms", what, count, sum/count*1000)
}

// cpuSeconds is the user and system CPU time of a process so far.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // clock ticks (USER_HZ = 100 on Linux)
}
