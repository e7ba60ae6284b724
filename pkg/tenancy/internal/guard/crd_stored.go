package guard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuralcel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// storedPage is how many stored objects one list request reads.
	storedPage = 250
	// maxNamed bounds the failing objects a refusal names.
	maxNamed = 3
)

// StoredObjectsFit checks the objects that every tenant has stored under
// live against want, where want adds validation that only they can judge
// (schemaDiff.checks: a validation rule added or changed, a field kept
// whole under x-kubernetes-preserve-unknown-fields now declared, ...).
// It lists them through c, in all namespaces and by pages, and runs on
// each what the API server would on its next write under want: pruning,
// defaulting, the schema validator and the CEL validator of
// k8s.io/apiextensions-apiserver. An object that would lose a field, or
// fail where it passes live's validation, makes the change a *SkewError
// with their count and a few names. c must be allowed to list the
// objects: a refusal (Forbidden) refuses the change too. With nothing to
// check it reads nothing. It does not judge what CompareCRD refuses.
//
// A verdict is kept by the new definition and the live CRD's
// resourceVersion: the check runs a tenant's rules over every stored
// object, and a refused definition comes back on every reconcile of its
// tenant, which the tenant can bring at will. Every verdict of the check
// itself is kept for fitMemoTTL: that the objects fit, a refusal (a list
// the API server forbids among them), and an error of its own (a schema
// it cannot build, a continue token that expired while a slow check ran
// over the tenants' objects), since running it again would do the same
// work to the same end. Any other error of listing the objects (a
// timeout, throttling, an internal error, a broken connection, a kind
// discovery does not list yet) says more about the API server than about
// the definition, and is kept for fitRetryTTL only: the check runs again
// soon, but not on every reconcile. Nothing is kept when the caller's
// context ended: no verdict was reached, and the next caller's context
// may well last.
func StoredObjectsFit(ctx context.Context, c client.Reader, live, want *apiextensionsv1.CustomResourceDefinition) error {
	if live == nil {
		return nil
	}
	key := CRDHash(want) + "|" + live.Name + "@" + live.ResourceVersion
	if v, ok := fitMemo.Load(key); ok && v.(fitVerdict).fresh() {
		return v.(fitVerdict).err
	}
	err := storedObjectsFit(ctx, c, live, want)
	ttl := fitMemoTTL
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case transient(err):
		ttl = fitRetryTTL
	}
	fitMemo.Range(func(k, v any) bool { // drop what expired
		if !v.(fitVerdict).fresh() {
			fitMemo.Delete(k)
		}
		return true
	})
	fitMemo.Store(key, fitVerdict{err: err, at: time.Now(), ttl: ttl})
	return err
}

const (
	// fitMemoTTL is how long a verdict of StoredObjectsFit stands.
	fitMemoTTL = 5 * time.Minute
	// fitRetryTTL is how long an error the API server may not repeat
	// stands.
	fitRetryTTL = 30 * time.Second
)

// transient reports whether err is an error of listing the stored
// objects that the API server may not repeat: any but an expired
// continue token.
func transient(err error) bool {
	var le *listError
	return errors.As(err, &le) && !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err)
}

// listError is an error of listing the stored objects.
type listError struct{ err error }

func (e *listError) Error() string { return e.err.Error() }
func (e *listError) Unwrap() error { return e.err }

// fitVerdict is a verdict of StoredObjectsFit, when it was reached and
// how long it stands.
type fitVerdict struct {
	err error
	at  time.Time
	ttl time.Duration
}

func (v fitVerdict) fresh() bool { return time.Since(v.at) < v.ttl }

// fitMemo holds verdicts by new definition and live CRD version.
var fitMemo sync.Map // string -> fitVerdict

func storedObjectsFit(ctx context.Context, c client.Reader, live, want *apiextensionsv1.CustomResourceDefinition) error {
	changes, err := diffCRD(live, want)
	if err != nil {
		return err
	}
	for _, ch := range changes {
		if len(ch.diff.checks) == 0 || ch.why == "stored" {
			continue // a version not served: CompareCRD refuses its checks
		}
		if err := storedFit(ctx, c, live, want, ch); err != nil {
			return err
		}
	}
	return nil
}

