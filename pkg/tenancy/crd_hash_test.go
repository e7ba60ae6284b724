package tenancy_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcatalog"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// The red team's: the controller trusted the CRD's annotation
// tenancy.opctl.dev/crd-hash as proof that it applied a definition
// (EnsureCRDs skips the CRD, CompareCRD keeps it), and the hash is
// sha256 of the spec alone, which anyone can compute from a public
// chart. EnsureCRDs strips that annotation from a chart's CRD, but OLM
// applies a bundle's CRD as the bundle wrote it, annotations included
// (operator-lifecycle-manager v0.46.0, pkg/controller/operators/catalog/
// step.go: Update(crd) with the step's object), after the controller's
// own apply in guardPlan. So an OLM tenant's bundle can plant the hash
// of another tenant's newer chart CRD: that tenant's CRD is never
// applied, its Tenant is Ready, and the API server prunes its new fields
// from every object it writes. The controller now trusts nothing on a
// live CRD but its spec: B's newer CRD is applied and its field stored.
//
// OLM's part is simulated here (admin writes the annotation as OLM's
// Update would); the controller's part is live.
func TestSharedCRDPlantedHash(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	id := suffix()
	group := "rthash" + id + ".opctl.dev"
	crdName := "kvstores." + group
	deleteCRD := func() {
		_ = cl.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
		testcluster.Eventually(t, time.Minute, "CRD gone", func(ctx context.Context) error {
			err := cl.Get(ctx, client.ObjectKey{Name: crdName}, &apiextensionsv1.CustomResourceDefinition{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("CRD still there: %v", err)
		})
	}
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
	})
	v1 := sampleChart(t, projectCopy(t, group, nil), "0.1.0")
	v2dir, v2crd := testproject.UnderGroup(t, sampleProject, group)
	testproject.Edit(t, v2crd, addedInV2)
	v2 := sampleChart(t, v2dir, "0.2.0")

	// The attacker computes the hash of the victim's chart CRD (here:
	// read from a scratch install of that chart, then removed).
	scratch := "rth-s-" + id
	createTenant(t, newTenant(scratch, []string{scratch}, v2, 1))
	waitTenant(t, scratch, 2*time.Minute, "scratch tenant on 0.2.0 Ready", ready)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	h := plantedHash(t, crd, v2crd)
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: scratch}}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, 2*time.Minute, "scratch Tenant gone", func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Name: scratch}, &tenancyv1.Tenant{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	deleteCRD()

	// Tenant A (the attacker's OLM tenant, here a chart on 0.1.0) owns
	// the shared CRD; its bundle's CRD carries the victim's hash, which
	// OLM's Update writes.
	a, b := "rth-a-"+id, "rth-b-"+id
	createTenant(t, newTenant(a, []string{a}, v1, 1))
	waitTenant(t, a, 2*time.Minute, "tenant A on 0.1.0 Ready", ready)
	testcluster.Eventually(t, 30*time.Second, "hash planted (as OLM's Update of the bundle CRD would)", func(ctx context.Context) error {
		live := &apiextensionsv1.CustomResourceDefinition{}
		if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, live); err != nil {
			return err
		}
		if live.Annotations == nil {
			live.Annotations = map[string]string{}
		}
		live.Annotations["tenancy.opctl.dev/crd-hash"] = h
		return cl.Update(ctx, live)
	})

	// The victim, tenant B, on the newer chart.
	createTenant(t, newTenant(b, []string{b}, v2, 1))
	waitTenant(t, b, 2*time.Minute, "tenant B on 0.2.0 Ready", ready)
	live := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, live); err != nil {
		t.Fatal(err)
	}
	_, declared := live.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["addedInV2"]
	t.Logf("tenant B Ready; the shared CRD declares spec.addedInV2: %v", declared)
	kvStore(t, group, b, "data", map[string]any{"replicas": int64(1), "addedInV2": "victim's value"})
	spec := storedSpec(t, group, b, "data")
	t.Logf("tenant B's KVStore as stored: %v", spec)
	if !declared || spec["addedInV2"] != "victim's value" {
		t.Errorf("tenant B's newer CRD was never applied (planted hash), its Tenant is Ready, and its field spec.addedInV2 was pruned: stored spec %v", spec)
	}
}

