package tenancy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcatalog"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
	"opctl.dev/opctl/internal/testregistry"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

const (
	olmPackage = "sample-operator"
	olmSA      = "kvstore-controller-manager"
	olmDeploy  = "kvstore-controller-manager"
)

// publishSampleCatalog packages the sample at each version and publishes
// it with `opctl publish --image-less` into one file-based catalog, which
// it returns.
func publishSampleCatalog(t *testing.T, versions ...string) string {
	t.Helper()
	return publishCatalog(t, sampleProject, versions...)
}

// publishCatalog is publishSampleCatalog for the project in dir.
func publishCatalog(t *testing.T, project string, versions ...string) string {
	t.Helper()
	reg := testregistry.Start(t)
	catalog := t.TempDir()
	for _, v := range versions {
		publishVersion(t, reg, project, catalog, v, "--image-less")
	}
	return catalog
}

func olmTenant(name, owner string, src tenancyv1.OLMSource, version string) *tenancyv1.Tenant {
	tn := newTenant(name, []string{name}, "", 0, owner)
	tn.Spec.Operators = []tenancyv1.OperatorSpec{{Name: "kv", OLM: &src, Version: version, Instances: 2}}
	return tn
}

// olmReady is ready() plus the operator at version with its CSV Succeeded.
func olmReady(version string) func(*tenancyv1.Tenant) error {
	return func(tn *tenancyv1.Tenant) error {
		if err := ready(tn); err != nil {
			return err
		}
		op := tn.Status.Operators[0]
		if op.OLM == nil || op.OLM.Version != version || op.OLM.Phase != "Succeeded" || op.OLM.InstallPlanPhase != "Complete" {
			return fmt.Errorf("operator %s, want %s Succeeded with its InstallPlan Complete", dump(op), version)
		}
		return nil
	}
}

