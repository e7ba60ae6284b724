package testcluster

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for server authenticating with cred.
func writeKubeconfig(path, server string, caPEM []byte, user string, cred credential) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testcluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cred.certPEM, ClientKeyData: cred.keyPEM}
	cfg.Contexts["testcluster"] = &clientcmdapi.Context{Cluster: "testcluster", AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = "testcluster"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
