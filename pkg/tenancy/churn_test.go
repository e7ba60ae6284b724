package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// churnPairs is how many ConfigMaps the owner creates and deletes, and
// churnWorkers how many of them at once.
const churnPairs, churnWorkers = 1000, 4

// churnBackoff retries a create the quota's admission refused for now
// (quotaBusy).
var churnBackoff = wait.Backoff{Steps: 60, Duration: 5 * time.Millisecond, Factor: 1.5, Jitter: 1, Cap: time.Second}

// quotaBusy: writers at once conflict on the quota's usage, which the API
// server counts at admission, and the quota controller gives back the
// deleted ConfigMaps' count some time after the deletes, so a fast
// churner meets the limit for a while.
func quotaBusy(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota")
}

// maxChurnReconciles bounds the Tenant reconciles the churn may cause: a
// constant, whatever churnPairs is.
const maxChurnReconciles = 10

// churnAllowed is how many reconciles a churn test may count over the
// time since start: maxChurnReconciles, plus other tenants' on the shared
// control plane at up to 1.5 times the rate waitIdle measured (over 2 s,
// so a rough figure).
func churnAllowed(rate float64, start time.Time) float64 {
	return float64(maxChurnReconciles) + 1.5*rate*time.Since(start).Seconds()
}

// TestQuotaUsageChurnBounded: an owner creating and deleting ConfigMaps in
// its namespace changes the quota's status.used at every write, which the
// controller does not act on: the reconciles it causes are bounded by a
// small constant, not proportional to the churn (issue 45, class 4). A
// change the controller acts on (the quota's spec) is still corrected, and
// that reconcile refreshes the usage the Tenant's status shows.
func TestQuotaUsageChurnBounded(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	// An interval longer than the churn: the reconciles counted are those
	// the watches pass, whatever the machine's speed (the interval's
	// bound is TestQuotaUsageBounded's).
	startController(t, tenancy.Options{QuotaUsageInterval: time.Hour})
	name := "churn-" + suffix()
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{name}, "", 0, owner))
	key := client.ObjectKey{Namespace: name, Name: tenancy.QuotaName}
	q := &corev1.ResourceQuota{}
	// Settled: Ready, the status shows the quota the quota controller has
	// counted (the namespace's ServiceAccount and root CA ConfigMap), and
	// the controller has stopped reconciling.
	waitTenant(t, name, time.Minute, "Tenant Ready with its quota usage", func(tn *tenancyv1.Tenant) error {
		if err := cl.Get(ctx, key, q); err != nil {
			return err
		}
		if len(tn.Status.Namespaces) != 1 || !quotaEqual(tn.Status.Namespaces[0].Used, q.Status.Used) {
			return fmt.Errorf("status shows used %v, the quota %v", tn.Status.Namespaces, q.Status.Used)
		}
		if used := q.Status.Used["count/configmaps"]; used.Value() < 1 {
			return fmt.Errorf("the quota counts %s ConfigMaps, want the root CA's", used.String())
		}
		return ready(tn)
	})
	hard := q.Spec.DeepCopy().Hard
	baseline := q.Status.Used["count/configmaps"]
	// Other tests' tenants on the shared control plane may still bring
	// this controller reconciles: their rate is allowed for, not churn's.
	rate := waitIdle(t)

	start, before := time.Now(), reconciles(t)
	cfg := c.As(owner)
	cfg.QPS, cfg.Burst = 1000, 1000
	kc := kubernetes.NewForConfigOrDie(cfg)
	var wg sync.WaitGroup
	errs := make(chan error, churnWorkers)
	for w := range churnWorkers {
		wg.Go(func() {
			for i := w; i < churnPairs; i += churnWorkers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%d", i)}, Data: map[string]string{"i": fmt.Sprint(i)}}
				if err := retry.OnError(churnBackoff, quotaBusy, func() error {
					_, err := kc.CoreV1().ConfigMaps(name).Create(ctx, cm, metav1.CreateOptions{})
					return err
				}); err != nil {
					errs <- fmt.Errorf("creating ConfigMap %d as %s: %w", i, owner, err)
					return
				}
				if err := kc.CoreV1().ConfigMaps(name).Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
					errs <- fmt.Errorf("deleting ConfigMap %d as %s: %w", i, owner, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The quota controller has counted the deletions: used is back where
	// it was, and the controller has caught up with the events.
	testcluster.WaitObject(t, cl, q, time.Minute, "the quota's usage back to its baseline", func(q *corev1.ResourceQuota) error {
		if used := q.Status.Used["count/configmaps"]; used.Cmp(baseline) != 0 {
			return fmt.Errorf("count/configmaps used %s, want %s", used.String(), baseline.String())
		}
		return nil
	})
	time.Sleep(3 * time.Second) // the controller catches up with the last events
	n := reconciles(t) - before
	allowed := churnAllowed(rate, start)
	t.Logf("%d ConfigMap create/delete pairs by the owner: %.0f reconciles (others' rate %.1f/s)", churnPairs, n, rate)
	if n > allowed {
		t.Errorf("%d ConfigMap create/delete pairs by the owner caused %.0f Tenant reconciles, want at most %.0f (%d, plus other tenants' %.1f/s): quota usage churn must not drive the controller",
			churnPairs, n, allowed, maxChurnReconciles, rate)
	}

	// A change the controller acts on: the quota's spec, changed by a
	// cluster admin, is restored, and that reconcile shows the usage of
	// the moment.
	testcluster.UpdateObject(t, cl, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: tenancy.QuotaName}}, func(q *corev1.ResourceQuota) {
		q.Spec.Hard["count/configmaps"] = resource.MustParse("5")
	})
	testcluster.WaitObject(t, cl, q, time.Minute, "the quota's spec restored", func(q *corev1.ResourceQuota) error {
		if !quotaEqual(q.Spec.Hard, hard) || !quotaEqual(q.Status.Hard, hard) {
			return fmt.Errorf("spec.hard %v, status.hard %v, want %v", q.Spec.Hard, q.Status.Hard, hard)
		}
		return nil
	})
	waitTenant(t, name, time.Minute, "the status showing the quota's usage", func(tn *tenancyv1.Tenant) error {
		if err := cl.Get(ctx, key, q); err != nil {
			return err
		}
		if st := tn.Status.Namespaces[0]; !quotaEqual(st.Used, q.Status.Used) || !quotaEqual(st.Hard, q.Status.Hard) {
			return fmt.Errorf("status shows hard %v used %v, the quota hard %v used %v", st.Hard, st.Used, q.Status.Hard, q.Status.Used)
		}
		return ready(tn)
	})
}

// waitIdle waits, up to 30 s, until the controller has not reconciled
// for 2 s, and returns the rate it still reconciles at (other tests'
// tenants on the shared control plane; 0 when idle).
func waitIdle(t *testing.T) float64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		before := reconciles(t)
		time.Sleep(2 * time.Second)
		n := reconciles(t) - before
		if n == 0 || time.Now().After(deadline) {
			return n / 2
		}
	}
}