// TestOLMTenants installs the sample operator for three tenants through
// real OLM v0 from a catalog that opctl publish made: one follows the
// channel from 0.1.0 to 0.2.0, one approves only its pinned version, one
// uses an existing CatalogSource.
func TestOLMTenants(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	c.StartOLM(t)
	addr := testcatalog.Serve(t, publishSampleCatalog(t, "0.1.0", "0.2.0"))
	// An existing CatalogSource for the third tenant.
	shared := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Name: "sample-" + suffix(), Namespace: testcluster.OLMNamespace},
		Spec: operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: addr}}
	if err := cl.Create(ctx, shared); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(ctx, shared) })
	startController(t, tenancy.Options{})

	id := suffix()
	auto, manual, named := "olm-auto-"+id, "olm-manual-"+id, "olm-named-"+id
	channel := tenancyv1.OLMSource{Catalog: tenancyv1.OLMCatalog{Address: addr}, Package: olmPackage, Channel: "stable"}
	a := channel
	a.StartingCSV = olmPackage + ".v0.1.0"
	m := channel
	m.Approval = "Manual"
	n := channel
	n.Catalog = tenancyv1.OLMCatalog{Name: shared.Name, Namespace: shared.Namespace}
	createTenant(t, olmTenant(auto, "owner-"+auto, a, ""))
	createTenant(t, olmTenant(manual, "owner-"+manual, m, "0.1.0"))
	orphan := olmTenant(named, "owner-"+named, n, "")
	orphan.Spec.DeletionPolicy = "Orphan"
	createTenant(t, orphan)

	// A namespace that already has an OperatorGroup: OLM would refuse a
	// second one, and the controller says so instead of subscribing.
	crowded := "olm-crowded-" + id
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: crowded}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(ctx, &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: crowded, Name: "theirs"}}); err != nil {
		t.Fatal(err)
	}
	tc := olmTenant(crowded, "owner-"+crowded, channel, "")
	tc.Spec.AdoptNamespaces = true
	createTenant(t, tc)

	// The automatic tenant starts at 0.1.0 and follows the channel to 0.2.0.
	waitTenant(t, auto, 3*time.Minute, "automatic tenant on 0.2.0", olmReady("0.2.0"))
	waitTenant(t, named, 3*time.Minute, "tenant of a named CatalogSource on 0.2.0", olmReady("0.2.0"))
	tm := waitTenant(t, manual, 3*time.Minute, "manual tenant on 0.1.0", olmReady("0.1.0"))
	// The automatic tenant got there through the channel, from 0.1.0.
	if got := completedCSVs(t, auto); !slices.Equal(got, []string{olmPackage + ".v0.1.0", olmPackage + ".v0.2.0"}) {
		t.Errorf("completed InstallPlans of %s installed %v, want 0.1.0 then 0.2.0", auto, got)
	}

	refused(t, crowded, tenancyv1.ReasonTooManyOperatorGroups, "OperatorGroup theirs")

	dc := dynamic.NewForConfigOrDie(c.Config)
	checkCatalogTenants(t, c, dc, checkOLMInstall, auto, manual, named)

	t.Run("quota derivation from the bundle", func(t *testing.T) {
		if d := strings.Join(tm.Status.Namespaces[0].Derivation, "\n"); !strings.Contains(d, "Deployment/"+olmDeploy) || !strings.Contains(d, "kvstores.kv.opctl.dev 2×") {
			t.Errorf("derivation does not come from the bundle's CSV and CRD:\n%s", d)
		}
	})

	t.Run("manual approval waits for the pinned version", func(t *testing.T) {
		tn := waitTenant(t, manual, time.Minute, "the 0.2.0 InstallPlan awaiting approval", func(tn *tenancyv1.Tenant) error {
			if op := tn.Status.Operators[0]; op.OLM == nil || len(op.OLM.AwaitingApproval) == 0 {
				return fmt.Errorf("operator %s, want an InstallPlan awaiting approval", dump(op))
			}
			return nil
		})
		if w := tn.Status.Operators[0].OLM.AwaitingApproval[0]; !strings.Contains(w, "v0.2.0") {
			t.Errorf("awaiting approval %q, want the 0.2.0 CSV", w)
		}
		if v := csvVersion(t, manual); v != "0.1.0" {
			t.Fatalf("manual tenant runs %s before its version changed", v)
		}
		patch := client.MergeFrom(tn.DeepCopy())
		tn.Spec.Operators[0].Version = "0.2.0"
		if err := cl.Patch(ctx, tn, patch); err != nil {
			t.Fatal(err)
		}
		waitTenant(t, manual, 3*time.Minute, "manual tenant on 0.2.0", olmReady("0.2.0"))
	})

	t.Run("skew guard", func(t *testing.T) {
		// A catalog whose bundle drops a field of the shared CRD's storage
		// version: the tenant is refused, nothing is subscribed, and the
		// CRD keeps the field.
		dir, crdFile := testproject.UnderGroup(t, sampleProject, "kv.opctl.dev")
		testproject.Edit(t, crdFile, renameAdoptExisting)
		bad := testcatalog.Serve(t, publishCatalog(t, dir, "0.3.0"))
		skewed := "olm-skew-" + id
		src := channel
		src.Catalog.Address = bad
		createTenant(t, olmTenant(skewed, "owner-"+skewed, src, ""))
		refused(t, skewed, tenancyv1.ReasonCRDSkew, "adoptExisting")
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.Get(ctx, client.ObjectKey{Name: "kvstores.kv.opctl.dev"}, crd); err != nil {
			t.Fatal(err)
		}
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		if _, ok := spec.Properties["adoptExisting"]; !ok {
			t.Errorf("the shared CRD lost spec.adoptExisting")
		}
	})

	t.Run("deletion", func(t *testing.T) {
		// A tenant deletes its custom resources while its operator still
		// runs to finalize them; README explains why.
		deleteTenants(t, dc, auto, auto, named)
		// Orphan: the Subscription, CSV and Deployment keep running,
		// disconnected from the tenant.
		sub := &operatorsv1alpha1.Subscription{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: named, Name: "kv"}, sub); err != nil || sub.Labels[tenancyv1.LabelTenant] != "" {
			t.Errorf("orphaned Subscription %v: %v", sub.Labels, err)
		}
		if v := csvVersion(t, named); v != "0.2.0" {
			t.Errorf("orphaned CSV version %q", v)
		}
		dep := &appsv1.Deployment{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: named, Name: olmDeploy}, dep); err != nil || dep.Status.AvailableReplicas < 1 {
			t.Errorf("orphaned Deployment: %v", err)
		}
		og := &operatorsv1.OperatorGroup{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: named, Name: tenancy.OperatorGroupName}, og); err != nil || og.Labels[tenancyv1.LabelTenant] != "" {
			t.Errorf("orphaned OperatorGroup %v: %v", og.Labels, err)
		}
		_ = cl.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: named}})
	})
}

// refused waits until the OLM tenant name (one namespace, named alike)
// is not Ready for reason with a message containing what, and checks
// that nothing was subscribed.
func refused(t *testing.T, name, reason, what string) {
	t.Helper()
	waitCondition(t, name, "Ready", reason, what)
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: name, Name: "kv"}, &operatorsv1alpha1.Subscription{}); !apierrors.IsNotFound(err) {
		t.Errorf("Subscription of tenant %s refused with %s: %v, want none", name, reason, err)
	}
}

