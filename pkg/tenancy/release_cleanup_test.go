package tenancy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// brokenChart is the sample chart plus a Service the API server refuses:
// Helm creates the objects of the kinds it installs before Services
// (ServiceAccount, RBAC), then fails, and the release records a failed
// install.
func brokenChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sample-operator")
	if err := os.CopyFS(dir, os.DirFS(sampleChart(t, "", "0.1.0"))); err != nil {
		t.Fatal(err)
	}
	bad := "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}-broken\nspec:\n  type: NoSuchType\n  ports:\n  - port: 80\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "zz-broken.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	// A hook carries no release marks; its own policy deletes it.
	hook := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-pre-delete\n  annotations:\n" +
		"    helm.sh/hook: pre-delete\n    helm.sh/hook-delete-policy: hook-succeeded\ndata:\n  ran: \"yes\"\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "zz-hook.yaml"), []byte(hook), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A failed install is removed before the next try. That removal deletes
// only what the release owns: an object its manifest names that is not
// the release's (here the tenant's own ServiceAccount, where it stands
// after it appeared between Helm's existence check and its create) is
// kept, with its data, and the install reports it instead of replacing
// it. The release's own objects are deleted, and its hooks as their
// policies say.
func TestFailedInstallCleanupKeepsForeignObjects(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "cleanup-" + suffix()
	createTenant(t, newTenant(name, []string{name}, brokenChart(t), 1))
	failed := func(substr string) func(*tenancyv1.Tenant) error {
		return func(tn *tenancyv1.Tenant) error {
			if len(tn.Status.Operators) == 1 && tn.Status.Operators[0].Reason == tenancyv1.ReasonInstallFailed &&
				strings.Contains(tn.Status.Operators[0].LastError, substr) {
				return nil
			}
			return fmt.Errorf("operators %s", dump(tn.Status.Operators))
		}
	}
	waitTenant(t, name, 2*time.Minute, "install failed on the broken Service", failed("NoSuchType"))

	// What the failed install made: the ServiceAccount and the Roles. The
	// controller retries the install meanwhile, so read until they stand.
	var sas corev1.ServiceAccountList
	var roles rbacv1.RoleList
	testcluster.Eventually(t, time.Minute, "the failed install's ServiceAccount and Roles", func(ctx context.Context) error {
		for _, l := range []client.ObjectList{&sas, &roles} {
			if err := cl.List(ctx, l, client.InNamespace(name), client.MatchingLabels{"app.kubernetes.io/managed-by": "Helm"}); err != nil {
				return err
			}
		}
		if len(sas.Items) != 1 || len(roles.Items) == 0 {
			return fmt.Errorf("%d ServiceAccounts and %d Roles, want 1 and some", len(sas.Items), len(roles.Items))
		}
		return nil
	})
	// The tenant's own ServiceAccount takes the name, in place of whatever
	// a retry made.
	sa := sas.Items[0].Name
	var mine *corev1.ServiceAccount
	testcluster.Eventually(t, time.Minute, "the tenant's ServiceAccount in place", func(ctx context.Context) error {
		live := &corev1.ServiceAccount{}
		err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: sa}, live)
		switch {
		case err == nil && mine != nil && live.UID == mine.UID:
			return nil
		case err == nil:
			_ = cl.Delete(ctx, live)
			return fmt.Errorf("ServiceAccount %s is the release's", sa)
		case !apierrors.IsNotFound(err):
			return err
		}
		mine = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: name, Annotations: map[string]string{"example.com/data": "keep me"}}}
		if err := cl.Create(ctx, mine); err != nil {
			mine = nil
			return err
		}
		return fmt.Errorf("created ServiceAccount %s", sa)
	})

	setChart(t, name, sampleChart(t, "", "0.1.0"))
	waitTenant(t, name, 2*time.Minute, "install refused over the tenant's ServiceAccount", failed("cannot be imported"))
	live := &corev1.ServiceAccount{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: sa}, live); err != nil {
		t.Fatalf("the tenant's ServiceAccount %s: %v", sa, err)
	}
	if live.UID != mine.UID || live.Annotations["example.com/data"] != "keep me" {
		t.Errorf("the tenant's ServiceAccount %s was replaced: uid %s (was %s), annotations %v", sa, live.UID, mine.UID, live.Annotations)
	}
	for _, r := range roles.Items {
		err := cl.Get(ctx, client.ObjectKeyFromObject(&r), &rbacv1.Role{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("Role %s of the failed install: %v, want it deleted", r.Name, err)
		}
	}

	// The failed revision's pre-delete hook ran in the cleanup, and its
	// policy deleted it.
	hook := &corev1.ConfigMap{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: "kv-pre-delete"}, hook); !apierrors.IsNotFound(err) {
		t.Errorf("the pre-delete hook ConfigMap: %v (annotations %v), want it deleted", err, hook.Annotations)
	}

	// Once the tenant removes it, the install goes through.
	if err := cl.Delete(ctx, live); err != nil {
		t.Fatal(err)
	}
	waitTenant(t, name, 3*time.Minute, "Tenant Ready", ready)
}