// The same, end to end with OLM's real binaries: tenant A subscribes
// through OLM to a bundle whose CRD carries the hash of tenant B's newer
// chart CRD, which OLM would write as it is. A's plan is refused
// (CRDMetadataReserved, naming the annotation), and B's newer CRD is
// applied: B's new field is stored.
func TestOLMSharedCRDPlantedHash(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	c.StartOLM(t)
	startController(t, tenancy.Options{})
	id := suffix()
	group := "rthasholm" + id + ".opctl.dev"
	crdName := "kvstores." + group
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
	})
	v2dir, v2crd := testproject.UnderGroup(t, sampleProject, group)
	testproject.Edit(t, v2crd, addedInV2)
	v2 := sampleChart(t, v2dir, "0.2.0")

	scratch := "rtho-s-" + id
	createTenant(t, newTenant(scratch, []string{scratch}, v2, 1))
	waitTenant(t, scratch, 2*time.Minute, "scratch tenant on 0.2.0 Ready", ready)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	h := plantedHash(t, crd, v2crd)
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: scratch}}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, 2*time.Minute, "scratch Tenant gone", func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Name: scratch}, &tenancyv1.Tenant{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	_ = cl.Delete(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
	testcluster.Eventually(t, time.Minute, "CRD gone", func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("CRD still there: %v", err)
		}
		return nil
	})

	// The attacker's bundle 0.1.0: its CRD carries B's hash.
	planted := projectCopy(t, group, func(s string) string {
		return strings.Replace(s, "  annotations:\n", "  annotations:\n    tenancy.opctl.dev/crd-hash: "+h+"\n", 1)
	})
	addr := testcatalog.Serve(t, publishCatalog(t, planted, "0.1.0"))
	a, b := "rtho-a-"+id, "rtho-b-"+id
	createTenant(t, olmTenant(a, "owner-"+a, tenancyv1.OLMSource{Catalog: tenancyv1.OLMCatalog{Address: addr}, Package: olmPackage, Channel: "stable"}, ""))
	// A bundle CRD carrying the controller's own annotation is refused
	// before its plan is approved: OLM would write it as it is.
	waitCondition(t, a, "Ready", tenancyv1.ReasonCRDMetadataReserved, "annotation tenancy.opctl.dev/crd-hash")
	if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	if v, ok := crd.Annotations["tenancy.opctl.dev/crd-hash"]; ok {
		t.Errorf("the shared CRD carries the bundle's planted annotation %q", v)
	}
	t.Logf("tenant A refused; the shared CRD's annotations %v, shared label %q", crd.Annotations, crd.Labels[tenancyv1.LabelSharedCRD])

	createTenant(t, newTenant(b, []string{b}, v2, 1))
	waitTenant(t, b, 2*time.Minute, "tenant B on 0.2.0 Ready", ready)
	live := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: crdName}, live); err != nil {
		t.Fatal(err)
	}
	_, declared := live.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["addedInV2"]
	kvStore(t, group, b, "data", map[string]any{"replicas": int64(1), "addedInV2": "victim's value"})
	spec := storedSpec(t, group, b, "data")
	t.Logf("tenant B Ready; CRD declares addedInV2: %v; B's KVStore as stored: %v", declared, spec)
	if !declared || spec["addedInV2"] != "victim's value" {
		t.Errorf("an OLM tenant's bundle planted tenant B's CRD hash; B's newer CRD was never applied and spec.addedInV2 was pruned: %v", spec)
	}
}

// addedInV2 is the victim's newer CRD: one spec field added.
func addedInV2(s string) string {
	return testproject.AddSpecField(s, "addedInV2", "AddedInV2 is new in 0.2.0.")
}

// plantedHash is the hash an attacker plants for the victim's CRD: the
// one the controller wrote on the CRD it applied for the victim's chart
// (it no longer writes one), else that of the chart's CRD spec as the
// controller hashed it (sha256 of its JSON), which anyone can compute.
func plantedHash(t *testing.T, live *apiextensionsv1.CustomResourceDefinition, crdFile string) string {
	t.Helper()
	if h := live.Annotations["tenancy.opctl.dev/crd-hash"]; h != "" {
		return h
	}
	b, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(crd.Spec)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spec)
	return hex.EncodeToString(sum[:])
}
