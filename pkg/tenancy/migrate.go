package tenancy

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// releaseKey is the key Helm's storage gives a revision.
func releaseKey(name string, version int) string {
	return fmt.Sprintf("%s%s.v%d", helmKeyPrefix, name, version)
}

// moveRecords copies the revisions of release name that accept allows
// from one storage driver to another, verifies each copy by reading it
// back, and only then deletes the originals. It is idempotent: a revision
// already copied is verified and its original deleted. It returns the
// revisions moved.
func moveRecords(from, to driver.Driver, name string, accept func(version int, have []int) bool) ([]int, error) {
	src, err := from.Query(map[string]string{"name": name, "owner": "helm"})
	if errors.Is(err, driver.ErrReleaseNotFound) || len(src) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the records of release %s: %w", name, err)
	}
	var have []int
	if dst, err := to.Query(map[string]string{"name": name, "owner": "helm"}); err == nil {
		for _, r := range dst {
			have = append(have, r.Version)
		}
	} else if !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("reading the records of release %s: %w", name, err)
	}
	slices.SortFunc(src, func(a, b *release.Release) int { return a.Version - b.Version })
	var moved []int
	for _, rel := range src {
		key := releaseKey(name, rel.Version)
		exists := slices.Contains(have, rel.Version)
		if !exists && !accept(rel.Version, have) {
			continue
		}
		if !exists {
			if err := to.Create(key, rel); err != nil && !errors.Is(err, driver.ErrReleaseExists) {
				return moved, fmt.Errorf("copying %s: %w", key, err)
			}
		}
		got, err := to.Get(key)
		if err != nil {
			return moved, fmt.Errorf("reading back %s: %w", key, err)
		}
		if !sameRecord(got, rel) {
			if exists {
				continue // another record of that revision is kept already: leave this one
			}
			return moved, fmt.Errorf("the copy of %s differs from the original: keeping the original", key)
		}
		if _, err := from.Delete(key); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			return moved, fmt.Errorf("deleting the original of %s: %w", key, err)
		}
		moved = append(moved, rel.Version)
	}
	return moved, nil
}

// sameRecord compares what Helm acts on in two records of one revision.
func sameRecord(a, b *release.Release) bool {
	if a.Name != b.Name || a.Namespace != b.Namespace || a.Version != b.Version || a.Manifest != b.Manifest ||
		a.Info == nil || b.Info == nil || a.Info.Status != b.Info.Status || len(a.Hooks) != len(b.Hooks) {
		return false
	}
	for i := range a.Hooks {
		if a.Hooks[i].Manifest != b.Hooks[i].Manifest {
			return false
		}
	}
	if (a.Chart == nil) != (b.Chart == nil) || (a.Chart != nil && !reflect.DeepEqual(a.Chart.Metadata, b.Chart.Metadata)) {
		return false
	}
	return sameValues(a.Config, b.Config)
}

// intoStorage accepts the revisions of a tenant namespace's records that
// the controller's storage lacks: all of them the first time, and later
// only gaps below the newest revision it keeps (a copy cut short by a
// restart). A record a tenant adds above the newest kept revision is
// never taken.
func intoStorage(version int, have []int) bool {
	return len(have) == 0 || version < slices.Max(have)
}

// everything accepts every revision.
func everything(int, []int) bool { return true }
