package guard

import (
	"context"
	"encoding/json"
	"errors"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// writes records what EnsureCRDs sent: "apply <resourceVersion>" or
// "create".
type writes []string

func (w *writes) client(t *testing.T, listErr error, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Apply: func(_ context.Context, _ client.WithWatch, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
			b, err := json.Marshal(obj)
			if err != nil {
				return err
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(b); err != nil {
				return err
			}
			*w = append(*w, "apply "+u.GetResourceVersion())
			return nil
		},
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			if obj.GetLabels()[tenancyv1.LabelSharedCRD] != "true" {
				t.Errorf("created %s without the shared label", obj.GetName())
			}
			*w = append(*w, "create")
			return nil
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if listErr != nil {
				return listErr
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
}

// EnsureCRDs applies a change at the resourceVersion it compared, creates
// a new CRD (failing if it exists), and writes nothing when one CRD is
// refused.
func TestEnsureCRDsPreconditions(t *testing.T) {
	shared := func(edit func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
		crd := skewCRD(schemaFrom(t, baseSchema))
		crd.Labels = map[string]string{tenancyv1.LabelSharedCRD: "true"}
		if edit != nil {
			edit(crd)
		}
		return crd
	}
	other := shared(nil)
	other.Name, other.Spec.Names.Plural = "gadgets.example.com", "gadgets"
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "example.com", Resource: "widgets"}, "", errors.New("no"))
	ruled := newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
		s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5"}}
	}))
	tests := []struct {
		name    string
		live    []client.Object
		want    []*apiextensionsv1.CustomResourceDefinition
		listErr error
		writes  string
		skew    string
	}{
		{name: "a new CRD is created", want: []*apiextensionsv1.CustomResourceDefinition{shared(nil)}, writes: "create"},
		{name: "a newer CRD is applied at the resourceVersion compared", live: []client.Object{shared(nil)},
			want: []*apiextensionsv1.CustomResourceDefinition{shared(newer())}, writes: "apply 999"},
		{name: "an older CRD is kept", live: []client.Object{shared(nil)}, want: []*apiextensionsv1.CustomResourceDefinition{shared(dropField("note"))}},
		{name: "a refused CRD stops the others", live: []client.Object{shared(nil)},
			want: []*apiextensionsv1.CustomResourceDefinition{other, shared(newer(field("config", noPreserve)))}, skew: ".spec.config: x-kubernetes-preserve-unknown-fields removed"},
		{name: "stored objects that cannot be read refuse a new rule", live: []client.Object{shared(nil)},
			want: []*apiextensionsv1.CustomResourceDefinition{shared(ruled)}, listErr: forbidden, skew: "may not list them"},
		{name: "a new rule every stored object passes", live: []client.Object{shared(nil)},
			want: []*apiextensionsv1.CustomResourceDefinition{shared(ruled)}, writes: "apply 999"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fitMemo.Clear() // each case reads other stored objects under the same CRDs
			for _, o := range tc.live {
				o.SetResourceVersion("999")
			}
			var w writes
			c := w.client(t, tc.listErr, tc.live...)
			_, err := EnsureCRDs(context.Background(), c, nil, "opctl-test", tc.want, nil)
			var skew *SkewError
			switch {
			case tc.skew != "":
				if !errors.As(err, &skew) || !strings.Contains(err.Error(), tc.skew) {
					t.Fatalf("EnsureCRDs: %v, want a SkewError containing %q", err, tc.skew)
				}
			case err != nil:
				t.Fatalf("EnsureCRDs: %v", err)
			}
			if got := strings.Join(w, ", "); got != tc.writes {
				t.Errorf("writes %q, want %q", got, tc.writes)
			}
		})
	}
}

// CRDSkew, the OLM path's guard, runs the stored-objects check too.
func TestCRDSkewChecksStoredObjects(t *testing.T) {
	fitMemo.Clear()
	live := skewCRD(schemaFrom(t, baseSchema))
	want := skewCRD(schemaFrom(t, baseSchema))
	newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
		s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5"}}
	}))(want)
	var w writes
	c := w.client(t, apierrors.NewForbidden(schema.GroupResource{Group: "example.com", Resource: "widgets"}, "", errors.New("no")), live)
	var skew *SkewError
	if err := CRDSkew(context.Background(), c, []*apiextensionsv1.CustomResourceDefinition{want}, nil); !errors.As(err, &skew) {
		t.Errorf("CRDSkew: %v, want a SkewError", err)
	}
}

// The red team's: crdHashes memoizes CRDHash by a weak pointer, and
// every InstallPlan check decodes fresh CRDs; entries of CRDs the
// collector freed must go, or the map grows with every check.
func TestCRDHashesBounded(t *testing.T) {
	count := func() int {
		n := 0
		crdHashes.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := count()
	for range 2000 {
		CRDHash(skewCRD(schemaFrom(t, baseSchema)))
	}
	deadline := time.Now().Add(5 * time.Second)
	for count()-before > 100 && time.Now().Before(deadline) {
		goruntime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := count() - before; n > 100 {
		t.Errorf("2000 hashes of CRDs no longer referenced left %d entries in crdHashes, want them dropped", n)
	}
}
