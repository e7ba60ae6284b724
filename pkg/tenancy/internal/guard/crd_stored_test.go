package guard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pagedReader serves objects by pages, as the API server lists them.
type pagedReader struct {
	items []map[string]any
	err   error
	lists []string // the apiVersion and continue token of each list
}

func (r *pagedReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("not served")
}

func (r *pagedReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	ul := list.(*unstructured.UnstructuredList)
	r.lists = append(r.lists, ul.GetAPIVersion()+" "+o.Continue)
	if r.err != nil {
		return r.err
	}
	start, _ := strconv.Atoi(o.Continue)
	end := min(len(r.items), start+int(o.Limit))
	for _, it := range r.items[start:end] {
		ul.Items = append(ul.Items, unstructured.Unstructured{Object: it})
	}
	if end < len(r.items) {
		ul.SetContinue(strconv.Itoa(end))
	}
	return nil
}

// widget is a stored Widget of namespace ns with spec.
func widget(ns, name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}
}

func TestStoredObjectsFit(t *testing.T) {
	rule := func(r string) func(*apiextensionsv1.CustomResourceDefinition) {
		return newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
			s.XValidations = apiextensionsv1.ValidationRules{{Rule: r, Message: "too big"}}
		}))
	}
	objects := []map[string]any{
		widget("team-a", "small", map[string]any{"size": int64(2)}),
		widget("team-b", "large", map[string]any{"size": int64(8), "config": map[string]any{"maxmemory": map[string]any{"value": "1gb"}}}),
		widget("team-b", "huge", map[string]any{"size": int64(9), "config": map[string]any{"ttl": "1h"}}),
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "example.com", Resource: "widgets"}, "", errors.New("no"))
	tests := []struct {
		name    string
		live    func(*apiextensionsv1.CustomResourceDefinition)
		want    func(*apiextensionsv1.CustomResourceDefinition)
		err     error
		skew    string // substring of the refusal
		noLists bool   // nothing to check: nothing read
	}{
		{name: "a new field only: nothing read", want: newer(), noLists: true},
		{name: "a rule every stored object passes", want: rule("self.size <= 9")},
		{name: "a rule stored objects fail", want: rule("self.size <= 5"),
			skew: `2 of the 3 stored objects would not fit version v1 of the new definition (.spec: validation rule "self.size <= 5" added): team-b/large (.spec: too big), team-b/huge`},
		{name: "a rule that objects already failed and still fail", live: specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
			s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5", Message: "too big"}}
		}), want: newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
			s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5", Message: "too big"}, {Rule: "self.size >= 1", Message: "too small"}}
		}))},
		{name: "a field kept whole, declared so that a stored value is pruned", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
			f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"maxmemory": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"bytes": {Type: "integer"}}}}
		}), skew: "1 of the 3 stored objects would not fit version v1 of the new definition (.spec.config.maxmemory: kept whole under x-kubernetes-preserve-unknown-fields before, declared now): team-b/large (would lose .spec.config.maxmemory.value)"},
		{name: "a field kept whole, declared as stored objects hold it", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
			f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"maxmemory": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"value": {Type: "string"}}}}
		})},
		// Pruning keeps a scalar whatever its declared type, and prunes
		// the keys of an object declared a scalar; a scalar of another
		// type fails validation on the next write.
		{name: "a field kept whole, declared a scalar where a stored object holds an object", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
			f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"maxmemory": {Type: "string"}}
		}), skew: "team-b/large (would lose .spec.config.maxmemory.value)"},
		{name: "a field kept whole, declared with a type a stored scalar does not have", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
			f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"ttl": {Type: "integer"}}
		}), skew: "must be of type integer"},
		{name: "the stored objects may not be read", want: rule("self.size <= 9"), err: forbidden, skew: "the controller may not list them: grant it list on widgets.example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fitMemo.Clear() // each case reads other stored objects under the same CRDs
			live, want := skewCRD(schemaFrom(t, baseSchema)), skewCRD(schemaFrom(t, baseSchema))
			if tc.live != nil {
				tc.live(live)
			}
			tc.want(want)
			if _, err := CompareCRD(live, want); err != nil {
				t.Fatalf("CompareCRD refuses: %v", err)
			}
			r := &pagedReader{items: objects, err: tc.err}
			err := StoredObjectsFit(context.Background(), r, live, want)
			var skew *SkewError
			switch {
			case tc.skew != "":
				if !errors.As(err, &skew) || !strings.Contains(err.Error(), tc.skew) {
					t.Fatalf("StoredObjectsFit: %v, want a SkewError containing %q", err, tc.skew)
				}
				t.Logf("refused: %v", err)
			case err != nil:
				t.Fatalf("StoredObjectsFit: %v", err)
			}
			if tc.noLists != (len(r.lists) == 0) {
				t.Errorf("lists %q", r.lists)
			}
		})
	}
}

