package testregistry

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"opctl.dev/opctl/internal/testcluster"
)

// Binary is where Debian's docker-registry package installs the registry.
const Binary = "/usr/bin/docker-registry"

// Registry is a running registry.
type Registry struct {
	// Host is host:port on loopback.
	Host string
	// CAFile is the PEM CA that signed the TLS certificate (TLS only).
	CAFile string
	// Username and Password are the htpasswd credentials (auth only).
	Username, Password string
}

// Start runs a registry without auth, over plain HTTP, until the test ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	return start(t, false)
}

// StartSecure runs a registry with TLS (a certificate from a CA generated
// for the test) and htpasswd basic auth, until the test ends.
func StartSecure(t testing.TB) *Registry {
	t.Helper()
	return start(t, true)
}

func start(t testing.TB, secure bool) *Registry {
	if _, err := os.Stat(Binary); err != nil {
		if os.Getenv(testcluster.EnvSkip) == "1" {
			t.Skipf("%s=1 (make test-unit) and %s is not installed; make test installs it and runs this", testcluster.EnvSkip, Binary)
		}
		t.Fatalf("%s is missing: run `make test` (it installs Debian's docker-registry) or `apt-get install docker-registry`", Binary)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := &Registry{Host: l.Addr().String()}
	l.Close()
	dir := t.TempDir()
	config := fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, filepath.Join(dir, "data"), reg.Host)
	client := http.DefaultClient
	scheme := "http"
	if secure {
		var pool *x509.CertPool
		reg.CAFile, pool = writeTLS(t, dir)
		reg.Username, reg.Password = "publisher", "s3cret-"+filepath.Base(dir)
		hash, err := bcrypt.GenerateFromPassword([]byte(reg.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(reg.Username+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		config += fmt.Sprintf(`  tls:
    certificate: %s
    key: %s
auth:
  htpasswd:
    realm: opctl-test
    path: %s
`, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), htpasswd)
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		scheme = "https"
	}
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Binary, "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logFile.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+reg.Host+"/v2/", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			// 401 is a live registry asking for credentials.
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return reg
			}
		}
		select {
		case <-ctx.Done():
			b, _ := os.ReadFile(filepath.Join(dir, "registry.log"))
			t.Fatalf("registry on %s did not start: %v\n%s", reg.Host, err, b)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// writeTLS writes ca.crt, tls.crt and tls.key (for 127.0.0.1) into dir.
func writeTLS(t testing.TB, dir string) (string, *x509.CertPool) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "opctl test registry CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.crt", "CERTIFICATE", caDER)
	write("tls.crt", "CERTIFICATE", der)
	write("tls.key", "EC PRIVATE KEY", keyDER)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return filepath.Join(dir, "ca.crt"), pool
}
