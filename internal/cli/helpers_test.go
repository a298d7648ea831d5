package cli

import (
	"encoding/json"
	"testing"
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
