package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// legacyInstall installs the charts into ns, one revision each, the way
// the controller did before release records moved: with Helm's default
// storage in the release namespace, and the values the controller gives.
func legacyInstall(t *testing.T, tn *tenancyv1.Tenant, charts ...string) {
	t.Helper()
	ns := tn.Spec.Namespaces[0]
	if err := cl.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &cluster.Kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	values, err := tenancy.ReleaseValues(tn.Spec.Operators[0], tn.Spec.Namespaces)
	if err != nil {
		t.Fatal(err)
	}
	for i, path := range charts {
		ch, err := loader.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			in := action.NewInstall(cfg)
			in.ReleaseName, in.Namespace, in.SkipCRDs = tn.Spec.Operators[0].Name, ns, true
			if _, err := in.Run(ch, values); err != nil {
				t.Fatalf("legacy install: %v", err)
			}
			continue
		}
		up := action.NewUpgrade(cfg)
		up.Namespace, up.SkipCRDs = ns, true
		if _, err := up.Run(tn.Spec.Operators[0].Name, ch, values); err != nil {
			t.Fatalf("legacy upgrade: %v", err)
		}
	}
}

// An older controller's records in the tenant namespace, forged since,
// are deleted unread: the controller installs its own revision 1 over the
// release's objects (Helm takes over what carries the release's marks),
// the operator is not replaced, the forged manifest and hook touch
// nothing, and the owner cannot read the controller's records.
func TestLegacyRecordsAreNotImported(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	chart := sampleChart(t, "", "0.1.0")
	name := "legacy-" + suffix()
	tn := newTenant(name, []string{name}, chart, 1, "owner-"+name)
	tn.Spec.AdoptNamespaces = true
	legacyInstall(t, tn, chart, chart)
	extra, intact := victims(t)
	forge(t, name, "sh.helm.release.v1.kv.v2", extra)
	editRecord(t, name, "sh.helm.release.v1.kv.v2", func(rel *release.Release) {
		rel.Hooks = append(rel.Hooks, &release.Hook{Name: "forged", Kind: "ConfigMap", Path: "forged", Manifest: extra,
			Events: []release.HookEvent{release.HookPreUpgrade, release.HookPreDelete, release.HookPreRollback, release.HookPostInstall}})
	})
	before, err := c.Client.AppsV1().Deployments(name).List(ctx, metav1.ListOptions{})
	if err != nil || len(before.Items) != 1 {
		t.Fatalf("operator Deployment before the move: %v", err)
	}
	createTenant(t, tn)
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", func(tn *tenancyv1.Tenant) error {
		if err := ready(tn); err != nil {
			return err
		}
		if op := tn.Status.Operators[0]; op.Revision != 1 {
			return fmt.Errorf("revision %d, want the controller's own 1", op.Revision)
		}
		return nil
	})
	intact(t)
	if n, err := releaseSecrets(ctx, name); err != nil || n != 0 {
		t.Errorf("records left in the tenant namespace: %d, %v", n, err)
	}
	if rel := storedRelease(t, name, name, "kv", 1); rel.Info.Status != release.StatusDeployed || strings.Contains(rel.Manifest, "victim-") || len(rel.Hooks) != 0 {
		t.Errorf("stored revision 1: %s, hooks %d, manifest names a victim: %v", rel.Info.Status, len(rel.Hooks), strings.Contains(rel.Manifest, "victim-"))
	}
	after, err := c.Client.AppsV1().Deployments(name).List(ctx, metav1.ListOptions{})
	if err != nil || len(after.Items) != 1 {
		t.Fatalf("operator Deployment after the move: %v", err)
	}
	if b, a := before.Items[0], after.Items[0]; a.UID != b.UID {
		t.Errorf("operator Deployment replaced: uid %s→%s", b.UID, a.UID)
	}
	owner := c.As("owner-" + name)
	if _, err := kubernetes.NewForConfigOrDie(owner).CoreV1().Secrets(tenancy.DefaultStorageNamespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("tenant owner listing the storage namespace: %v, want Forbidden", err)
	}
	events, err := c.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=ReleaseRecordsDropped"})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no ReleaseRecordsDropped event: %v", err)
	}
}

// victims are objects outside every tenant that a forged record names.
func victims(t *testing.T) (manifest string, check func(*testing.T)) {
	t.Helper()
	ctx := context.Background()
	id := suffix()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "victim-" + id, Namespace: "kube-system"}, Data: map[string]string{"keep": "me"}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "victim-" + id}}
	for _, o := range []client.Object{cm, role} {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), cm)
		_ = cl.Delete(context.Background(), role)
	})
	manifest = fmt.Sprintf(`---
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: kube-system
data:
  keep: forged
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %s
rules: []
`, cm.Name, role.Name)
	return manifest, func(t *testing.T) {
		t.Helper()
		got := &corev1.ConfigMap{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil || got.Data["keep"] != "me" {
			t.Errorf("ConfigMap kube-system/%s after the forged record: %v, %v", cm.Name, got.Data, err)
		}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(role), &rbacv1.ClusterRole{}); err != nil {
			t.Errorf("ClusterRole %s after the forged record: %v", role.Name, err)
		}
	}
}

// forge adds extra objects to the manifest of a stored record; unforge
// takes them out again.
func forge(t *testing.T, ns, secret, extra string) {
	t.Helper()
	editRecord(t, ns, secret, func(rel *release.Release) { rel.Manifest += "\n" + extra })
}

