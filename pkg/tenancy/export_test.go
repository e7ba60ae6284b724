package tenancy

import (
	"context"
	"time"

	helmrelease "opctl.dev/opctl/pkg/tenancy/internal/helmrelease"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
)

// For the external tests and benchmarks.
var (
	QuotaCounted  = quotaCounted
	RolledOut     = helmrelease.RolledOut
	DecodeRelease = func(data string) (*release.Release, error) { return records.DecodeRecord([]byte(data)) }
	EncodeRelease = func(rel *release.Release) (string, error) {
		b, err := records.EncodeRecord(rel)
		return string(b), err
	}
	ReleaseValues = releaseValues
	CachedKinds   = cachedKinds
)

// RecordStore is the controller's store of release records, for the
// external tests: records talks to the API server for the records, index
// for the metadata informer.
type RecordStore struct{ s *records.Store }

func NewRecordStore(cfg, index *rest.Config, namespace string) (*RecordStore, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(index)
	if err != nil {
		return nil, err
	}
	s := records.NewStore(cs.CoreV1().Secrets(namespace), namespace)
	s.WithIndex(mc)
	return &RecordStore{s}, nil
}

func (r *RecordStore) Start(ctx context.Context) error { return r.s.Start(ctx) }

// Indexed reports whether the index shows every write of this process to
// tenant's releases in namespace.
func (r *RecordStore) Indexed(tenant, namespace string) bool { return r.s.Indexed(tenant, namespace) }

func (r *RecordStore) Driver(tenant, namespace string) driver.Driver {
	return &records.Driver{Store: r.s, Tenant: tenant, Namespace: namespace, Log: func(string, ...any) {}}
}

// Latest is the newest and the newest deployed revision of name, as a
// reconcile reads them.
func Latest(d driver.Driver, name string) (cur, deployed *release.Release, err error) {
	cfg := &action.Configuration{Releases: storage.Init(d)}
	return helmrelease.LastAndDeployed(cfg, name)
}

// ExpiringWebhookCerts is the data of a webhook certificates Secret whose
// certificates expire in a day.
func ExpiringWebhookCerts(ns string, deployments ...string) (map[string][]byte, error) {
	w, err := registryv1.IssueWebhookCerts(time.Now().Add(-registryv1.WebhookCertLifetime+24*time.Hour), ns, deployments)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{"ca.crt": w.CACert, "ca.key": w.CAKey}
	for d, p := range w.Serving {
		data[d+".crt"], data[d+".key"] = p.Cert, p.Key
	}
	return data, nil
}

// CertsSecretName is the Secret of a release's webhook certificates.
var CertsSecretName = certsSecretName

// EncodeReleaseAt encodes a record at a gzip level, for comparing levels.
func EncodeReleaseAt(rel *release.Release, level int) ([]byte, error) {
	return records.EncodeRecordAt(rel, level)
}

// RecordSummaries reads a record's summary the way a reconcile does, and
// by inflating and scanning the whole record: the reference.
var RecordSummaries = map[string]func([]byte) (*release.Release, error){
	"summary": records.DecodeRecordSummary,
	"whole record": func(data []byte) (*release.Release, error) {
		b, err := records.RecordJSON(data)
		if err != nil {
			return nil, err
		}
		return records.SummaryOf(b)
	},
}
