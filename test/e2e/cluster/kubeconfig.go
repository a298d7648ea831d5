package cluster

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for one user: the cluster's server and
// CA (embedded, so the file stands alone), a bearer token, and a current context named after the user.
func writeKubeconfig(path, server string, caPEM []byte, userName, token string) error {
	const clusterName = "watch-doctor-e2e"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caPEM,
	}
	cfg.AuthInfos[userName] = &clientcmdapi.AuthInfo{Token: token}
	ctxName := userName + "@" + clusterName
	cfg.Contexts[ctxName] = &clientcmdapi.Context{
		Cluster:   clusterName,
		AuthInfo:  userName,
		Namespace: "default",
	}
	cfg.CurrentContext = ctxName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig for %q: %w", userName, err)
	}
	return nil
}

func kubeconfigPath(dir, userName string) string {
	return filepath.Join(dir, "kubeconfig-"+userName)
}