// TestPodChurnBounded: an owner deleting its release's pods over and over
// (no guardrail covers pods) moves the release Deployment's status at
// every deletion. Only a change of what the controller acts on or reports
// brings a reconcile, bounded per tenant (rollout_status.go): at 0, 5 and
// 15 s of the 33 s counted (the next at 35 s), each followed by the one
// its write of the Tenant's status brings, and one for the quota's usage:
// at most maxChurnReconciles, not one per status write (red team 3:
// 409 before).
func TestPodChurnBounded(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{QuotaUsageInterval: time.Hour})
	name := "podchurn-" + suffix()
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{name}, sampleChart(t, "", "0.1.0"), 1, owner))
	waitTenant(t, name, 3*time.Minute, "Tenant Ready", ready)
	rate := waitIdle(t)

	cfg := c.As(owner)
	cfg.QPS, cfg.Burst = 1000, 1000
	kc := kubernetes.NewForConfigOrDie(cfg)
	start, before := time.Now(), reconciles(t)
	deleted := 0
	for time.Since(start) < 30*time.Second {
		pods, err := kc.CoreV1().Pods(name).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("owner listing pods: %v", err)
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			if err := kc.CoreV1().Pods(name).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err == nil {
				deleted++
			} else {
				t.Logf("owner deleting pod %s: %v", p.Name, err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	n, allowed := reconciles(t)-before, churnAllowed(rate, start)
	t.Logf("owner deleted %d pods of its release in 30s: the controller ran %.0f reconciles (others' rate %.2f/s)", deleted, n, rate)
	if n > allowed {
		t.Errorf("%d pod deletions by the owner brought %.0f reconciles, want at most %.0f (%d, plus other tenants' %.2f/s)", deleted, n, allowed, maxChurnReconciles, rate)
	}
	// The churn over, the release rolls out again and the Tenant says so.
	waitTenant(t, name, time.Minute, "Tenant Ready after the churn", ready)
}
