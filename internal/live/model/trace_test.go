package model

import (
	"testing"
	"time"
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
