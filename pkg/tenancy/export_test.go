package tenancy

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"time"

	"helm.sh/helm/v3/pkg/release"
)

// For the external tests and benchmarks.
var (
	QuotaCounted  = quotaCounted
	RolledOut     = rolledOut
	DecodeRelease = decodeRelease
	EncodeRelease = encodeRelease
	ReleaseValues = releaseValues
)

// decodeRelease reads a release record's data as Helm's Secrets driver
// writes it: base64 of gzipped JSON.
func decodeRelease(data string) (*release.Release, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b, 0x08}) {
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if b, err = io.ReadAll(r); err != nil {
			return nil, err
		}
	}
	var rel release.Release
	return &rel, json.Unmarshal(b, &rel)
}

// encodeRelease writes a release record's data as Helm does.
func encodeRelease(rel *release.Release) (string, error) {
	b, err := json.Marshal(rel)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(b); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// ExpiringWebhookCerts is the data of a webhook certificates Secret whose
// certificates expire in a day.
func ExpiringWebhookCerts(ns string, deployments ...string) (map[string][]byte, error) {
	w, err := issueWebhookCerts(time.Now().Add(-webhookCertLifetime+24*time.Hour), ns, deployments)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{"ca.crt": w.caCert, "ca.key": w.caKey}
	for d, p := range w.serving {
		data[d+".crt"], data[d+".key"] = p.cert, p.key
	}
	return data, nil
}

// CertsSecretName is the Secret of a release's webhook certificates.
var CertsSecretName = certsSecretName
