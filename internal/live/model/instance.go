package model

import (
	"net/url"

	"k8s.io/client-go/rest"
)

// Instance is one API server to read from.
type Instance struct {
	// Name is how reports refer to it: its address, or the kubeconfig
	// host when it could not be pinned.
	Name string `json:"name"`
	// Address is host:port; requests go to it directly, with the TLS
	// server name of the kubeconfig host.
	Address string `json:"address,omitempty"`
	// Pinned is false when requests go through the kubeconfig host (a
	// load balancer may spread them over several processes).
	Pinned bool `json:"pinned"`
	// Lease names the identity lease of the process reached through the
	// kubeconfig host, when its /metrics says which (identity.go).
	Lease string `json:"lease,omitempty"`
}

// PinnedConfig returns cfg aimed at inst: same credentials, the instance's
// address, and TLS verification against the kubeconfig host's name.
func PinnedConfig(cfg *rest.Config, inst Instance) (*rest.Config, error) {
	c := rest.CopyConfig(cfg)
	if !inst.Pinned {
		return c, nil
	}
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		u = &url.URL{Scheme: "https"}
	}
	if c.TLSClientConfig.ServerName == "" && u.Hostname() != "" {
		c.TLSClientConfig.ServerName = u.Hostname()
	}
	scheme := u.Scheme
	if scheme == "" {
		scheme = "https"
	}
	c.Host = (&url.URL{Scheme: scheme, Host: inst.Address}).String()
	return c, nil
}
