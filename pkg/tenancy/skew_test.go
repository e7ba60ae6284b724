package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// projectCopy copies the sample under its own API group, so that the
// test owns its CRD on a cluster that other tests share, and rewrites the
// CRD with edit, if any.
func projectCopy(t *testing.T, group string, edit func(crd string) string) string {
	t.Helper()
	dir, crdFile := testproject.UnderGroup(t, sampleProject, group)
	if edit != nil {
		testproject.Edit(t, crdFile, edit)
	}
	return dir
}

// renameAdoptExisting edits the sample CRD incompatibly: spec.adoptExisting
// of the storage version is gone (renamed).
func renameAdoptExisting(s string) string {
	i := strings.Index(s, "              adoptExisting:")
	j := strings.Index(s, "              config:")
	return s[:i] + "              renamedInV3:\n                description: RenamedInV3 replaces adoptExisting.\n                type: boolean\n" + s[j:]
}

// The CRD is shared: a compatible newer definition is applied once and
// serves every tenant; an incompatible one is refused on the tenant that
// asks for it, and the CRD stays as it is.
func TestCRDSkewGuard(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	id := suffix()
	group := "skew" + id + ".opctl.dev"
	crdName := "kvstores." + group
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
	})
	addField := func(s string) string { return testproject.AddSpecField(s, "addedInV2", "AddedInV2 is new in 0.2.0.") }
	v1 := sampleChart(t, projectCopy(t, group, nil), "0.1.0")
	v2 := sampleChart(t, projectCopy(t, group, addField), "0.2.0")
	v3 := sampleChart(t, projectCopy(t, group, renameAdoptExisting), "0.3.0")

	old, newer, broken, late := "skew-old-"+id, "skew-new-"+id, "skew-broken-"+id, "skew-late-"+id
	createTenant(t, newTenant(old, []string{old}, v1, 1))
	waitTenant(t, old, 2*time.Minute, "tenant on 0.1.0 Ready", ready)
	createTenant(t, newTenant(newer, []string{newer}, v2, 1))
	waitTenant(t, newer, 2*time.Minute, "tenant on 0.2.0 Ready", ready)

	fields := func() string {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			t.Fatal(err)
		}
		var names []string
		for n := range crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties {
			names = append(names, n)
		}
		return strings.Join(names, ",")
	}
	if f := fields(); !strings.Contains(f, "addedInV2") || !strings.Contains(f, "adoptExisting") {
		t.Fatalf("after the compatible chart the CRD has spec fields %s", f)
	}

	createTenant(t, newTenant(broken, []string{broken}, v3, 1))
	tn := waitTenant(t, broken, 2*time.Minute, "tenant on 0.3.0 refused", func(tn *tenancyv1.Tenant) error {
		return testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonCRDSkew)
	})
	if msg := tn.Status.Operators[0].LastError; !strings.Contains(msg, "removes fields from storage version v1alpha1") || !strings.Contains(msg, ".spec.adoptExisting") {
		t.Errorf("skew message %q", msg)
	}
	if f := fields(); strings.Contains(f, "renamedInV3") || !strings.Contains(f, "adoptExisting") {
		t.Errorf("the refused chart changed the CRD: spec fields %s", f)
	}
	// An older chart after a newer one: the live CRD serves it as is.
	createTenant(t, newTenant(late, []string{late}, v1, 1))
	waitTenant(t, late, 2*time.Minute, "a later tenant on 0.1.0 Ready", ready)
	if f := fields(); !strings.Contains(f, "addedInV2") {
		t.Errorf("an older chart downgraded the CRD: spec fields %s", f)
	}
	for _, name := range []string{old, newer} {
		waitTenant(t, name, 30*time.Second, fmt.Sprintf("%s still Ready", name), ready)
	}
}

// With DeleteUnusedCRDs, a shared CRD goes with the last Tenant using it,
// not before.
func TestUnusedCRDDeletion(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{DeleteUnusedCRDs: true})
	id := suffix()
	group := "unused" + id + ".opctl.dev"
	crdName := "kvstores." + group
	chart := sampleChart(t, projectCopy(t, group, nil), "0.1.0")
	first, second := "crd-a-"+id, "crd-b-"+id
	for _, name := range []string{first, second} {
		createTenant(t, newTenant(name, []string{name}, chart, 1))
	}
	for _, name := range []string{first, second} {
		waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	}
	crdExists := func() bool {
		err := cl.Get(ctx, client.ObjectKey{Name: crdName}, &apiextensionsv1.CustomResourceDefinition{})
		return err == nil
	}
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: first}}); err != nil {
		t.Fatal(err)
	}
	tenantGone(t, first)
	if !crdExists() {
		t.Fatalf("CRD %s deleted while %s still uses it", crdName, second)
	}
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: second}}); err != nil {
		t.Fatal(err)
	}
	tenantGone(t, second)
	testcluster.Eventually(t, 30*time.Second, "CRD deleted with its last tenant", func(context.Context) error {
		if crdExists() {
			return fmt.Errorf("CRD %s still exists", crdName)
		}
		return nil
	})
}
