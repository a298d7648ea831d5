package fakeapiserver

import (
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Kubeconfig writes a kubeconfig for server with token and returns its path.
func Kubeconfig(t testing.TB, server *Server, token string) string {
	t.Helper()
	return KubeconfigAt(t, server, server.URL, token)
}

// KubeconfigAt writes a kubeconfig for url (a Balancer's in front of
// server) trusting server's certificate, with token, and returns its path.
func KubeconfigAt(t testing.TB, server *Server, url, token string) string {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	cert := server.Certificate()
	pemBytes := pemEncode(cert.Raw)
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: user
  user:
    token: %s
contexts:
- name: fake
  context: {cluster: fake, user: user}
current-context: fake
`, url, ca, token)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func pemEncode(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// RESTConfig is a client configuration for s with token, read from a
// kubeconfig written by Kubeconfig, as a user's would be.
func RESTConfig(t testing.TB, s *Server, token string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", Kubeconfig(t, s, token))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// RESTConfigAt is RESTConfig for url (a Balancer's in front of s).
func RESTConfigAt(t testing.TB, s *Server, url, token string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", KubeconfigAt(t, s, url, token))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