// checkOLMInstall checks what OLM made in ns: the CSV Succeeded, the
// operator Deployment Ready with olm.targetNamespaces set to ns, and
// WATCH_NAMESPACE taken from it.
func checkOLMInstall(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	og := &operatorsv1.OperatorGroup{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenancy.OperatorGroupName}, og); err != nil || !slices.Equal(og.Spec.TargetNamespaces, []string{ns}) {
		t.Errorf("OperatorGroup of %s targets %v: %v", ns, og.Spec.TargetNamespaces, err)
	}
	// OLM runs the InstallPlan as the OperatorGroup's ServiceAccount, which
	// holds nothing cluster-wide: the CSV's clusterPermissions are the
	// controller's writing, labelled as OLM labels them.
	if og.Spec.ServiceAccountName != tenancy.OperatorGroupName || og.Status.ServiceAccountRef == nil {
		t.Errorf("OperatorGroup of %s names ServiceAccount %q (status %v), want %s", ns, og.Spec.ServiceAccountName, og.Status.ServiceAccountRef, tenancy.OperatorGroupName)
	}
	// The owners can act as that ServiceAccount: it may not create a CSV,
	// which would have OLM aggregate rules on any CRD the CSV claims into
	// every namespace's admin (the controller creates the plan's CSV).
	sa := "system:serviceaccount:" + ns + ":" + tenancy.OperatorGroupName
	asSA, err := client.New(cluster.As(sa, "system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated"), client.Options{Scheme: tenancy.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	forged := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Name: "forged.v1", Namespace: ns},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{DisplayName: "forged", InstallStrategy: operatorsv1alpha1.NamedInstallStrategy{StrategyName: "deployment"}}}
	if err := asSA.Create(ctx, forged); !apierrors.IsForbidden(err) {
		t.Errorf("%s creating a CSV: %v, want Forbidden", sa, err)
	}
	var roles rbacv1.ClusterRoleList
	if err := cl.List(ctx, &roles, client.MatchingLabels{"olm.owner.namespace": ns}); err != nil {
		t.Fatal(err)
	}
	written := 0
	for _, r := range roles.Items {
		for _, m := range r.ManagedFields {
			if m.Manager == tenancy.FieldManager && m.Operation == metav1.ManagedFieldsOperationUpdate {
				written++
				break
			}
		}
	}
	if written == 0 {
		t.Errorf("no ClusterRole of the CSV in %s written by the controller (%d labelled for it)", ns, len(roles.Items))
	}
	var csvs operatorsv1alpha1.ClusterServiceVersionList
	if err := cl.List(ctx, &csvs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, csv := range csvs.Items {
		if csv.Labels["olm.copiedFrom"] != "" || len(csv.ManagedFields) == 0 || csv.ManagedFields[0].Manager != tenancy.FieldManager {
			continue
		}
		written = -1
	}
	if written != -1 {
		t.Errorf("no CSV in %s created by the controller", ns)
	}
	dep := &appsv1.Deployment{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: olmDeploy}, dep); err != nil {
		t.Fatalf("operator Deployment in %s: %v", ns, err)
	}
	if dep.Status.AvailableReplicas < 1 {
		t.Errorf("operator Deployment in %s not Ready: %+v", ns, dep.Status)
	}
	if got := dep.Spec.Template.Annotations["olm.targetNamespaces"]; got != ns {
		t.Errorf("olm.targetNamespaces of the operator pods in %s = %q", ns, got)
	}
	found := false
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		found = found || (e.Name == "WATCH_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['olm.targetNamespaces']")
	}
	if !found {
		t.Errorf("the operator in %s does not take WATCH_NAMESPACE from olm.targetNamespaces", ns)
	}
}

// completedCSVs lists, sorted, the CSVs of the Complete InstallPlans in ns.
func completedCSVs(t *testing.T, ns string) []string {
	t.Helper()
	var plans operatorsv1alpha1.InstallPlanList
	if err := cl.List(context.Background(), &plans, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var csvs []string
	for _, p := range plans.Items {
		if p.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete {
			csvs = append(csvs, p.Spec.ClusterServiceVersionNames...)
		}
	}
	slices.Sort(csvs)
	return csvs
}

// csvVersion is the version of the Succeeded CSV of the sample in ns.
func csvVersion(t *testing.T, ns string) string {
	t.Helper()
	var csvs operatorsv1alpha1.ClusterServiceVersionList
	if err := cl.List(context.Background(), &csvs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, csv := range csvs.Items {
		if csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded {
			return csv.Spec.Version.String()
		}
	}
	return ""
}
