package imagebuild

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// DefaultCABundle is the PEM of the NSS trust store's unconstrained roots
// as pinned by the golang.org/x/crypto/x509roots/fallback module in
// go.sum: never the host's. Roots NSS constrains (distrusted after a
// date) are left out, as a PEM file cannot carry the constraint.
func DefaultCABundle() []byte {
	var buf bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return buf.Bytes()
}

// CheckCABundle refuses a file with no certificate or anything but
// certificates in it.
func CheckCABundle(name string, b []byte) error {
	n := 0
	for rest := b; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return fmt.Errorf("%s: text after certificate %d is not PEM: give a PEM file of CA certificates", name, n)
			}
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("%s: block %d is a %s, not a CERTIFICATE: give CA certificates only", name, n+1, block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("%s: certificate %d: %w", name, n+1, err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s holds no PEM certificate: give a CA bundle like /etc/ssl/certs/ca-certificates.crt of a pinned source", name)
	}
	return nil
}

// Digest is sha256:<hex> of b.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}
