package helmrelease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// Helm's default storage keeps a release's records in the release
// namespace, as Secrets named sh.helm.release.v1.<name>.v<revision>. In a
// tenant namespace such a Secret is the tenant's: anyone there can write
// one, with any manifest and hooks. The controller therefore never reads
// one. An older controller's records, or records in an adopted namespace,
// are deleted unread (dropLegacy), and the release is installed over its
// objects: Helm takes over the objects that carry this release's marks and
// reports the others.

// releaseKey is the key Helm's storage gives a revision.
func releaseKey(name string, version int) string {
	return fmt.Sprintf("%s%s.v%d", records.HelmKeyPrefix, name, version)
}

// legacyName matches the key of any revision of one release.
func legacyName(name string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(records.HelmKeyPrefix+name) + `\.v[0-9]+$`)
}

// legacyPage is how many names one page of dropLegacy's list holds.
const legacyPage = 100

// dropLegacy deletes the records of release name that Helm's default
// storage would hold in namespace, reading only their names (a table, in
// pages), once per release and process. It returns the names of the
// Secrets deleted.
func (h *HelmClient) dropLegacy(ctx context.Context, tenant, namespace, name string) ([]string, error) {
	key := releaseRef(tenant, namespace, name)
	h.mu.Lock()
	done := h.migrated[key]
	h.mu.Unlock()
	if done {
		return nil, nil
	}
	if gone, err := h.namespaceLost(ctx, tenant, namespace); err != nil || gone {
		return nil, err // nothing left to drop, nor any right to
	}
	cs, meta, err := h.actor(tenant)
	if err != nil {
		return nil, err
	}
	match := legacyName(name)
	var dropped []string
	for next := ""; ; {
		names, cont, err := h.legacyNames(ctx, cs, namespace, name, next)
		if err != nil {
			return dropped, err
		}
		for _, n := range names {
			if !match.MatchString(n) {
				continue // labelled like a record, named otherwise: not Helm's, not ours to delete
			}
			err := meta.Resource(records.SecretsResource).Namespace(namespace).Delete(ctx, n, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return dropped, fmt.Errorf("deleting the Helm record %s/%s: %w", namespace, n, err)
			}
			dropped = append(dropped, n)
		}
		if next = cont; next == "" {
			break
		}
	}
	slices.Sort(dropped)
	h.noLegacy(tenant, namespace, name)
	return dropped, nil
}

// legacyNames lists a page of the names of the Secrets in namespace
// labelled as records of release name. The labels are anyone's there: a
// tenant can give many Secrets 1.5 MB of labels each, so the list asks
// the API server for a table of names only (includeObject=None), never
// for the objects or their metadata.
func legacyNames(ctx context.Context, cs kubernetes.Interface, namespace, name, next string) (names []string, cont string, err error) {
	sel := labels.SelectorFromSet(labels.Set{"owner": "helm", "name": name}).String()
	req := cs.CoreV1().RESTClient().Get().Namespace(namespace).Resource("secrets").
		Param("labelSelector", sel).Param("limit", strconv.Itoa(legacyPage)).
		Param("includeObject", "None").SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if next != "" {
		req = req.Param("continue", next)
	}
	raw, err := req.DoRaw(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("listing the Helm records of release %s in namespace %s: %w", name, namespace, err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		return nil, "", fmt.Errorf("listing the Helm records of release %s in namespace %s: %w", name, namespace, err)
	}
	col := slices.IndexFunc(table.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Name == "Name" })
	if col < 0 {
		return nil, "", fmt.Errorf("listing the Helm records of release %s in namespace %s: the table has no Name column", name, namespace)
	}
	for _, row := range table.Rows {
		if col < len(row.Cells) {
			if n, ok := row.Cells[col].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names, table.Continue, nil
}

// noLegacy notes that a release has no records in its namespace for
// dropLegacy to look for: they were deleted, or this process installed
// the release with its records in the storage namespace from the start.
func (h *HelmClient) noLegacy(tenant, namespace, name string) {
	h.mu.Lock()
	h.migrated[releaseRef(tenant, namespace, name)] = true
	h.mu.Unlock()
}

// handBack moves a release's records from the storage namespace into the
// release namespace, for a Tenant that is orphaned: its owners may manage
// the release with Helm from then on. Only the controller's own records
// are read; a Secret of the same key in the release namespace is
// overwritten, never read. It returns the revisions moved.
func (h *HelmClient) handBack(tenant, namespace, name string) ([]int, error) {
	if gone, err := h.namespaceLost(context.Background(), tenant, namespace); err != nil || gone {
		return nil, err // no namespace to hand them back to
	}
	to, err := h.legacy(tenant, namespace)
	if err != nil {
		return nil, err
	}
	from := h.storage(tenant, namespace)
	src, err := from.Query(map[string]string{"name": name, "owner": "helm"})
	if errors.Is(err, driver.ErrReleaseNotFound) || len(src) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the records of release %s: %w", name, err)
	}
	slices.SortFunc(src, func(a, b *release.Release) int { return a.Version - b.Version })
	var moved []int
	for _, rel := range src {
		key := releaseKey(name, rel.Version)
		err := to.Create(key, rel)
		if errors.Is(err, driver.ErrReleaseExists) {
			err = to.Update(key, rel)
		}
		if err != nil {
			return moved, fmt.Errorf("handing the records of release %s back to namespace %s: writing %s: %w", name, namespace, key, err)
		}
		if _, err := from.Delete(key); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			return moved, fmt.Errorf("handing the records of release %s back to namespace %s: deleting the stored %s: %w", name, namespace, key, err)
		}
		moved = append(moved, rel.Version)
	}
	h.mu.Lock()
	delete(h.migrated, releaseRef(tenant, namespace, name))
	h.mu.Unlock()
	return moved, nil
}
