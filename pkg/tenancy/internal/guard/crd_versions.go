package guard

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// versionChange is the schema change a new definition makes for the
// objects of the live CRD in one version: compared with the live version
// of the same name (every version live serves or still holds objects in,
// status.storedVersions), or, with conversion None (which converts
// nothing but apiVersion), with the live storage version whose objects a
// new version or a new storage version serves as they are.
type versionChange struct {
	version string // of the new definition
	from    string // the live version compared with
	why     string // "", "stored" (not served by live, objects stored in it), "new" (a new version) or "storage" (storage moves)
	diff    schemaDiff
}

// maxNotes bounds the changes a refusal lists.
const maxNotes = 8

// diffCRD compares what live stores and serves with want. It refuses
// (*SkewError) a want that stops serving a served version or drops a
// version objects are stored in; refused reports the changes the schemas
// alone refuse.
//
// A version live does not serve but that is in its status.storedVersions
// still holds objects written before storage moved: the API server
// prunes and defaults them with that version's schema whenever it reads
// them, served or not, so it is compared as a served one is.
func diffCRD(live, want *apiextensionsv1.CustomResourceDefinition) ([]versionChange, error) {
	wantVersions := map[string]*apiextensionsv1.CustomResourceDefinitionVersion{}
	for i, v := range want.Spec.Versions {
		wantVersions[v.Name] = &want.Spec.Versions[i]
	}
	liveServed := map[string]bool{}
	var liveStorage, wantStorage *apiextensionsv1.CustomResourceDefinitionVersion
	var changes []versionChange
	for i, v := range live.Spec.Versions {
		stored := slices.Contains(live.Status.StoredVersions, v.Name)
		w := wantVersions[v.Name]
		switch {
		case v.Served && (w == nil || !w.Served) && stored:
			return nil, &SkewError{CRD: want.Name, Reason: fmt.Sprintf("the new definition stops serving version %s, which objects are still stored in", v.Name)}
		case v.Served && (w == nil || !w.Served):
			return nil, &SkewError{CRD: want.Name, Reason: fmt.Sprintf("the new definition stops serving version %s, which other tenants' operators may still use", v.Name)}
		case stored && w == nil:
			// The API server refuses this too (a version in
			// status.storedVersions must stay in spec.versions); say why.
			return nil, &SkewError{CRD: want.Name, Reason: fmt.Sprintf("the new definition removes version %s, which objects are still stored in (status.storedVersions): "+
				"migrate them to the storage version and remove %s from status.storedVersions first", v.Name, v.Name)}
		}
		if v.Served {
			liveServed[v.Name] = true
		}
		if v.Storage {
			liveStorage = &live.Spec.Versions[i]
		}
		if v.Served || stored {
			why := ""
			if !v.Served {
				why = "stored"
			}
			changes = append(changes, versionChange{version: v.Name, from: v.Name, why: why, diff: diffSchema(schemaOf(&live.Spec.Versions[i]), schemaOf(w))})
		}
	}
	none := want.Spec.Conversion == nil || want.Spec.Conversion.Strategy == "" || want.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter
	for i, v := range want.Spec.Versions {
		if v.Storage {
			wantStorage = &want.Spec.Versions[i]
		}
		if v.Served && !liveServed[v.Name] && none && liveStorage != nil && v.Name != liveStorage.Name {
			changes = append(changes, versionChange{version: v.Name, from: liveStorage.Name, why: "new", diff: diffSchema(schemaOf(liveStorage), schemaOf(&v))})
		}
	}
	// Every write stores under the storage version's schema, served or
	// not: one that is not served would prune every tenant's objects with
	// a schema nothing checks.
	if wantStorage != nil && !wantStorage.Served {
		return nil, &SkewError{CRD: want.Name, Reason: fmt.Sprintf("the new definition stores objects in version %s, which it does not serve", wantStorage.Name)}
	}
	// Storage moving to another version: conversion None stores the
	// objects of the old storage version under it as they are.
	if none && liveStorage != nil && wantStorage != nil && wantStorage.Name != liveStorage.Name {
		changes = append(changes, versionChange{version: wantStorage.Name, from: liveStorage.Name, why: "storage", diff: diffSchema(schemaOf(liveStorage), schemaOf(wantStorage))})
	}
	return changes, nil
}

