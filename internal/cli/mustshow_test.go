package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestDiagnoseListsUnreachedLeasesBounded (issue 35, P11): behind an L4
// balancer with two processes and 5,000 identity leases live, the
// Instances line and its Incomplete twin were 115 KB each. They say how
// many were not reached and name the first 10, and that the leases far
// outnumber the processes reached.
func TestDiagnoseListsUnreachedLeasesBounded(t *testing.T) {
	t.Parallel()
	renewed := time.Date(2026, 11, 29, 10, 23, 0, 0, time.UTC)
	var leases []fakeapiserver.Lease
	for i := range 5000 {
		leases = append(leases, fakeapiserver.Lease{Name: fmt.Sprintf("apiserver-%04d", i), Hostname: fmt.Sprintf("cp-%04d", i), Renewed: renewed, DurationSeconds: 3600})
	}
	var servers []*fakeapiserver.Server
	for i := range 2 {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.ProcessStart = []float64{1764410000 + float64(i)}
		s.Endpoints = []string{"127.0.0.1:1", "127.0.0.1:2"}
		s.Leases = leases
		servers = append(servers, s)
	}
	lb := fakeapiserver.StartBalancer(t, fakeapiserver.RoundRobin(2), servers...)
	kc := fakeapiserver.KubeconfigAt(t, servers[0], lb.URL(), fakeapiserver.TokenAdmin)
	code, table, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1")
	if code != ExitFindings {
		t.Errorf("exit %d, want %d (the fixture's stuck watches, and incomplete)\nstderr:\n%s", code, ExitFindings, errOut)
	}
	want := "2 of 5000 instances read (identity leases) through the load balancer after 64 connection(s); not reached: 4998 of the 5000 live (the first 10: cp-0000, cp-0001, cp-0002, cp-0003, cp-0004, cp-0005, cp-0006, cp-0007, cp-0008, cp-0009); the 5000 identity leases far outnumber the 2 processes reached after 64 connection(s): they may not all be live API server processes"
	for _, line := range []string{"  Instances: " + want + "\n", "  - " + want + ": a stuck watch on an instance not read is in no finding\n"} {
		if !strings.Contains(table, line) {
			t.Errorf("the table lacks %q", line)
		}
	}
	for _, line := range strings.Split(table, "\n") {
		if len(line) > 2000 {
			t.Errorf("a line of %d bytes: %.200s...", len(line), line)
		}
	}
}

// TestDiagnoseYAMLKeepsTheValueJSONKeeps (issue 35, P12): -o yaml stored
// the text \x1b where -o json stored ESC. A server whose APF dump names a
// user with ESC, BEL and U+202E: both outputs of the same run, decoded,
// hold the same values, the user's name with its raw characters in both,
// and neither output holds one of them raw.
func TestDiagnoseYAMLKeepsTheValueJSONKeeps(t *testing.T) {
	t.Parallel()
	const user = "slow\x1b]0;owned\x07\u202erem"
	s := fakeapiserver.Start(t, fakeapiserver.EditCapture(t, golden.Fixture("t2"), func(name string, b []byte) []byte {
		if name == "apf-requests.txt" {
			return []byte(strings.ReplaceAll(string(b), "slow-informer", user))
		}
		return b
	}))
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	outs := map[string]any{}
	for _, form := range []string{"json", "yaml"} {
		code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1", "-o", form)
		if code != ExitFindings {
			t.Fatalf("-o %s: exit %d\nstderr:\n%s", form, code, errOut)
		}
		if strings.ContainsAny(out, "\x1b\x07\u202e") {
			t.Errorf("-o %s holds a raw ESC, BEL or U+202E", form)
		}
		var doc map[string]any
		var err error
		if form == "json" {
			err = json.Unmarshal([]byte(out), &doc)
		} else {
			err = yaml.Unmarshal([]byte(out), &doc)
		}
		if err != nil {
			t.Fatalf("-o %s: %v", form, err)
		}
		// Each run has its own times and costs: the findings compare.
		outs[form] = doc["findings"]
	}
	if diff := cmp.Diff(outs["json"], outs["yaml"]); diff != "" {
		t.Errorf("the findings of -o json and -o yaml differ (-json +yaml):\n%s", diff)
	}
	if !holds(outs["yaml"], user) {
		t.Errorf("no value of -o yaml is the user %q, raw characters kept:\n%v", user, outs["yaml"])
	}
}

// holds reports whether v, a decoded document, holds the string want.
func holds(v any, want string) bool {
	switch v := v.(type) {
	case string:
		return v == want
	case []any:
		for _, e := range v {
			if holds(e, want) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if holds(e, want) {
				return true
			}
		}
	}
	return false
}
