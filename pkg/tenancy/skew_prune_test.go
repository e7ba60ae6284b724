package tenancy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// specEnd closes the KVStore CRD's spec schema, just before status.
const specEnd = "            type: object\n          status:\n"

// preserveSpec makes the KVStore CRD keep spec fields it does not declare
// (x-kubernetes-preserve-unknown-fields on .spec).
func preserveSpec(s string) string {
	return strings.Replace(s, specEnd, "            type: object\n            x-kubernetes-preserve-unknown-fields: true\n          status:\n", 1)
}

// specRule adds a field and a validation rule on .spec to the KVStore
// CRD: a newer definition, not one the live CRD already serves.
func specRule(rule string) func(string) string {
	return func(s string) string {
		s = testproject.AddSpecField(s, "addedInV2", "AddedInV2 is new in 0.2.0.")
		return strings.Replace(s, specEnd, "            type: object\n            x-kubernetes-validations:\n            - message: too many replicas\n              rule: "+rule+"\n          status:\n", 1)
	}
}

// refusedOrReady waits until the Tenant is refused by the skew guard
// (Degraded, CRDSkew) or Ready, whichever comes first.
func refusedOrReady(t *testing.T, name string) *tenancyv1.Tenant {
	t.Helper()
	return waitTenant(t, name, 2*time.Minute, "Tenant refused or Ready", func(tn *tenancyv1.Tenant) error {
		if testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonCRDSkew) == nil {
			return nil
		}
		return ready(tn)
	})
}

// kvStore creates a KVStore of group in ns with spec, as its tenant's
// application would.
func kvStore(t *testing.T, group, ns, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1alpha1", "kind": "KVStore",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	testcluster.Eventually(t, 30*time.Second, "KVStore "+name+" created", func(ctx context.Context) error {
		return cl.Create(ctx, u.DeepCopy())
	})
	return u
}

// storedSpec reads the spec of a KVStore as the API server serves it.
func storedSpec(t *testing.T, group, ns, name string) map[string]any {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(group + "/v1alpha1")
	u.SetKind("KVStore")
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	return spec
}

// The red team's: tenant A's CRD keeps unknown spec fields, and A stores
// some. Tenant B's newer chart adds a field and drops
// x-kubernetes-preserve-unknown-fields: applied, the API server would
// prune A's fields. B is refused, and A keeps every field.
func TestSharedCRDKeepsOtherTenantsFields(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	id := suffix()
	group := "prune" + id + ".opctl.dev"
	crdName := "kvstores." + group
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
	})
	v1 := sampleChart(t, projectCopy(t, group, preserveSpec), "0.1.0")
	v2 := sampleChart(t, projectCopy(t, group, func(s string) string {
		return testproject.AddSpecField(s, "addedInV2", "AddedInV2 is new in 0.2.0.")
	}), "0.2.0")

	a, b := "prune-a-"+id, "prune-b-"+id
	createTenant(t, newTenant(a, []string{a}, v1, 1))
	waitTenant(t, a, 2*time.Minute, "tenant A on 0.1.0 Ready", ready)
	kvStore(t, group, a, "data", map[string]any{"databasePassword": "s3cret", "replicas": int64(5), "size": int64(3)})
	want := map[string]any{"databasePassword": "s3cret", "replicas": int64(5), "size": int64(3)}
	for k, v := range want {
		if got := storedSpec(t, group, a, "data")[k]; got != v {
			t.Fatalf("before tenant B: spec.%s = %v, want %v", k, got, v)
		}
	}

	createTenant(t, newTenant(b, []string{b}, v2, 1))
	tn := refusedOrReady(t, b)
	if err := testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonCRDSkew); err != nil {
		t.Errorf("tenant B on the chart that drops x-kubernetes-preserve-unknown-fields: %v; operators %s", err, dump(tn.Status.Operators))
	} else if msg := tn.Status.Operators[0].LastError; !strings.Contains(msg, "x-kubernetes-preserve-unknown-fields") || !strings.Contains(msg, "version v1alpha1") || !strings.Contains(msg, ".spec:") {
		t.Errorf("skew message %q, want the version, the path .spec and x-kubernetes-preserve-unknown-fields", msg)
	} else {
		t.Logf("tenant B refused: %s", msg)
	}
	spec := storedSpec(t, group, a, "data")
	for k, v := range want {
		if spec[k] != v {
			t.Errorf("tenant A's KVStore lost spec.%s: spec is now %v", k, spec)
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	if p := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XPreserveUnknownFields; p == nil || !*p {
		t.Errorf("the refused chart changed the CRD: .spec no longer keeps unknown fields")
	}
	waitTenant(t, a, 30*time.Second, "tenant A still Ready", ready)
}

// A newer CRD with a new validation rule is checked against the objects
// every tenant has stored: refused with a count when one fails it,
// applied when all pass.
func TestSharedCRDRuleChecksStoredObjects(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	id := suffix()
	group := "rule" + id + ".opctl.dev"
	crdName := "kvstores." + group
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
	})
	// The controller holds no list on the kind: it reads the stored
	// objects in each tenant's namespaces as that tenant's actor.
	base := sampleChart(t, projectCopy(t, group, nil), "0.1.0")
	strict := sampleChart(t, projectCopy(t, group, specRule("self.replicas <= 2")), "0.2.0")
	loose := sampleChart(t, projectCopy(t, group, specRule("self.replicas <= 5")), "0.2.1")

	a, b, c := "rule-a-"+id, "rule-b-"+id, "rule-c-"+id
	createTenant(t, newTenant(a, []string{a}, base, 1))
	waitTenant(t, a, 2*time.Minute, "tenant A on 0.1.0 Ready", ready)
	kvStore(t, group, a, "three", map[string]any{"replicas": int64(3)})

	createTenant(t, newTenant(b, []string{b}, strict, 1))
	tn := refusedOrReady(t, b)
	if err := testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonCRDSkew); err != nil {
		t.Errorf("tenant B on a rule A's KVStore fails: %v; operators %s", err, dump(tn.Status.Operators))
	} else if msg := tn.Status.Operators[0].LastError; !strings.Contains(msg, "1 of the 1 stored objects") || !strings.Contains(msg, a+"/three") || !strings.Contains(msg, "version v1alpha1") {
		t.Errorf("skew message %q, want the count, the object and the version", msg)
	} else {
		t.Logf("tenant B refused: %s", msg)
	}
	rules := func() string {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			t.Fatal(err)
		}
		var r []string
		for _, v := range crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations {
			r = append(r, v.Rule)
		}
		return strings.Join(r, ",")
	}
	if r := rules(); strings.Contains(r, "replicas") {
		t.Errorf("the refused chart changed the CRD: spec rules %s", r)
	}

	createTenant(t, newTenant(c, []string{c}, loose, 1))
	waitTenant(t, c, 2*time.Minute, "tenant C on a rule every stored object passes Ready", ready)
	if r := rules(); r != "self.replicas <= 5" {
		t.Errorf("after the rule every object passes, spec rules %q", r)
	}
	for _, name := range []string{a, c} {
		waitTenant(t, name, 30*time.Second, fmt.Sprintf("%s still Ready", name), ready)
	}
}

