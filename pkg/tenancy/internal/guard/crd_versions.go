package guard

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// versionChange is the schema change one served version of a new
// definition makes for the objects of the live CRD: compared with the
// live version of the same name, or, with conversion None (which converts
// nothing but apiVersion), with the live storage version whose objects a
// new version or a new storage version serves as they are.
type versionChange struct {
	version string // of the new definition
	from    string // the live version compared with
	why     string // "", "new" (a new version) or "storage" (storage moves)
	diff    schemaDiff
}

// maxNotes bounds the changes a refusal lists.
const maxNotes = 8

// diffCRD compares every version want serves with what live stores and
// serves. It refuses (*SkewError) a want that stops serving a stored
// version; refused reports the changes the schemas alone refuse.
func diffCRD(live, want *apiextensionsv1.CustomResourceDefinition) ([]versionChange, error) {
	wantServed := map[string]bool{}
	for _, v := range want.Spec.Versions {
		wantServed[v.Name] = v.Served
	}
	liveServed := map[string]*apiextensionsv1.CustomResourceDefinitionVersion{}
	var liveStorage, wantStorage *apiextensionsv1.CustomResourceDefinitionVersion
	for i, v := range live.Spec.Versions {
		if v.Served && !wantServed[v.Name] {
			if slices.Contains(live.Status.StoredVersions, v.Name) {
				return nil, &SkewError{CRD: want.Name, Reason: fmt.Sprintf("the new definition stops serving version %s, which objects are still stored in", v.Name)}
			}
			return nil, &SkewError{CRD: want.Name, Reason: fmt.Sprintf("the new definition stops serving version %s, which other tenants' operators may still use", v.Name)}
		}
		if v.Served {
			liveServed[v.Name] = &live.Spec.Versions[i]
		}
		if v.Storage {
			liveStorage = &live.Spec.Versions[i]
		}
	}
	none := want.Spec.Conversion == nil || want.Spec.Conversion.Strategy == "" || want.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter
	var changes []versionChange
	for i, v := range want.Spec.Versions {
		if v.Storage {
			wantStorage = &want.Spec.Versions[i]
		}
		if !v.Served {
			continue
		}
		if l := liveServed[v.Name]; l != nil {
			changes = append(changes, versionChange{version: v.Name, from: v.Name, diff: diffSchema(schemaOf(l), schemaOf(&v))})
		} else if none && liveStorage != nil {
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
	if v.Schema == nil {
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

// skewOf is the refusal of changes to live, nil if the schemas allow them.
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
			default:
				r = fmt.Sprintf("the new definition narrows version %s, which tenants' objects are stored and served in", c.version)
			}
			reasons = append(reasons, r+": "+bounded(notes))
		}
	}
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
// accepts. Validation rules live lacks do not matter: keeping live
// changes nothing that is stored.
func covers(live, want *apiextensionsv1.CustomResourceDefinition) bool {
	if !Subset(ServedFields(want), ServedFields(live)) {
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
