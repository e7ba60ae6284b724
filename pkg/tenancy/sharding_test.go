package tenancy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/cli"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/sharding"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	releaserecords "opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// shardReplica is one `opctl tenancy run --shards` process.
type shardReplica struct {
	id, metrics, trace string
	started            time.Time
	proc               *exec.Cmd
}

// TestShardedReplicas runs the controller as three sharded processes over
// 300 tenants, kills one and adds another: each replica reconciles only
// the tenants the ring gave it and caches only their objects, a dead
// shard's tenants move with their objects and stay Ready, a new shard
// takes its share after a drain, no tenant is ever reconciled by two
// shards at once and no release is installed twice.
func TestShardedReplicas(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	const n = 300
	chart := sampleChart(t, "", "0.1.0")
	id := suffix()
	ring := "t" + id
	shardKey, drainKey := sharding.ShardLabel(ring), sharding.DrainLabel(ring)
	member := map[string]string{"test.opctl.dev/ring": ring}
	logs := t.TempDir()
	start := func(name string) *shardReplica {
		r := &shardReplica{id: ring + "-" + name, metrics: freeAddr(t), trace: filepath.Join(logs, name+".trace"), started: time.Now()}
		r.proc = runController(t, filepath.Join(logs, name+".log"), nil, "--shards", "--ring", ring, "--shard-id", r.id,
			"--shard-selector", labels.Set(member).String(), "--shard-trace", r.trace,
			"--metrics-bind-address", r.metrics, "--max-concurrent-reconciles", "8")
		return r
	}
	replicas := map[string]*shardReplica{}
	for _, name := range []string{"a", "b", "c"} {
		replicas[name] = start(name)
	}
	// The tenants come once the ring has its three shards, so that none
	// moves in the first phase.
	waitLeases(t, ring, 3)

	names := make([]string, n)
	if err := parallel(16, n, func(i int) error {
		names[i] = fmt.Sprintf("s%s-%03d", id, i)
		tn := newTenant(names[i], []string{names[i]}, chart, 1)
		tn.Labels = member
		return cl.Create(ctx, tn)
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteRing(t, member) })
	tenants := informer(t, c, &tenancyv1.Tenant{}, cache.ByObject{Label: labels.SelectorFromSet(member)})
	list := func() []tenancyv1.Tenant {
		var l tenancyv1.TenantList
		if err := tenants.List(ctx, &l); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	// settled waits until every tenant is on the shard the ring of live
	// gives it, not draining, Ready for its generation, and reconciled by its shard
	// since that shard started, and since since if it moved from its shard
	// in prev.
	settled := func(what string, prev map[string]string, since time.Time, live ...string) {
		t.Helper()
		waitLeases(t, ring, len(live))
		ids := make([]string, len(live))
		for i, name := range live {
			ids[i] = replicas[name].id
		}
		want := sharding.NewRing(ids)
		at := time.Now()
		waitAll(t, at, n, what, func() (int, string) {
			traces := readTraces(t, replicas)
			done, waiting := 0, map[string]int{}
			for _, tn := range list() {
				shard := tn.Labels[shardKey]
				r := replicas[strings.TrimPrefix(shard, ring+"-")]
				cond := apimeta.FindStatusCondition(tn.Status.Conditions, "Ready")
				switch {
				case r == nil || !slices.Contains(live, strings.TrimPrefix(shard, ring+"-")):
					waiting["unassigned"]++
				case shard != want.Owner(tn.Name):
					waiting["moving"]++
				case tn.Labels[drainKey] != "":
					waiting["draining"]++
				case !traces.ranSince(shard, tn.Name, r.started) || (prev[tn.Name] != shard && !traces.ranSince(shard, tn.Name, since)):
					waiting["not reconciled by "+shard]++
				case cond == nil || cond.Status != metav1.ConditionTrue || tn.Status.ObservedGeneration != tn.Generation:
					waiting["not Ready"]++
				default:
					done++
				}
			}
			return done, fmt.Sprint(waiting)
		})
	}
	assignment := func() map[string]string {
		m := map[string]string{}
		for _, tn := range list() {
			m[tn.Name] = tn.Labels[shardKey]
		}
		return m
	}
	// readySince is when each tenant last became Ready: a tenant that
	// moves stays Ready, so it does not change.
	readySince := func() map[string]time.Time {
		m := map[string]time.Time{}
		for _, tn := range list() {
			if cond := apimeta.FindStatusCondition(tn.Status.Conditions, "Ready"); cond != nil {
				m[tn.Name] = cond.LastTransitionTime.Time
			}
		}
		return m
	}
	stayedReady := func(what string, before, after map[string]string, since map[string]time.Time) {
		t.Helper()
		now := readySince()
		for tenant, from := range before {
			if after[tenant] != from && !now[tenant].Equal(since[tenant]) {
				t.Errorf("%s: %s moved from %s to %s and its Ready condition changed at %s", what, tenant, from, after[tenant], now[tenant])
			}
		}
	}

	// 1. Three shards share the tenants, each reconciles only its own.
	settled("Ready on three shards", nil, time.Time{}, "a", "b", "c")
	before := assignment()
	share := map[string]int{}
	for _, s := range before {
		share[s]++
	}
	traces := readTraces(t, replicas)
	for name, r := range replicas {
		got := share[r.id]
		if got < n/6 {
			t.Errorf("shard %s got %d of %d tenants: the ring is unbalanced (%v)", r.id, got, n, share)
		}
		body, err := testcluster.HTTPGet(ctx, "http://"+r.metrics+"/metrics")
		if err != nil {
			t.Fatal(err)
		}
		if ready := sumSeries(body, func(line string) bool {
			return strings.HasPrefix(line, `opctl_tenancy_tenants{condition="Ready",status="True"} `)
		}); int(ready) != got {
			t.Errorf("shard %s reports %v Ready tenants in its metrics, the ring gave it %d", name, ready, got)
		}
		for tenant := range traces[r.id] {
			if before[tenant] != r.id {
				t.Errorf("shard %s reconciled %s, which the ring gave to %s", r.id, tenant, before[tenant])
			}
		}
	}
	t.Logf("shares: %v", share)
	shardCaches(t, before, shardKey, replicas["a"], replicas["b"], replicas["c"])
	ready := readySince()

	// 2. Kill b: its tenants move to a and c, and stay Ready.
	killed := time.Now()
	_ = replicas["b"].proc.Process.Signal(syscall.SIGKILL)
	_, _ = replicas["b"].proc.Process.Wait()
	settled("Ready after shard b was killed", before, killed, "a", "c")
	afterKill := assignment()
	moved := 0
	for tenant, from := range before {
		to := afterKill[tenant]
		if from != to {
			moved++
			if from != replicas["b"].id {
				t.Errorf("%s moved from %s to %s, though only b left", tenant, from, to)
			}
		}
	}
	if moved != share[replicas["b"].id] {
		t.Errorf("%d tenants moved after the kill, b had %d", moved, share[replicas["b"].id])
	}
	stayedReady("after the kill", before, afterKill, ready)
	shardCaches(t, afterKill, shardKey, replicas["a"], replicas["c"])
	ready = readySince()

	// 3. Add d: tenants move to it after their shards let them go.
	joined := time.Now()
	replicas["d"] = start("d")
	settled("Ready after shard d joined", afterKill, joined, "a", "c", "d")
	toD := 0
	for tenant, to := range assignment() {
		if from := afterKill[tenant]; from != to {
			toD++
			if to != replicas["d"].id {
				t.Errorf("%s moved from %s to %s when d joined", tenant, from, to)
			}
		}
	}
	if toD == 0 {
		t.Error("no tenant moved to the new shard d")
	}
	afterJoin := assignment()
	stayedReady("after d joined", afterKill, afterJoin, ready)
	shardCaches(t, afterJoin, shardKey, replicas["a"], replicas["c"], replicas["d"])
	t.Logf("%d tenants moved when b was killed, %d to d when it joined", moved, toD)

	// No tenant was reconciled by two shards at once, and no release was
	// installed twice.
	if overlaps := readTraces(t, replicas).overlaps(); len(overlaps) > 0 {
		t.Errorf("reconciled by two shards at once: %s", strings.Join(overlaps[:min(5, len(overlaps))], "; "))
	}
	revisions := map[string]int{}
	var records corev1.SecretList
	if err := cl.List(ctx, &records, client.InNamespace(tenancy.DefaultStorageNamespace), client.MatchingLabels{"owner": "helm"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range records.Items {
		revisions[r.Labels[releaserecords.LabelRecordTenant]]++
	}
	for _, name := range names {
		if revisions[name] != 1 {
			t.Errorf("tenant %s has %d release revisions, want 1", name, revisions[name])
		}
	}
}

// shardCaches checks that every object of the assigned tenants carries
// its tenant's shard label, and that each live replica's cache holds, by
// its metrics, exactly the objects of its own tenants.
func shardCaches(t *testing.T, assigned map[string]string, shardKey string, live ...*shardReplica) {
	t.Helper()
	ctx := context.Background()
	want := map[string]map[string]int{} // shard, kind: objects
	var wrong []string
	for kind, newList := range tenancy.CachedKinds {
		l := newList()
		if err := cl.List(ctx, l, client.HasLabels{tenancyv1.LabelTenant}); err != nil {
			t.Fatal(err)
		}
		_ = apimeta.EachListItem(l, func(o runtime.Object) error {
			obj := o.(client.Object)
			shard, ok := assigned[obj.GetLabels()[tenancyv1.LabelTenant]]
			if !ok {
				return nil
			}
			if got := obj.GetLabels()[shardKey]; got != shard {
				wrong = append(wrong, fmt.Sprintf("%s %s/%s is labelled %q, its tenant is on %s", kind, obj.GetNamespace(), obj.GetName(), got, shard))
			}
			if want[shard] == nil {
				want[shard] = map[string]int{}
			}
			want[shard][kind]++
			return nil
		})
	}
	if len(wrong) > 0 {
		t.Errorf("%d tenant objects are not labelled with their tenant's shard: %s", len(wrong), strings.Join(wrong[:min(5, len(wrong))], "; "))
	}
	for _, r := range live {
		for _, kind := range []string{"Namespace", "ResourceQuota", "Deployment", "ServiceAccount"} {
			if want[r.id][kind] == 0 {
				t.Errorf("shard %s: its tenants have no %s", r.id, kind)
			}
		}
		// The cache follows the relabelling within moments.
		var diff []string
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
			body, err := testcluster.HTTPGet(ctx, "http://"+r.metrics+"/metrics")
			if err != nil {
				t.Fatal(err)
			}
			diff = nil
			for kind := range tenancy.CachedKinds {
				series := `opctl_tenancy_cached_objects{kind="` + kind + `"} `
				if got := sumSeries(body, func(line string) bool { return strings.HasPrefix(line, series) }); int(got) != want[r.id][kind] {
					diff = append(diff, fmt.Sprintf("%s: %v cached, its tenants have %d", kind, got, want[r.id][kind]))
				}
			}
			if len(diff) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(diff) > 0 {
			slices.Sort(diff)
			t.Errorf("shard %s caches other objects than its tenants': %s", r.id, strings.Join(diff, "; "))
		}
	}
}

// waitLeases waits until ring has n live shard Leases.
func waitLeases(t testing.TB, ring string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var leases coordinationv1.LeaseList
		err := cl.List(context.Background(), &leases, client.InNamespace(tenancy.DefaultStorageNamespace), client.MatchingLabels{sharding.LabelRing: ring})
		if err != nil {
			t.Fatal(err)
		}
		live, _ := sharding.Members(leases.Items, time.Now())
		if len(live) == n {
			time.Sleep(2 * time.Second) // for the sharder's cache
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ring %s has %d live shards after a minute, want %d", ring, len(live), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deleteRing deletes the tenants of a sharding test, with their shards
// still running, and waits until they are gone.
func deleteRing(t *testing.T, member map[string]string) {
	ctx := context.Background()
	if err := cl.DeleteAllOf(ctx, &tenancyv1.Tenant{}, client.MatchingLabels(member)); err != nil {
		t.Errorf("deleting the ring's tenants: %v", err)
		return
	}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		var l tenancyv1.TenantList
		if err := cl.List(ctx, &l, client.MatchingLabels(member)); err == nil && len(l.Items) == 0 {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Error("the ring's tenants were not deleted within 5 minutes")
}

// shardTraces are the reconciles each shard ran, by shard and tenant.
type shardTraces map[string]map[string][][2]int64

func readTraces(t *testing.T, replicas map[string]*shardReplica) shardTraces {
	t.Helper()
	out := shardTraces{}
	for _, r := range replicas {
		f, err := os.Open(r.trace)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var tr cli.ShardTrace
			if json.Unmarshal(sc.Bytes(), &tr) != nil {
				continue // a line cut off by a kill
			}
			if out[tr.Shard] == nil {
				out[tr.Shard] = map[string][][2]int64{}
			}
			out[tr.Shard][tr.Tenant] = append(out[tr.Shard][tr.Tenant], [2]int64{tr.Start, tr.End})
		}
		f.Close()
	}
	return out
}

// ranSince: shard reconciled tenant, starting after since.
func (s shardTraces) ranSince(shard, tenant string, since time.Time) bool {
	for _, iv := range s[shard][tenant] {
		if iv[0] >= since.UnixNano() {
			return true
		}
	}
	return false
}

// overlaps are the reconciles of one tenant by two shards that overlap.
func (s shardTraces) overlaps() []string {
	var out []string
	shards := make([]string, 0, len(s))
	for sh := range s {
		shards = append(shards, sh)
	}
	for i, a := range shards {
		for _, b := range shards[i+1:] {
			for tenant, ivA := range s[a] {
				for _, x := range ivA {
					for _, y := range s[b][tenant] {
						if x[0] < y[1] && y[0] < x[1] {
							out = append(out, fmt.Sprintf("%s by %s and %s", tenant, a, b))
						}
					}
				}
			}
		}
	}
	return out
}