// The red team's: the skew guard compared a shared CRD's schemas and
// versions only, so tenant B's newer chart (a field added) that dropped
// the status subresource and a short name was applied over tenant A's
// CRD: A's operator could no longer write its objects' status, and A's
// users' `kubectl get kv` stopped working. B is refused, naming both, and
// the CRD keeps them.
func TestSharedCRDKeepsSubresourcesAndNames(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	id := suffix()
	group := "subres" + id + ".opctl.dev"
	crdName := "kvstores." + group
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
	})
	v1 := sampleChart(t, projectCopy(t, group, nil), "0.1.0")
	narrowed := func(s string) string {
		s = testproject.AddSpecField(s, "addedInV2", "AddedInV2 is new in 0.2.0.")
		s = strings.Replace(s, "    - kvs\n    - kv\n", "    - kvs\n", 1)
		// spec.names.kind is immutable in the API server, so only the
		// subresources and a short name change here.
		return strings.Replace(s, "        statusReplicasPath: .status.replicas\n      status: {}\n", "        statusReplicasPath: .status.replicas\n", 1)
	}
	v2 := sampleChart(t, projectCopy(t, group, narrowed), "0.2.0")

	a, b := "subres-a-"+id, "subres-b-"+id
	createTenant(t, newTenant(a, []string{a}, v1, 1))
	waitTenant(t, a, 2*time.Minute, "tenant A on 0.1.0 Ready", ready)
	kvStore(t, group, a, "data", map[string]any{"replicas": int64(1)})

	createTenant(t, newTenant(b, []string{b}, v2, 1))
	tn := refusedOrReady(t, b)
	if err := testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonCRDSkew); err != nil {
		t.Errorf("tenant B on the chart that drops the status subresource: %v; operators %s", err, dump(tn.Status.Operators))
	} else if msg := tn.Status.Operators[0].LastError; !strings.Contains(msg, "subresources.status") || !strings.Contains(msg, "version v1alpha1") || !strings.Contains(msg, "names.shortNames") || !strings.Contains(msg, "kv") {
		t.Errorf("skew message %q, want the version, subresources.status and names.shortNames kv", msg)
	} else {
		t.Logf("tenant B refused: %s", msg)
	}

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	if s := crd.Spec.Versions[0].Subresources; s == nil || s.Status == nil {
		t.Errorf("the refused chart removed the status subresource of the shared CRD")
	}
	if !slices.Contains(crd.Spec.Names.ShortNames, "kv") {
		t.Errorf("the refused chart removed the short name kv: %v", crd.Spec.Names.ShortNames)
	}

	// Tenant A's operator writes its KVStore's status.
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(group + "/v1alpha1")
	u.SetKind("KVStore")
	if err := cl.Get(ctx, client.ObjectKey{Namespace: a, Name: "data"}, u); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(u.Object, "x", "status", "primary")
	if err := cl.Status().Update(ctx, u); err != nil {
		t.Errorf("tenant A's operator cannot write its KVStore's status: %v", err)
	}
	waitTenant(t, a, 30*time.Second, "tenant A still Ready", ready)
}