// The stored objects are read by pages, and a refusal counts them all
// but names only a few.
func TestStoredObjectsFitPages(t *testing.T) {
	fitMemo.Clear()
	live, want := skewCRD(schemaFrom(t, baseSchema)), skewCRD(schemaFrom(t, baseSchema))
	newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
		s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5"}}
	}))(want)
	var objects []map[string]any
	for i := range 2*storedPage + 10 {
		objects = append(objects, widget("team-a", fmt.Sprintf("w%03d", i), map[string]any{"size": int64(1 + i%10)}))
	}
	r := &pagedReader{items: objects}
	err := StoredObjectsFit(context.Background(), r, live, want)
	if err == nil || !strings.Contains(err.Error(), "255 of the 510 stored objects") || !strings.Contains(err.Error(), "team-a/w005") ||
		!strings.Contains(err.Error(), "and 252 more") || strings.Contains(err.Error(), "team-a/w016") {
		t.Errorf("refusal %v", err)
	}
	if want := []string{"example.com/v1 ", "example.com/v1 250", "example.com/v1 500"}; strings.Join(r.lists, ",") != strings.Join(want, ",") {
		t.Errorf("lists %q, want %q", r.lists, want)
	}
}

// A new version with conversion None serves the stored objects as they
// are: they are read at the storage version and checked against it.
func TestStoredObjectsFitNewVersion(t *testing.T) {
	fitMemo.Clear()
	live, want := skewCRD(schemaFrom(t, baseSchema)), skewCRD(schemaFrom(t, baseSchema))
	secondVersion(false, func(s *apiextensionsv1.JSONSchemaProps) {
		s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.spec.size <= 5", Message: "too big for v2"}}
	})(want)
	r := &pagedReader{items: []map[string]any{widget("team-a", "large", map[string]any{"size": int64(8)})}}
	err := StoredObjectsFit(context.Background(), r, live, want)
	if err == nil || !strings.Contains(err.Error(), "1 of the 1 stored objects would not fit version v2") || !strings.Contains(err.Error(), "too big for v2") {
		t.Errorf("refusal %v", err)
	}
	if len(r.lists) != 1 || r.lists[0] != "example.com/v1 " {
		t.Errorf("lists %q, want the storage version v1", r.lists)
	}
}

// The red team's: a refused definition comes back on every reconcile of
// its tenant, which the tenant can bring at will; its rules run over the
// stored objects once per fitMemoTTL, not once per reconcile, whatever
// the check concluded: a refusal, or an error of its own (a list the
// tenant's objects made fail, such as an expired continue token after a
// slow check). Only a check the caller gave up on (its context ended)
// runs again.
func TestStoredObjectsFitMemo(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		lists int
		ttl   time.Duration // how long the verdict stands; 0 for not kept
	}{
		{name: "a refusal", lists: 1, ttl: fitMemoTTL},
		{name: "the list refused: Forbidden", err: apierrors.NewForbidden(schema.GroupResource{Group: "example.com", Resource: "widgets"}, "", errors.New("no")), lists: 1, ttl: fitMemoTTL},
		{name: "the continue token expired", err: apierrors.NewResourceExpired("the continue token expired"), lists: 1, ttl: fitMemoTTL},
		{name: "a server error: kept briefly", err: apierrors.NewInternalError(errors.New("etcd")), lists: 1, ttl: fitRetryTTL},
		{name: "throttled: kept briefly", err: apierrors.NewTooManyRequests("slow down", 1), lists: 1, ttl: fitRetryTTL},
		{name: "a kind not served yet: kept briefly", err: apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "widgets"}, ""), lists: 1, ttl: fitRetryTTL},
		{name: "the caller gave up", err: context.Canceled, lists: 3},
		{name: "the caller's deadline", err: fmt.Errorf("listing: %w", context.DeadlineExceeded), lists: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fitMemo.Clear()
			live, want := skewCRD(schemaFrom(t, baseSchema)), skewCRD(schemaFrom(t, baseSchema))
			newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
				s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5"}}
			}))(want)
			r := &pagedReader{items: []map[string]any{widget("team-a", "big", map[string]any{"size": int64(9)})}, err: tc.err}
			for range 3 {
				if err := StoredObjectsFit(context.Background(), r, live, want); err == nil {
					t.Fatalf("StoredObjectsFit: no refusal")
				}
			}
			if len(r.lists) != tc.lists {
				t.Errorf("3 checks of one definition listed the stored objects %d times, want %d", len(r.lists), tc.lists)
			}
			var ttl time.Duration
			fitMemo.Range(func(_, v any) bool { ttl = v.(fitVerdict).ttl; return true })
			if ttl != tc.ttl {
				t.Errorf("the verdict stands %v, want %v", ttl, tc.ttl)
			}
		})
	}
}
