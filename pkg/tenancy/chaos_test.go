package tenancy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	releaserecords "opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// The controller, run as a process, is SIGKILLed 20 times: five times each
// while ten tenants install, upgrade, fail an upgrade and roll back, and
// uninstall. Afterwards every release has one consistent history with no
// pending revision, every tenant that remains sits on the version it
// rolled back to, and every deleted tenant is gone with its namespaces and
// release records.
func TestChaosControllerKills(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	neverReady(t, c, "opctl/kvstore-operator:0.3.0")
	v1, v2, v3 := sampleChart(t, "", "0.1.0"), sampleChart(t, "", "0.2.0"), sampleChart(t, "", "0.3.0")
	id := suffix()
	logs := t.TempDir()
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("chaos-%s-%d", id, i)
	}
	kills := 0
	// phase runs five controllers, each killed once its action has a
	// release in one of states (or after wait).
	phase := func(what string, wait time.Duration, states []string, act func(tenants []string)) {
		landed := 0
		for round := range 5 {
			proc := runController(t, filepath.Join(logs, fmt.Sprintf("%s-%d.log", what, round)), nil,
				"--metrics-bind-address", "0", "--upgrade-timeout", "4s")
			tenants := names[2*round : 2*round+2]
			act(tenants)
			deadline := time.Now().Add(wait)
		poll:
			for time.Now().Before(deadline) {
				for _, tn := range tenants {
					if n, err := releasesIn(ctx, cl, tn, states...); err == nil && n > 0 {
						landed++
						break poll
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
			_ = proc.Process.Signal(syscall.SIGKILL)
			_, _ = proc.Process.Wait()
			kills++
		}
		t.Logf("%s: %d of 5 kills landed while a release was %v", what, landed, states)
	}

	phase("install", 15*time.Second, []string{"pending-install"}, func(tenants []string) {
		for _, name := range tenants {
			createTenant(t, newTenant(name, []string{name}, v1, 1))
		}
	})
	phase("upgrade", 15*time.Second, []string{"pending-upgrade"}, func(tenants []string) {
		for _, name := range tenants {
			setChart(t, name, v2)
		}
	})
	phase("rollback", 20*time.Second, []string{"pending-rollback"}, func(tenants []string) {
		for _, name := range tenants {
			setChart(t, name, v3)
		}
	})

	// Settle: every tenant's upgrade to 0.3.0 failed and rolled back to
	// the last version it ran, 0.2.0, or 0.1.0 where the kills left the
	// upgrade to 0.2.0 unfinished before 0.3.0 was asked for; the
	// operator runs that version, and each release has one history.
	metricsAddr := freeAddr(t)
	settle := runController(t, filepath.Join(logs, "settle.log"), nil, "--metrics-bind-address", metricsAddr, "--upgrade-timeout", "4s")
	for _, name := range names {
		tn := waitTenant(t, name, 4*time.Minute, "upgrade to 0.3.0 rolled back after the kills", func(tn *tenancyv1.Tenant) error {
			if err := testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonUpgradeFailed); err != nil {
				return fmt.Errorf("%w; operator %s", err, dump(tn.Status.Operators))
			}
			if op := tn.Status.Operators[0]; op.FailedVersion != "0.3.0" || (op.ChartVersion != "0.2.0" && op.ChartVersion != "0.1.0") {
				return fmt.Errorf("operator %s", dump(op))
			}
			return nil
		})
		want := "opctl/kvstore-operator:" + tn.Status.Operators[0].ChartVersion
		testcluster.Eventually(t, time.Minute, name+" runs the version it rolled back to", func(ctx context.Context) error {
			var deps appsv1.DeploymentList
			if err := cl.List(ctx, &deps, client.InNamespace(name)); err != nil || len(deps.Items) != 1 {
				return fmt.Errorf("deployments: %d, %v", len(deps.Items), err)
			}
			if got := deps.Items[0].Spec.Template.Spec.Containers[0].Image; got != want {
				return fmt.Errorf("image %s, want %s", got, want)
			}
			return nil
		})
		if err := checkHistory(ctx, cl, name, []string{name}, true); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The real metrics endpoint serves every series the alerts and the
	// dashboard use.
	body, err := testcluster.HTTPGet(ctx, "http://"+metricsAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	checkMonitoredSeries(t, body)
	_ = settle.Process.Signal(syscall.SIGKILL)
	_, _ = settle.Process.Wait()

	phase("uninstall", 10*time.Second, []string{"uninstalling"}, func(tenants []string) {
		for _, name := range tenants {
			if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	if kills != 20 {
		t.Fatalf("%d kills, want 20", kills)
	}

	runController(t, filepath.Join(logs, "final.log"), nil, "--metrics-bind-address", "0")
	testcluster.Eventually(t, 4*time.Minute, "every tenant, namespace and release record gone", func(ctx context.Context) error {
		for _, name := range names {
			if err := cl.Get(ctx, client.ObjectKey{Name: name}, &tenancyv1.Tenant{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("tenant %s still there (%v)", name, err)
			}
			if err := cl.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("namespace %s still there (%v)", name, err)
			}
			if n, err := releasesIn(ctx, cl, name); err != nil || n > 0 {
				return fmt.Errorf("tenant %s: %d release records left (%v)", name, n, err)
			}
		}
		return nil
	})
}

// checkHistory holds tenant's release records to one consistent history
// per release: all in the storage namespace, consecutive revisions (the
// controller prunes the oldest past MaxHistory once swept), none pending
// and, when deployed, exactly one deployed.
func checkHistory(ctx context.Context, cl client.Client, tenant string, namespaces []string, deployed bool) error {
	for _, ns := range namespaces {
		var stray corev1.SecretList
		if err := cl.List(ctx, &stray, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
			return err
		}
		if len(stray.Items) > 0 {
			return fmt.Errorf("%d Helm records in tenant namespace %s: a second history", len(stray.Items), ns)
		}
	}
	records, err := releaseRecords(ctx, cl, tenant)
	if err != nil {
		return err
	}
	versions := map[string][]int{}
	statuses := map[string][]string{}
	for _, s := range records {
		rel := s.Labels["name"] + "/" + s.Labels[releaserecords.LabelRecordNamespace]
		v, err := strconv.Atoi(s.Labels["version"])
		if err != nil {
			return fmt.Errorf("record %s: version %q", s.Name, s.Labels["version"])
		}
		versions[rel] = append(versions[rel], v)
		statuses[rel] = append(statuses[rel], s.Labels["status"])
	}
	if len(versions) == 0 {
		return fmt.Errorf("no release records")
	}
	for rel, vs := range versions {
		slices.Sort(vs)
		for i, v := range vs {
			if v != vs[0]+i {
				return fmt.Errorf("release %s: revisions %v are not consecutive", rel, vs)
			}
		}
		n := 0
		for _, st := range statuses[rel] {
			if st == "deployed" {
				n++
			}
			if st == "pending-install" || st == "pending-upgrade" || st == "pending-rollback" {
				return fmt.Errorf("release %s: a revision is %s", rel, st)
			}
		}
		if deployed && n != 1 {
			return fmt.Errorf("release %s: %d deployed revisions in %v", rel, n, statuses[rel])
		}
	}
	return nil
}