func unforge(t *testing.T, ns, secret, extra string) {
	t.Helper()
	editRecord(t, ns, secret, func(rel *release.Release) { rel.Manifest = strings.TrimSuffix(rel.Manifest, "\n"+extra) })
}

func editRecord(t *testing.T, ns, secret string, edit func(*release.Release)) {
	t.Helper()
	testcluster.Eventually(t, 30*time.Second, "record "+ns+"/"+secret+" edited", func(ctx context.Context) error {
		s, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
		if err != nil {
			return err
		}
		rel, err := tenancy.DecodeRelease(string(s.Data["release"]))
		if err != nil {
			return err
		}
		edit(rel)
		data, err := tenancy.EncodeRelease(rel)
		if err != nil {
			return err
		}
		s.Data["release"] = []byte(data)
		_, err = cluster.Client.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

func tampered(tn *tenancyv1.Tenant) error {
	return testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonReleaseTampered)
}

// A forged release record in the controller's storage cannot make the controller touch anything
// outside the tenant on uninstall, upgrade or rollback: it does nothing,
// reports ReleaseTampered and names the foreign objects.
func TestForgedReleaseRecords(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{UpgradeTimeout: 10 * time.Second})
	neverReady(t, c, "opctl/kvstore-operator:0.3.0")
	v1, v2, v3 := sampleChart(t, "", "0.1.0"), sampleChart(t, "", "0.2.0"), sampleChart(t, "", "0.3.0")

	stored := func(name string, version int) (string, string) {
		return tenancy.DefaultStorageNamespace, fmt.Sprintf("sh.helm.release.v1.%s.%s.kv.v%d", name, name, version)
	}
	// start makes a Ready tenant whose stored revision 1 is forged.
	start := func(t *testing.T, extra string) (name string, restore func()) {
		name = "forged-" + suffix()
		createTenant(t, newTenant(name, []string{name}, v1, 1))
		waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
		ns, key := stored(name, 1)
		forge(t, ns, key, extra)
		return name, func() { unforge(t, ns, key, extra) }
	}
	waitTampered := func(t *testing.T, name string) *tenancyv1.Tenant {
		return waitTenant(t, name, time.Minute, "ReleaseTampered", func(tn *tenancyv1.Tenant) error {
			if err := tampered(tn); err != nil {
				return fmt.Errorf("%w; operators %s", err, dump(tn.Status.Operators))
			}
			return nil
		})
	}
	mentions := func(t *testing.T, tn *tenancyv1.Tenant) {
		t.Helper()
		msg := ""
		for _, cond := range tn.Status.Conditions {
			if cond.Type == operatorkit.ConditionDegraded {
				msg = cond.Message
			}
		}
		for _, want := range []string{"ConfigMap kube-system/victim-", "ClusterRole victim-"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Degraded message does not name %q: %s", want, msg)
			}
		}
	}

	t.Run("uninstall/storage", func(t *testing.T) {
		t.Parallel()
		extra, intact := victims(t)
		name, restore := start(t, extra)
		if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
		tn := waitTampered(t, name)
		mentions(t, tn)
		intact(t)
		if _, err := c.Client.AppsV1().Deployments(name).Get(ctx, "kv-sample-operator-controller-manager", metav1.GetOptions{}); err != nil {
			t.Errorf("the operator was uninstalled despite the refusal: %v", err)
		}
		// Once the record is repaired, the deletion goes through.
		restore()
		tenantGone(t, name)
		intact(t)
	})
	t.Run("upgrade/storage", func(t *testing.T) {
		t.Parallel()
		extra, intact := victims(t)
		name, restore := start(t, extra)
		t.Cleanup(restore)
		setChart(t, name, v2)
		tn := waitTampered(t, name)
		mentions(t, tn)
		intact(t)
		if op := tn.Status.Operators[0]; op.Revision != 1 || op.ChartVersion != "0.1.0" {
			t.Errorf("operator after a refused upgrade: %s", dump(op))
		}
	})
	// noRollback checks that the rollback to a forged revision was
	// refused: ReleaseTampered, victims intact, no revision 3.
	noRollback := func(t *testing.T, name, extra string, intact func(*testing.T)) {
		t.Helper()
		tn := waitTampered(t, name)
		mentions(t, tn)
		intact(t)
		if op := tn.Status.Operators[0]; op.FailedVersion != "" {
			t.Errorf("rolled back despite the forged target: %s", dump(op))
		}
		ns, key := stored(name, 3)
		if _, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, key, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("revision 3 (a rollback) exists: %v", err)
		}
	}
	t.Run("rollback/storage", func(t *testing.T) {
		t.Parallel()
		extra, intact := victims(t)
		name := "forged-" + suffix()
		createTenant(t, newTenant(name, []string{name}, v1, 1))
		waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
		// 0.3.0 never becomes ready: once its revision 2 is out, forge
		// revision 1, the one the controller will roll back to.
		setChart(t, name, v3)
		waitTenant(t, name, time.Minute, "revision 2 rolling out", func(tn *tenancyv1.Tenant) error {
			if op := tn.Status.Operators[0]; op.Revision != 2 || op.TargetVersion != "0.3.0" {
				return fmt.Errorf("operator %s", dump(op))
			}
			return nil
		})
		ns, key := stored(name, 1)
		forge(t, ns, key, extra)
		t.Cleanup(func() { unforge(t, ns, key, extra) })
		noRollback(t, name, extra, intact)
	})
}
