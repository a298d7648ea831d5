package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
)

type finding struct {
	Type         string  `json:"type"`
	Severity     string  `json:"severity"`
	GoroutineIDs []int64 `json:"goroutineIDs"`
	Client       *struct {
		User      string `json:"user"`
		Namespace string `json:"namespace"`
		Resource  string `json:"resource"`
		Match     string `json:"match"`
	} `json:"client"`
	Candidates []struct {
		User string `json:"user"`
	} `json:"candidates"`
	UndecidedReason string `json:"undecidedReason"`
}

// names returns the client's user, or its candidates' users.
func (f finding) names() []string {
	if f.Client != nil && f.Client.User != "" {
		return []string{f.Client.User}
	}
	var us []string
	for _, c := range f.Candidates {
		us = append(us, c.User)
	}
	return us
}

type reportDoc struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Findings   []finding `json:"findings"`
	Summary    struct {
		StuckWatches int `json:"stuckWatches"`
		SlowWatches  int `json:"slowWatches"`
		Goroutines   int `json:"goroutines"`
	} `json:"summary"`
}

func decodeReport(t *testing.T, s string) reportDoc {
	t.Helper()
	var r reportDoc
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("decoding report: %v\n%s", err, s)
	}
	if r.APIVersion != "watchdoctor/v1alpha1" || r.Kind != "Report" {
		t.Fatalf("apiVersion/kind = %q/%q", r.APIVersion, r.Kind)
	}
	return r
}

// writeKubeconfig writes a kubeconfig with one context per name -> server
// URL (TLS verification off: the servers are the test's own).
func writeKubeconfig(t *testing.T, servers map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "- name: %s\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n", n, servers[n])
	}
	b.WriteString("users:\n- name: u\n  user: {token: " + fakeapiserver.TokenAdmin + "}\ncontexts:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "- name: %s\n  context: {cluster: %s, user: u}\n", n, n)
	}
	fmt.Fprintf(&b, "current-context: %s\n", names[0])
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