// storedFit checks the objects of live read at version ch.from against
// want's version ch.version.
func storedFit(ctx context.Context, c client.Reader, live, want *apiextensionsv1.CustomResourceDefinition, ch versionChange) error {
	before, err := versionValidation(live, ch.from)
	if err != nil {
		return err
	}
	after, err := versionValidation(want, ch.version)
	if err != nil {
		return err
	}
	checks := make([]string, len(ch.diff.checks))
	for i, n := range ch.diff.checks {
		checks[i] = n.String()
	}
	kind := live.Spec.Names.ListKind
	if kind == "" {
		kind = live.Spec.Names.Kind + "List"
	}
	gvk := schema.GroupVersionKind{Group: live.Spec.Group, Version: ch.from, Kind: kind}
	apiVersion := want.Spec.Group + "/" + ch.version
	total, failing := 0, 0
	var named []string
	for cont := ""; ; {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		opts := []client.ListOption{client.Limit(storedPage)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := c.List(ctx, list, opts...); apierrors.IsForbidden(err) {
			return &SkewError{CRD: want.Name, Reason: fmt.Sprintf("version %s of the new definition adds validation (%s) that the stored objects must be checked against, "+
				"and the controller may not list them: grant it list on %s.%s, or leave the validation out: %v", ch.version, bounded(checks), live.Spec.Names.Plural, live.Spec.Group, err)}
		} else if err != nil {
			return fmt.Errorf("listing the stored objects of CRD %s: %w", live.Name, &listError{err})
		}
		for i := range list.Items {
			total++
			why := fits(ctx, before, after, apiVersion, list.Items[i].Object)
			if why == "" {
				continue
			}
			failing++
			if len(named) < maxNamed {
				name := list.Items[i].GetName()
				if ns := list.Items[i].GetNamespace(); ns != "" {
					name = ns + "/" + name
				}
				named = append(named, fmt.Sprintf("%s (%s)", name, why))
			}
		}
		if cont = list.GetContinue(); cont == "" {
			break
		}
	}
	if failing == 0 {
		return nil
	}
	more := ""
	if failing > len(named) {
		more = fmt.Sprintf(" and %d more", failing-len(named))
	}
	return &SkewError{CRD: want.Name, Reason: fmt.Sprintf("%d of the %d stored objects would not fit version %s of the new definition (%s): %s%s",
		failing, total, ch.version, bounded(checks), strings.Join(named, ", "), more)}
}

// versionSchema is one version's schema as the API server uses it.
type versionSchema struct {
	structural *structuralschema.Structural
	schema     apivalidation.SchemaValidator
	cel        *structuralcel.Validator // nil without rules
}

// versionValidation builds the validation of crd's version as the API
// server's CRD handler does (structural schema with pruned defaults,
// schema validator, CEL validator).
func versionValidation(crd *apiextensionsv1.CustomResourceDefinition, version string) (*versionSchema, error) {
	var v1 *apiextensionsv1.CustomResourceValidation
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			v1 = v.Schema
		}
	}
	if v1 == nil || v1.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CRD %s has no schema for version %s", crd.Name, version)
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v1, internal, nil); err != nil {
		return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, version, err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("CRD %s version %s: the schema is not structural: %w", crd.Name, version, err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, version, err)
	}
	sv, _, err := apivalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, version, err)
	}
	return &versionSchema{structural: s, schema: sv, cel: structuralcel.NewValidator(s, true, celconfig.PerCallLimit)}, nil
}

// errors validates obj as a create would (no old object: transition
// rules do not run). It returns each error's text by a key of its type,
// field and detail.
func (v *versionSchema) errors(ctx context.Context, obj map[string]any) map[string]string {
	errs := apivalidation.ValidateCustomResource(nil, obj, v.schema)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj, v.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	if v.cel != nil {
		celErrs, _ := v.cel.Validate(ctx, nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	out := make(map[string]string, len(errs))
	for _, e := range errs {
		out[string(e.Type)+" "+e.Field+": "+e.Detail] = fromRoot(e.Field) + ": " + e.Detail
	}
	return out
}

// fromRoot writes an API server's field path (spec.size) as schemaDiff
// does (.spec.size).
func fromRoot(p string) string { return "." + p }

// fits returns why obj, stored and served under before, would not fit
// after as apiVersion: a field pruned, or an error live's validation does
// not raise. "" when it fits.
func fits(ctx context.Context, before, after *versionSchema, apiVersion string, obj map[string]any) string {
	had := before.errors(ctx, obj)
	next := runtime.DeepCopyJSON(obj)
	next["apiVersion"] = apiVersion
	pruned := structuralpruning.PruneWithOptions(next, after.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	if len(pruned) > 0 {
		for i, p := range pruned {
			pruned[i] = fromRoot(p)
		}
		return "would lose " + bounded(pruned)
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(next, after.structural)
	structuraldefaulting.Default(next, after.structural)
	errs := after.errors(ctx, next)
	for _, k := range sortedKeys(errs) {
		if _, ok := had[k]; !ok {
			return errs[k]
		}
	}
	return ""
}
