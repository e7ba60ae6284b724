package guard

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

// What a shared CRD's users rely on besides its schemas: the
// subresources their operators write through (status, scale), the fields
// they select by, the names and categories their kubectl uses, and the
// conversion that serves their objects in every version. A new
// definition may add to them, never take away or change them.

// metaSkew lists what want would take away from live's users, besides
// the schemas (diffCRD): per version live serves or holds objects in
// that want keeps, a subresource removed or a scale path removed or
// changed, a selectable field removed; a name changed, a short name or
// category removed; the conversion changed.
func metaSkew(live, want *apiextensionsv1.CustomResourceDefinition) []string {
	var reasons []string
	wantVersions := map[string]*apiextensionsv1.CustomResourceDefinitionVersion{}
	for i, v := range want.Spec.Versions {
		wantVersions[v.Name] = &want.Spec.Versions[i]
	}
	for _, l := range live.Spec.Versions {
		w := wantVersions[l.Name]
		if w == nil || (!l.Served && !slices.Contains(live.Status.StoredVersions, l.Name)) {
			continue
		}
		var notes []string
		if ls := l.Subresources; ls != nil {
			ws := w.Subresources
			if ls.Status != nil && (ws == nil || ws.Status == nil) {
				notes = append(notes, "subresources.status removed (tenants' operators write their objects' status through it)")
			}
			if ls.Scale != nil {
				switch {
				case ws == nil || ws.Scale == nil:
					notes = append(notes, "subresources.scale removed (autoscalers and kubectl scale use it)")
				default:
					notes = append(notes, scaleChanges(ls.Scale, ws.Scale)...)
				}
			}
		}
		for _, f := range l.SelectableFields {
			if !slices.ContainsFunc(w.SelectableFields, func(s apiextensionsv1.SelectableField) bool { return s.JSONPath == f.JSONPath }) {
				notes = append(notes, fmt.Sprintf("selectableFields %s removed (field selectors of tenants' clients use it)", f.JSONPath))
			}
		}
		if len(notes) > 0 {
			reasons = append(reasons, fmt.Sprintf("the new definition takes from version %s what tenants' operators and clients use: %s", l.Name, bounded(notes)))
		}
	}
	if notes := namesSkew(live.Spec.Names, want.Spec.Names); len(notes) > 0 {
		reasons = append(reasons, "the new definition takes names tenants' users address the kind by: "+bounded(notes))
	}
	if lc, wc := conversionOf(live), conversionOf(want); !equality.Semantic.DeepEqual(lc, wc) {
		reasons = append(reasons, fmt.Sprintf("the new definition changes spec.conversion (strategy %s to %s), which serves every tenant's objects in every version", lc.Strategy, wc.Strategy))
	}
	return reasons
}

// scaleChanges lists the scale paths of live that want removes or
// changes; a path live lacks may be added.
func scaleChanges(live, want *apiextensionsv1.CustomResourceSubresourceScale) []string {
	var notes []string
	if live.SpecReplicasPath != want.SpecReplicasPath {
		notes = append(notes, fmt.Sprintf("subresources.scale.specReplicasPath changed from %s to %s", live.SpecReplicasPath, want.SpecReplicasPath))
	}
	if live.StatusReplicasPath != want.StatusReplicasPath {
		notes = append(notes, fmt.Sprintf("subresources.scale.statusReplicasPath changed from %s to %s", live.StatusReplicasPath, want.StatusReplicasPath))
	}
	if l := ptr.Deref(live.LabelSelectorPath, ""); l != "" && l != ptr.Deref(want.LabelSelectorPath, "") {
		notes = append(notes, fmt.Sprintf("subresources.scale.labelSelectorPath changed from %s to %q", l, ptr.Deref(want.LabelSelectorPath, "")))
	}
	return notes
}

// namesSkew lists the names of live that want changes or removes. The
// API server defaults singular and listKind from kind: a definition
// that leaves them empty means the defaults.
func namesSkew(live, want apiextensionsv1.CustomResourceDefinitionNames) []string {
	var notes []string
	live, want = defaultNames(live), defaultNames(want)
	for _, n := range []struct{ field, live, want string }{
		{"plural", live.Plural, want.Plural}, {"singular", live.Singular, want.Singular},
		{"kind", live.Kind, want.Kind}, {"listKind", live.ListKind, want.ListKind},
	} {
		if n.live != n.want {
			notes = append(notes, fmt.Sprintf("names.%s changed from %s to %s", n.field, n.live, n.want))
		}
	}
	if gone := missing(live.ShortNames, want.ShortNames); len(gone) > 0 {
		notes = append(notes, "names.shortNames "+strings.Join(gone, ", ")+" removed (tenants' kubectl uses them)")
	}
	if gone := missing(live.Categories, want.Categories); len(gone) > 0 {
		notes = append(notes, "names.categories "+strings.Join(gone, ", ")+" removed (kubectl get "+gone[0]+" lists the kind)")
	}
	return notes
}

func defaultNames(n apiextensionsv1.CustomResourceDefinitionNames) apiextensionsv1.CustomResourceDefinitionNames {
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" && n.Kind != "" {
		n.ListKind = n.Kind + "List"
	}
	return n
}

// missing lists the items of a that b lacks, sorted.
func missing(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// conversionOf is crd's conversion as the API server defaults it:
// strategy None when unset, a webhook's Service on port 443.
func conversionOf(crd *apiextensionsv1.CustomResourceDefinition) apiextensionsv1.CustomResourceConversion {
	c := apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	if crd.Spec.Conversion != nil {
		c = *crd.Spec.Conversion.DeepCopy()
	}
	if c.Strategy == "" {
		c.Strategy = apiextensionsv1.NoneConverter
	}
	if c.Strategy == apiextensionsv1.NoneConverter {
		c.Webhook = nil
	}
	if c.Webhook != nil && c.Webhook.ClientConfig != nil && c.Webhook.ClientConfig.Service != nil && c.Webhook.ClientConfig.Service.Port == nil {
		c.Webhook.ClientConfig.Service.Port = ptr.To[int32](443)
	}
	return c
}

// coversMeta reports whether live already has all that want declares
// besides the schemas: its subresources and scale paths, selectable
// fields, names, short names and categories, and the same conversion.
// Keeping live then takes nothing from want's users.
func coversMeta(live, want *apiextensionsv1.CustomResourceDefinition) bool {
	if len(namesSkew(want.Spec.Names, live.Spec.Names)) > 0 || !equality.Semantic.DeepEqual(conversionOf(live), conversionOf(want)) {
		return false
	}
	for _, w := range want.Spec.Versions {
		if !w.Served {
			continue
		}
		i := slices.IndexFunc(live.Spec.Versions, func(l apiextensionsv1.CustomResourceDefinitionVersion) bool { return l.Name == w.Name })
		if i < 0 {
			return false
		}
		l := live.Spec.Versions[i]
		ws, ls := w.Subresources, l.Subresources
		if ws != nil && ws.Status != nil && (ls == nil || ls.Status == nil) {
			return false
		}
		if ws != nil && ws.Scale != nil && (ls == nil || ls.Scale == nil || len(scaleChanges(ws.Scale, ls.Scale)) > 0) {
			return false
		}
		for _, f := range w.SelectableFields {
			if !slices.ContainsFunc(l.SelectableFields, func(s apiextensionsv1.SelectableField) bool { return s.JSONPath == f.JSONPath }) {
				return false
			}
		}
	}
	return true
}
