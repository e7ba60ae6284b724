package publish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// target is a connection to the registry publish pushes to.
type target struct {
	Host      string // host[:port]
	Path      string // repository prefix, may be empty
	PlainHTTP bool
	Transport http.RoundTripper
	Auth      authn.Authenticator // nil: the Docker keychain
	Username  string
	Password  string
}

// parseRegistry splits HOST[:PORT][/PATH].
func parseRegistry(s string) (host, prefix string, err error) {
	s = strings.TrimPrefix(s, "oci://")
	if strings.Contains(s, "://") {
		return "", "", fmt.Errorf("--registry %q: give HOST[:PORT]/PATH without a URL scheme (use --insecure for plain HTTP)", s)
	}
	host, prefix, _ = strings.Cut(strings.TrimSuffix(s, "/"), "/")
	if host == "" {
		return "", "", errors.New("--registry is required: HOST[:PORT]/PATH, like registry.example.com/operators")
	}
	if _, err := name.NewRepository(strings.TrimSuffix(host+"/"+prefix, "/")+"/x", name.StrictValidation); err != nil {
		return "", "", fmt.Errorf("--registry %q is not a valid registry and path: %w", s, err)
	}
	return host, prefix, nil
}

// connect checks that the registry answers and accepts the credentials. It
// picks HTTPS, or plain HTTP when allowed (--insecure, or a loopback host,
// as Docker does), and turns the usual failures into clear errors.
func connect(ctx context.Context, opts Options) (*target, error) {
	host, prefix, err := parseRegistry(opts.Registry)
	if err != nil {
		return nil, err
	}
	t := &target{Host: host, Path: prefix, Username: opts.Username, Password: opts.Password}
	if opts.Username != "" {
		t.Auth = authn.FromConfig(authn.AuthConfig{Username: opts.Username, Password: opts.Password})
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.Insecure} //nolint:gosec // --insecure asks for it
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s holds no PEM certificate", opts.CAFile)
		}
		tlsConfig.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConfig
	t.Transport = tr

	probe := func(scheme string) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+host+"/v2/", nil)
		if err != nil {
			return nil, err
		}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	_, err = probe("https")
	if err != nil && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		if !opts.Insecure && !isLoopback(host) {
			return nil, fmt.Errorf("registry %s serves plain HTTP, not HTTPS: pass --insecure to publish over plain HTTP", host)
		}
		t.PlainHTTP = true
		_, err = probe("http")
	}
	if err != nil {
		return nil, registryError(host, "", err)
	}
	// Authenticate the way pushes will: a failure here stops publish
	// before anything is pushed.
	reg, err := name.NewRegistry(host, t.nameOptions()...)
	if err != nil {
		return nil, err
	}
	auth := t.Auth
	if auth == nil {
		if auth, err = authn.DefaultKeychain.Resolve(reg); err != nil {
			return nil, fmt.Errorf("reading registry credentials for %s: %w", host, err)
		}
	}
	repo := reg.Repo(strings.TrimSuffix(prefix+"/probe", "/"))
	rt, err := transport.NewWithContext(ctx, reg, auth, tr, []string{repo.Scope(transport.PushScope)})
	if err != nil {
		return nil, t.registryError(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, reg.Scheme()+"://"+host+"/v2/", nil)
	if err != nil {
		return nil, err
	}
	if t.PlainHTTP {
		req.URL.Scheme = "http"
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return nil, t.registryError(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, t.registryError(&transport.Error{StatusCode: resp.StatusCode})
	}
	return t, nil
}

func (t *target) nameOptions() []name.Option {
	if t.PlainHTTP {
		return []name.Option{name.Insecure, name.StrictValidation}
	}
	return []name.Option{name.StrictValidation}
}

func (t *target) remoteOptions(ctx context.Context) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(t.Transport), remote.WithUserAgent("opctl")}
	if t.Auth != nil {
		opts = append(opts, remote.WithAuth(t.Auth))
	} else {
		opts = append(opts, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	}
	return opts
}

// Repo returns the full repository name for a short name.
func (t *target) Repo(short string) string {
	if t.Path == "" {
		return t.Host + "/" + short
	}
	return t.Host + "/" + t.Path + "/" + short
}

// head returns the descriptor tagged ref, or nil when the tag is absent.
func (t *target) head(ctx context.Context, ref name.Reference) (*v1.Descriptor, error) {
	d, err := remote.Head(ref, t.remoteOptions(ctx)...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, t.registryError(err)
	}
	return d, nil
}

func (t *target) registryError(err error) error {
	return registryError(t.Host, t.Username, err)
}

// registryError explains the usual registry failures and what to do.
func registryError(host, user string, err error) error {
	var (
		unknownCA *x509.UnknownAuthorityError
		certErr   *tls.CertificateVerificationError
		hostErr   x509.HostnameError
		terr      *transport.Error
		opErr     *net.OpError
		dnsErr    *net.DNSError
	)
	switch {
	case errors.As(err, &unknownCA), errors.As(err, &certErr), errors.As(err, &hostErr):
		return fmt.Errorf("registry %s presents a TLS certificate this machine does not trust: pass --ca-file with the CA that signed it (or --insecure to skip verification): %w", host, err)
	case errors.As(err, &terr) && (terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden):
		if user == "" {
			return fmt.Errorf("registry %s requires credentials (HTTP %d): pass --username and --password-stdin, or log in with `docker login`", host, terr.StatusCode)
		}
		return fmt.Errorf("registry %s rejected the credentials of user %q (HTTP %d): check --username and the password given on stdin", host, user, terr.StatusCode)
	case errors.As(err, &dnsErr), errors.As(err, &opErr), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("registry %s is unreachable: check --registry and that the registry is up: %w", host, err)
	}
	return fmt.Errorf("registry %s: %w", host, err)
}

func isLoopback(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
