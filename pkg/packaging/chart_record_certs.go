package packaging

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// A chart that generates its webhook certificate (genCA, genSignedCert)
// makes RSA keys each time it renders, most of what rendering it costs.
// The record estimate renders such templates with certificates of the
// same size made of fixed, incompressible text instead: the record holds
// them base64-encoded, so their bytes count as the real ones would, and
// the measure of a record close to the cap (helmRecordBytes) runs the
// real generation.

// certCalls are the template actions that generate a certificate.
var certCalls = regexp.MustCompile(`\b(genCA|genSignedCert)\s[^}]*`)

// standInCerts is the dict expression the i-th certCalls match of a
// template becomes: a certificate and key as long as genCA's (a CA) or
// genSignedCert's (a serving certificate) with RSA 2048, each of its own
// text, since the real ones share nothing a compressor could find.
func standInCerts(call string, i int) string {
	certBytes := 822 // genCA's DER, for a CA named as the charts name it
	if call == "genSignedCert" {
		certBytes = 939
	}
	seed := fmt.Sprintf("%s-%d-", call, i)
	return `dict "Cert" "` + standInPEM("CERTIFICATE", seed, certBytes) + `" "Key" "` + standInPEM("RSA PRIVATE KEY", seed, 1190) + `"`
}

// standInPEM is a PEM block of kind holding n fixed bytes, from seed, that do not
// compress, as an RSA key or certificate does not.
func standInPEM(kind, seed string, n int) string {
	der := make([]byte, 0, n+sha256.Size)
	for i := uint64(0); len(der) < n; i++ {
		sum := sha256.Sum256(binary.BigEndian.AppendUint64([]byte(seed+kind), i))
		der = append(der, sum[:]...)
	}
	body := base64.StdEncoding.EncodeToString(der[:n])
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\\n")
	for len(body) > 64 {
		b.WriteString(body[:64] + "\\n")
		body = body[64:]
	}
	b.WriteString(body + "\\n-----END " + kind + "-----\\n")
	return b.String()
}

// withStandInCerts returns templates with certificate generation replaced
// by standInCerts; the others as they are.
func withStandInCerts(templates []*chart.File) []*chart.File {
	out := make([]*chart.File, len(templates))
	n := 0
	for i, t := range templates {
		out[i] = t
		if certCalls.Match(t.Data) {
			data := certCalls.ReplaceAllFunc(t.Data, func(m []byte) []byte {
				n++
				return []byte(standInCerts(string(certCalls.FindSubmatch(m)[1]), n))
			})
			out[i] = &chart.File{Name: t.Name, Data: data}
		}
	}
	return out
}
