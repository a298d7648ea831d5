package report

import (
	"bytes"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestReportSections: printReport lays out a report's sections in order:
// the phase table of a server decided without a debug=2 dump, the summary,
// the priority levels holding seats, then advice, warnings and what is
// incomplete; under NoHeaders, the findings' rows alone.
func TestReportSections(t *testing.T) {
	limit := 10.0
	r := &api.Report{
		APIServers:     []api.APIServer{{Name: "a", DumpFormat: "debug=1", PhaseCounts: []api.PhaseCount{{Phase: "initial", InSend: true, Count: 3}}}},
		Findings:       []api.Finding{{Type: api.SlowInitialEvents, Severity: api.SeverityWarning, APIServer: "a", Phase: "initial", GoroutineIDs: []int64{7}}},
		PriorityLevels: []api.PriorityLevel{{APIServer: "a", Name: "workload-low", StuckSeats: 2, LimitSeats: &limit}},
		Advice:         []string{"restart it"},
		Warnings:       []string{"something skipped"},
		Incomplete:     []string{"a partial dump"},
		Instances:      &api.InstanceCoverage{Read: 1, Live: 2, Source: api.LiveFromLeases, NotReached: []string{"cp-\x1b[31mb"}},
	}
	var b bytes.Buffer
	if err := Print(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	last := -1
	for _, want := range []string{
		"FINDING", "SlowInitialEvents",
		"a: watchers by phase (a debug=1 dump cannot tell stuck from slow)\nPHASE",
		"Summary: ",
		// The coverage under the summary, a server's bytes escaped.
		"\n  Instances: 1 of 2 instances read (identity leases); not reached: cp-\\x1b[31mb\n",
		"PRIORITY LEVEL", "workload-low",
		"\nAdvice:\n", "restart it",
		"\nWarnings:\n", "something skipped",
		"\nIncomplete (not decided, not healthy):\n", "a partial dump",
	} {
		at := strings.Index(out, want)
		if at <= last {
			t.Fatalf("%q missing or out of order (at %d, after %d):\n%s", want, at, last, out)
		}
		last = at
	}
	b.Reset()
	if err := Print(&b, r, Options{NoHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "\n"); got != 1 || !strings.HasPrefix(b.String(), "SlowInitialEvents") {
		t.Errorf("NoHeaders: %q, want the finding's row alone", b.String())
	}
}
