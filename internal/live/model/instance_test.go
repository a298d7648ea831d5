package model

import (
	"testing"

	"k8s.io/client-go/rest"
)

func TestPinnedConfigVerifiesTheKubeconfigHostName(t *testing.T) {
	t.Parallel()
	base := &rest.Config{Host: "https://api.example.com:6443", BearerToken: "t"}
	c, err := PinnedConfig(base, Instance{Name: "10.0.0.7:6443", Address: "10.0.0.7:6443", Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "https://10.0.0.7:6443" || c.TLSClientConfig.ServerName != "api.example.com" || c.BearerToken != "t" {
		t.Errorf("pinned config: host %q, server name %q, token %q", c.Host, c.TLSClientConfig.ServerName, c.BearerToken)
	}
	if base.Host != "https://api.example.com:6443" || base.TLSClientConfig.ServerName != "" {
		t.Error("pinnedConfig changed the base config")
	}
	un, _ := PinnedConfig(base, Instance{Name: "api.example.com:6443"})
	if un.Host != base.Host {
		t.Errorf("an unpinned instance must keep the kubeconfig host, got %q", un.Host)
	}
}
