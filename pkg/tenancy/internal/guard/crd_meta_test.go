package guard

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// metaCRD is skewCRD with what its users rely on besides the schema: the
// status and scale subresources, a selectable field, short names and a
// category.
func metaCRD(t *testing.T, edit ...func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	crd := skewCRD(schemaFrom(t, baseSchema))
	crd.Spec.Names.ShortNames = []string{"wd", "w"}
	crd.Spec.Names.Categories = []string{"all-widgets"}
	crd.Spec.Versions[0].Subresources = &apiextensionsv1.CustomResourceSubresources{
		Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
		Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.size"},
	}
	crd.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.mode"}}
	edits(edit...)(crd)
	return crd
}

func onVersion(edit func(v *apiextensionsv1.CustomResourceDefinitionVersion)) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(crd *apiextensionsv1.CustomResourceDefinition) { edit(&crd.Spec.Versions[0]) }
}

// The red team's: a newer definition (a field added) that takes from the
// shared CRD what its users rely on besides the schema was applied: the
// status subresource (every other tenant's operator's status writes then
// fail), scale paths, selectable fields, short names and categories
// (users' kubectl), the conversion. A new definition may add them; it
// may not take or change them, applied (CompareCRD) or as OLM replaces a
// CRD (ReplaceSkew).
func TestSkewSubresourcesNamesConversion(t *testing.T) {
	live := metaCRD(t)
	tests := []struct {
		name string
		want *apiextensionsv1.CustomResourceDefinition
		do   CRDDecision
		skew string // substring of the refusal, "" for none
	}{
		{"the same", metaCRD(t), CrdKeep, ""},
		{"the same with the API server's defaults left out", metaCRD(t, func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Names.Singular, c.Spec.Names.ListKind = "", ""
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{}
		}), CrdKeep, ""},
		{"status removed", metaCRD(t, newer(), onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) { v.Subresources.Status = nil })), 0,
			"version v1 what tenants' operators and clients use: subresources.status removed"},
		{"subresources removed", metaCRD(t, newer(), onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) { v.Subresources = nil })), 0,
			"subresources.status removed (tenants' operators write their objects' status through it); subresources.scale removed"},
		{"a scale path changed", metaCRD(t, newer(), onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) {
			v.Subresources.Scale.SpecReplicasPath = ".spec.replicas"
		})), 0, "subresources.scale.specReplicasPath changed from .spec.size to .spec.replicas"},
		{"a scale label selector added", metaCRD(t, newer(), onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) {
			v.Subresources.Scale.LabelSelectorPath = ptr.To(".status.selector")
		})), CrdApply, ""},
		{"a selectable field removed", metaCRD(t, newer(), onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) { v.SelectableFields = nil })), 0,
			"selectableFields .spec.mode removed"},
		{"a short name removed", metaCRD(t, newer(), func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.ShortNames = []string{"wd"} }), 0,
			"names.shortNames w removed"},
		{"a category removed", metaCRD(t, newer(), func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Categories = nil }), 0,
			"names.categories all-widgets removed"},
		{"the kind changed", metaCRD(t, newer(), func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Kind = "Gadget" }), 0,
			"names.kind changed from Widget to Gadget"},
		{"the conversion changed", metaCRD(t, newer(), func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"}}}
		}), 0, "changes spec.conversion (strategy None to Webhook)"},
		{"a short name, a category and a selectable field added", metaCRD(t, func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Names.ShortNames = append(c.Spec.Names.ShortNames, "wg")
			c.Spec.Names.Categories = append(c.Spec.Names.Categories, "example")
			c.Spec.Versions[0].SelectableFields = append(c.Spec.Versions[0].SelectableFields, apiextensionsv1.SelectableField{JSONPath: ".spec.size"})
		}), CrdApply, ""},
		{"older, the status subresource not declared yet: kept", metaCRD(t, onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) { v.Subresources.Status = nil })),
			CrdKeep, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := CompareCRD(live, tc.want)
			var skew *SkewError
			switch {
			case tc.skew != "":
				if !errors.As(err, &skew) || !strings.Contains(err.Error(), tc.skew) {
					t.Fatalf("CompareCRD: %v, want a SkewError containing %q", err, tc.skew)
				}
			case err != nil:
				t.Fatalf("CompareCRD: %v", err)
			case d != tc.do:
				t.Fatalf("decision %v, want %v", d, tc.do)
			}
			// OLM replaces the CRD whatever CompareCRD would keep.
			err = ReplaceSkew(live, tc.want)
			if tc.skew != "" && (!errors.As(err, &skew) || !strings.Contains(err.Error(), tc.skew)) {
				t.Errorf("ReplaceSkew: %v, want a SkewError containing %q", err, tc.skew)
			}
		})
	}
	// The older definition, as OLM would write it, takes the status.
	older := metaCRD(t, onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) { v.Subresources.Status = nil }))
	if err := ReplaceSkew(live, older); err == nil || !strings.Contains(err.Error(), "subresources.status removed") {
		t.Errorf("ReplaceSkew of an older definition without the status subresource: %v, want a refusal", err)
	}
}

// The red team's: CompareCRD and EnsureCRDs trusted the annotation
// tenancy.opctl.dev/crd-hash on the live CRD, the sha256 of the spec
// anyone can compute from a public chart, which a bundle's CRD carries
// onto the shared one through OLM: a newer definition was never applied.
// Only the live spec decides now, and EnsureCRDs writes no such
// annotation, nor a chart's annotations in the controller's domains.
func TestCRDPlantedHashIgnored(t *testing.T) {
	live := skewCRD(schemaFrom(t, baseSchema))
	want := skewCRD(schemaFrom(t, baseSchema))
	newer()(want)
	live.Labels = map[string]string{tenancyv1.LabelSharedCRD: "true"}
	live.Annotations = map[string]string{"tenancy.opctl.dev/crd-hash": CRDHash(want)}
	live.UID, live.ResourceVersion = "uid-1", "999"
	for range 2 { // computed, then memoized
		if d, err := CompareCRD(live, want); err != nil || d != CrdApply {
			t.Fatalf("CompareCRD of a live CRD carrying the newer definition's hash: %v, %v; want CrdApply", d, err)
		}
	}
	var w writes
	want.Annotations = map[string]string{"tenancy.opctl.dev/crd-hash": "planted", "shard.sharding.opctl.dev/x": "y", "keep": "me"}
	c := w.client(t, nil, live)
	if _, err := EnsureCRDs(context.Background(), c, nil, "opctl-test", []*apiextensionsv1.CustomResourceDefinition{want}, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w, ", "); got != "apply 999" {
		t.Errorf("EnsureCRDs over a planted hash wrote %q, want the newer definition applied", got)
	}
	if got := ReservedMetadata(want); got != "annotation shard.sharding.opctl.dev/x, annotation tenancy.opctl.dev/crd-hash" {
		t.Errorf("ReservedMetadata: %q", got)
	}
	for key, reserved := range map[string]bool{"tenancy.opctl.dev/shared-crd": true, "sharding.opctl.dev/ring": true, "shard.sharding.opctl.dev/x": true,
		"opctl.dev/x": false, "nottenancy.opctl.dev/x": false, "keep": false, "example.com/tenancy.opctl.dev": false} {
		if ReservedKey(key) != reserved {
			t.Errorf("ReservedKey(%q) = %v, want %v", key, !reserved, reserved)
		}
	}
}