func schemaOf(v *apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.JSONSchemaProps {
	if v == nil || v.Schema == nil {
		return nil
	}
	return v.Schema.OpenAPIV3Schema
}

// storageOf is the name of crd's storage version.
func storageOf(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// skewOf is the refusal of changes to live, nil if the schemas allow
// them and want takes from live none of the subresources, selectable
// fields, names or conversion its users rely on (metaSkew).
func skewOf(live, want *apiextensionsv1.CustomResourceDefinition, changes []versionChange) error {
	storage := storageOf(live)
	var reasons []string
	for _, c := range changes {
		if len(c.diff.removed) > 0 {
			var r string
			switch {
			case c.why == "storage":
				r = fmt.Sprintf("the new definition moves storage from version %s to %s with conversion strategy None, and %s lacks fields of %s that tenants' objects may use", c.from, c.version, c.version, c.from)
			case c.why == "new":
				r = fmt.Sprintf("the new definition adds version %s with conversion strategy None, which serves the objects of storage version %s without fields they may use", c.version, c.from)
			case c.why == "stored":
				r = fmt.Sprintf("the new definition removes fields from version %s, which is not served but which objects are still stored in (status.storedVersions; the API server prunes them on read)", c.version)
			case c.version == storage:
				r = fmt.Sprintf("the new definition removes fields from storage version %s that tenants' objects may use", c.version)
			default:
				r = fmt.Sprintf("the new definition removes fields from version %s that tenants' objects may use", c.version)
			}
			reasons = append(reasons, r+": "+bounded(c.diff.removed))
		}
		if len(c.diff.narrowed) > 0 {
			notes := make([]string, len(c.diff.narrowed))
			for i, n := range c.diff.narrowed {
				notes[i] = n.String()
			}
			var r string
			switch c.why {
			case "storage":
				r = fmt.Sprintf("the new definition moves storage from version %s to %s with conversion strategy None, and version %s refuses or prunes what %s stored", c.from, c.version, c.version, c.from)
			case "new":
				r = fmt.Sprintf("the new definition adds version %s with conversion strategy None, and version %s refuses or prunes what storage version %s stored", c.version, c.version, c.from)
			case "stored":
				r = fmt.Sprintf("the new definition narrows version %s, which is not served but which objects are still stored in (status.storedVersions; the API server prunes and defaults them on read)", c.version)
			default:
				r = fmt.Sprintf("the new definition narrows version %s, which tenants' objects are stored and served in", c.version)
			}
			reasons = append(reasons, r+": "+bounded(notes))
		}
		if c.why == "stored" && len(c.diff.checks) > 0 {
			// StoredObjectsFit lists objects at a served version, converted:
			// it cannot tell which are stored in this one, nor read them as
			// they are stored.
			notes := make([]string, len(c.diff.checks))
			for i, n := range c.diff.checks {
				notes[i] = n.String()
			}
			reasons = append(reasons, fmt.Sprintf("the new definition changes version %s in ways only the objects stored in it could judge, "+
				"and %s is not served, so the controller cannot read the objects stored in it: %s", c.version, c.version, bounded(notes)))
		}
	}
	reasons = append(reasons, metaSkew(live, want)...)
	if len(reasons) == 0 {
		return nil
	}
	return &SkewError{CRD: want.Name, Reason: strings.Join(reasons, "; ")}
}

// bounded joins at most maxNotes items.
func bounded(items []string) string {
	if len(items) <= maxNotes {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:maxNotes], "; "), len(items)-maxNotes)
}

// ReplaceSkew refuses (*SkewError) want replacing live outright, as OLM
// replaces a CRD with a bundle's: what CompareCRD refuses, and an older
// definition too when it would take from the live one what its objects
// may hold. It does not read the stored objects (StoredObjectsFit does).
func ReplaceSkew(live, want *apiextensionsv1.CustomResourceDefinition) error {
	if live == nil {
		return nil
	}
	changes, err := diffCRD(live, want)
	if err != nil {
		return err
	}
	return skewOf(live, want, changes)
}

// covers reports whether live serves everything want declares, as
// generously: every field path of want (ServedFields), and in every
// version a schema that keeps and accepts all that want's keeps and
// accepts, and every subresource, selectable field and name of want
// (coversMeta). Validation rules live lacks do not matter: keeping live
// changes nothing that is stored.
func covers(live, want *apiextensionsv1.CustomResourceDefinition) bool {
	if !Subset(ServedFields(want), ServedFields(live)) || !coversMeta(live, want) {
		return false
	}
	for i, w := range want.Spec.Versions {
		if !w.Served {
			continue
		}
		for j, l := range live.Spec.Versions {
			if l.Name == w.Name && diffSchema(schemaOf(&want.Spec.Versions[i]), schemaOf(&live.Spec.Versions[j])).refused() {
				return false
			}
		}
	}
	return true
}
