package records

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

var SecretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// recordType is the Secret type of a Helm release record.
const recordType = "helm.sh/release.v1"

// recordCompression is the gzip level of a record: Helm writes at
// BestCompression, which costs several times the CPU for a record a few
// percent smaller (BenchmarkRecordEncoding). Helm reads any level.
const recordCompression = gzip.DefaultCompression

// recordDriver is the Helm storage driver of one tenant's releases in one
// namespace. The records are Helm's own (Secrets of type
// helm.sh/release.v1 with Helm's labels and encoding, readable by the
// helm CLI), named by recordName in the storage namespace and labelled
// for the tenant: records of other tenants are invisible, also when a
// name collides. Updates and deletes carry the resourceVersion the record
// was read at, so a stale read fails instead of overwriting.
type Driver struct {
	Store             *Store
	Tenant, Namespace string
	Log               func(string, ...any)
}

var _ driver.Driver = (*Driver)(nil)

func (d *Driver) Name() string { return driver.SecretsDriverName }

func (d *Driver) own(sec *corev1.Secret) bool {
	return sec.Labels[LabelRecordTenant] == d.Tenant && sec.Labels[LabelRecordNamespace] == d.Namespace
}

// Get reads one record; like Helm's driver, it returns the release's
// labels without Helm's own.
func (d *Driver) Get(key string) (*release.Release, error) {
	sec, err := d.fetch(recordName(d.Tenant, d.Namespace, key), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	rel, err := d.Decode(sec)
	if err != nil {
		return nil, err
	}
	for _, k := range driver.GetSystemLabels() {
		delete(rel.Labels, k)
	}
	return rel, nil
}

// fetch reads the record name of this tenant; opts.ResourceVersion lets
// the API server answer from its watch cache.
func (d *Driver) fetch(name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	sec, err := d.Store.secrets.Get(context.Background(), name, opts)
	if apierrors.IsNotFound(err) {
		return nil, driver.ErrReleaseNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get: failed to get %q: %w", name, err)
	}
	if !d.own(sec) {
		return nil, fmt.Errorf("release record %s/%s belongs to tenant %q namespace %q, not %s/%s: refusing to read it",
			sec.Namespace, sec.Name, sec.Labels[LabelRecordTenant], sec.Labels[LabelRecordNamespace], d.Tenant, d.Namespace)
	}
	return sec, nil
}

// Decode returns the release of a record, with its labels but the
// tenant's, and notes the resourceVersion it was read at.
func (d *Driver) Decode(sec *corev1.Secret) (*release.Release, error) {
	rel, err := DecodeRecord(sec.Data["release"])
	if err != nil {
		return nil, fmt.Errorf("decoding release record %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	d.Store.read(sec.Name, sec.ResourceVersion)
	rel.Labels = maps.Clone(sec.Labels)
	delete(rel.Labels, LabelRecordTenant)
	delete(rel.Labels, LabelRecordNamespace)
	return rel, nil
}

func (d *Driver) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	all, err := d.Query(map[string]string{"owner": "helm"})
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	var out []*release.Release
	for _, r := range all {
		if filter(r) {
			out = append(out, r)
		}
	}
	return out, err
}

// Query returns the records whose labels hold every one of query: a GET
// of each match in the index (and this process's writes it does not show
// yet), or a LIST while the index has not synced.
func (d *Driver) Query(query map[string]string) ([]*release.Release, error) {
	for _, v := range query {
		if errs := validation.IsValidLabelValue(v); len(errs) != 0 {
			return nil, fmt.Errorf("invalid label value: %q: %v", v, errs)
		}
	}
	var out []*release.Release
	sel := labels.SelectorFromSet(ownedBy(d.Tenant, d.Namespace, query))
	if indexed, ok := d.Store.records(sel); ok {
		for _, m := range indexed {
			sec, err := d.fetch(m.GetName(), metav1.GetOptions{ResourceVersion: m.GetResourceVersion()})
			if errors.Is(err, driver.ErrReleaseNotFound) {
				continue // deleted since
			}
			if err != nil {
				return nil, err
			}
			if !sel.Matches(labels.Set(sec.Labels)) {
				continue // changed since
			}
			rel, err := d.Decode(sec)
			if err != nil {
				d.Log("query: %v", err)
				continue
			}
			out = append(out, rel)
		}
	} else {
		list, err := d.Store.secrets.List(context.Background(), metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return nil, fmt.Errorf("query: failed to query with labels: %w", err)
		}
		for i := range list.Items {
			rel, err := d.Decode(&list.Items[i])
			if err != nil {
				d.Log("query: %v", err)
				continue
			}
			out = append(out, rel)
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

func (d *Driver) Create(key string, rel *release.Release) error {
	sec, err := d.record(key, rel, "createdAt")
	if err != nil {
		return fmt.Errorf("create: failed to encode release %q: %w", rel.Name, err)
	}
	got, err := d.Store.secrets.Create(context.Background(), sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return driver.ErrReleaseExists
	}
	if err != nil {
		return fmt.Errorf("create: failed to create: %w", err)
	}
	d.Store.wrote(d.Tenant, d.Namespace, got.Name, got.ResourceVersion, got.Labels)
	return nil
}

func (d *Driver) Update(key string, rel *release.Release) error {
	sec, err := d.record(key, rel, "modifiedAt")
	if err != nil {
		return fmt.Errorf("update: failed to encode release %q: %w", rel.Name, err)
	}
	sec.ResourceVersion = d.Store.precondition(sec.Name)
	got, err := d.Store.secrets.Update(context.Background(), sec, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update: failed to update: %w", err)
	}
	d.Store.wrote(d.Tenant, d.Namespace, got.Name, got.ResourceVersion, got.Labels)
	return nil
}

func (d *Driver) Delete(key string) (*release.Release, error) {
	rel, err := d.Get(key) // checks that the record is this tenant's
	if err != nil {
		return nil, err
	}
	name := recordName(d.Tenant, d.Namespace, key)
	opts := metav1.DeleteOptions{}
	if rv := d.Store.precondition(name); rv != "" {
		opts.Preconditions = &metav1.Preconditions{ResourceVersion: ptr.To(rv)}
	}
	if err := d.Store.secrets.Delete(context.Background(), name, opts); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	d.Store.wrote(d.Tenant, d.Namespace, name, "", nil)
	return rel, nil
}

// record is the Secret of rel under key, as Helm's Secrets driver writes
// it, qualified for the tenant; stamp is the time label it sets.
func (d *Driver) record(key string, rel *release.Release, stamp string) (*corev1.Secret, error) {
	data, err := EncodeRecord(rel)
	if err != nil {
		return nil, err
	}
	l := maps.Clone(rel.Labels)
	if l == nil {
		l = map[string]string{}
	}
	l[stamp] = strconv.FormatInt(time.Now().Unix(), 10)
	l["name"], l["owner"] = rel.Name, "helm"
	l["status"], l["version"] = rel.Info.Status.String(), strconv.Itoa(rel.Version)
	l[LabelRecordTenant], l[LabelRecordNamespace] = d.Tenant, d.Namespace
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: recordName(d.Tenant, d.Namespace, key), Labels: l},
		Type:       recordType,
		Data:       map[string][]byte{"release": data},
	}, nil
}

// EncodeRecord is Helm's record encoding: base64 of gzipped JSON.
func EncodeRecord(rel *release.Release) ([]byte, error) {
	return EncodeRecordAt(rel, recordCompression)
}

func EncodeRecordAt(rel *release.Release, level int) ([]byte, error) {
	gz, err := gzippedRelease(rel, level)
	if err != nil {
		return nil, err
	}
	out := make([]byte, base64.StdEncoding.EncodedLen(len(gz)))
	base64.StdEncoding.Encode(out, gz)
	return out, nil
}

// DecodeRecord reads what encodeRecord or Helm wrote, also an
// uncompressed record of an old Helm.
func DecodeRecord(data []byte) (*release.Release, error) {
	b, err := RecordJSON(data)
	if err != nil {
		return nil, err
	}
	var rel release.Release
	if err := json.Unmarshal(b, &rel); err != nil {
		return nil, err
	}
	return &rel, nil
}

// RecordJSON is the JSON of a record's data.
func RecordJSON(data []byte) ([]byte, error) {
	b, err := unbase64(data)
	if err != nil {
		return nil, err
	}
	if isGzip(b) {
		if b, err = Gunzip(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// unbase64 decodes a record's data.
func unbase64(data []byte) ([]byte, error) {
	b := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(b, data)
	return b[:n], err
}

// isGzip reports whether b starts as a gzip stream does.
func isGzip(b []byte) bool {
	return len(b) > 3 && bytes.Equal(b[:3], []byte{0x1f, 0x8b, 0x08})
}

// latest returns the newest revision of release name and the newest
// deployed one, reading only those two records: the index's labels say
// which they are. Their charts hold the metadata only (a summary): they
// are for deciding, not for writing back. ok is false when the index cannot answer, or a record
// changed under it; the caller then reads the whole history.
func (d *Driver) latest(name string) (cur, deployed *release.Release, ok bool) {
	indexed, ok := d.Store.records(labels.SelectorFromSet(ownedBy(d.Tenant, d.Namespace, map[string]string{"name": name, "owner": "helm"})))
	if !ok {
		return nil, nil, false
	}
	var newest, newestDeployed metav1.Object
	version := func(m metav1.Object) int {
		if m == nil {
			return -1
		}
		v, err := strconv.Atoi(m.GetLabels()["version"])
		if err != nil {
			return -1
		}
		return v
	}
	for _, m := range indexed {
		if version(m) < 0 {
			return nil, nil, false
		}
		if version(m) > version(newest) {
			newest = m
		}
		if m.GetLabels()["status"] == release.StatusDeployed.String() && version(m) > version(newestDeployed) {
			newestDeployed = m
		}
	}
	read := func(m metav1.Object) (*release.Release, bool) {
		if m == nil {
			return nil, true
		}
		sec, err := d.fetch(m.GetName(), metav1.GetOptions{ResourceVersion: m.GetResourceVersion()})
		if err != nil || !maps.Equal(sec.Labels, m.GetLabels()) {
			return nil, false
		}
		rel, err := DecodeRecordSummary(sec.Data["release"])
		if err != nil {
			return nil, false
		}
		d.Store.read(sec.Name, sec.ResourceVersion)
		return rel, rel.Version == version(m) && rel.Name == name
	}
	if cur, ok = read(newest); !ok {
		return nil, nil, false
	}
	if newestDeployed == newest {
		return cur, cur, true
	}
	deployed, ok = read(newestDeployed)
	return cur, deployed, ok
}
