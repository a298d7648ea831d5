package model

import (
	"errors"
	"testing"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestTraceConfigDefaults(t *testing.T) {
	t.Parallel()
	var zero TraceConfig
	if zero.EvidenceOrDefault() != EvidenceAuto || zero.BudgetOrDefault() != DefaultTraceBudget ||
		zero.ProbeOrDefault() != defaultTraceProbe || zero.MarginOrDefault() != DefaultTraceMargin {
		t.Errorf("zero TraceConfig: evidence %q, budget %d, probe %s, margin %s; want the defaults",
			zero.EvidenceOrDefault(), zero.BudgetOrDefault(), zero.ProbeOrDefault(), zero.MarginOrDefault())
	}
	set := TraceConfig{Evidence: EvidenceDump, Budget: 1 << 20, Probe: 3 * time.Second, Margin: time.Minute}
	if set.EvidenceOrDefault() != EvidenceDump || set.BudgetOrDefault() != 1<<20 ||
		set.ProbeOrDefault() != 3*time.Second || set.MarginOrDefault() != time.Minute {
		t.Errorf("set TraceConfig %+v: a default replaced a set value", set)
	}
}

func TestMib1(t *testing.T) {
	t.Parallel()
	if got := Mib1(3 << 19); got != "1.5 MiB" {
		t.Errorf("Mib1(1.5 MiB) = %q", got)
	}
}

// A trace set aside with no debug=2 dump after it leaves the instance
// undecided; a dump of a later sample (forced) decides instead.
func TestAsideIncomplete(t *testing.T) {
	t.Parallel()
	aside := &TraceResult{SetAside: true, Err: errors.New("api: the execution trace was set aside")}
	dump := api.Sample{Fetches: []api.FetchInfo{{Kind: api.FileMetrics}, {Kind: api.FileGoroutineDebug2}}}
	failed := api.Sample{Fetches: []api.FetchInfo{{Kind: api.FileGoroutineDebug2, Error: "refused"}}}
	for _, tc := range []struct {
		name string
		ir   InstanceResult
		want string
	}{
		{"no trace", InstanceResult{}, ""},
		{"a trace kept", InstanceResult{Trace: &TraceResult{}, Samples: []api.Sample{{}, {}}}, ""},
		{"set aside", InstanceResult{Trace: aside, Samples: []api.Sample{dump, {}}}, "api: the execution trace was set aside; no goroutine dump took its place, so the watches it was chosen to decide are not decided"},
		{"set aside, a dump failed", InstanceResult{Trace: aside, Samples: []api.Sample{{}, failed}}, "api: the execution trace was set aside; no goroutine dump took its place, so the watches it was chosen to decide are not decided"},
		{"set aside, dumped after", InstanceResult{Trace: aside, Samples: []api.Sample{{}, dump}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ir.AsideIncomplete(); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
