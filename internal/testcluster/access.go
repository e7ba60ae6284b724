package testcluster

import (
	"context"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// As returns a configuration that impersonates user in groups. The admin
// identity may impersonate anyone, so RBAC decides as it would for user.
func (c *Cluster) As(user string, groups ...string) *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return cfg
}

// AsServiceAccount returns a configuration that impersonates the
// ServiceAccount namespace/name with the groups its token would carry.
func (c *Cluster) AsServiceAccount(namespace, name string) *rest.Config {
	return c.As(fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name),
		"system:serviceaccounts", "system:serviceaccounts:"+namespace, "system:authenticated")
}

// ServiceAccountTokenConfig returns a configuration that authenticates with
// a real token issued for the ServiceAccount through the TokenRequest API.
func (c *Cluster) ServiceAccountTokenConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	return c.ServiceAccountTokenConfigFor(ctx, namespace, name, time.Hour)
}

// ServiceAccountTokenConfigFor is ServiceAccountTokenConfig with a token
// valid for ttl.
func (c *Cluster) ServiceAccountTokenConfigFor(ctx context.Context, namespace, name string, ttl time.Duration) (*rest.Config, error) {
	expiry := int64(ttl.Seconds())
	tr, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting token for %s/%s: %w", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(c.Config)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// WriteTokenKubeconfig writes a kubeconfig at path that reaches the
// cluster with cfg's bearer token only, for processes started by tests.
func (c *Cluster) WriteTokenKubeconfig(path string, cfg *rest.Config) error {
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		b, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return err
		}
		ca = b
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: ca}
	kc.AuthInfos["token"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "token"}
	kc.CurrentContext = "test"
	return clientcmd.WriteToFile(*kc, path)
}
