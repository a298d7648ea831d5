package diagnosis

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// A watch waiting for its cache is a warning under a minute, critical
// from a minute; either way it takes part in matching, standing for the
// watcher not yet created.
func TestJudgeCacheWaits(t *testing.T) {
	d := &watches.Dump{CacheWaits: []watches.CacheWait{
		{Handler: api.Handler{GoroutineID: 50, State: "select", ConnGoroutineID: 5}},
		{Handler: api.Handler{GoroutineID: 60, State: "select", WaitMinutes: 3}, APFGoroutineID: 61},
	}}
	prior := &api.Finding{Type: api.StuckInitialEvents}
	fs, toMatch := judgeCacheWaits("s", d, []*api.Finding{prior}, []api.Watcher{{GoroutineID: 1}})
	type row struct {
		Type     api.FindingType
		Severity api.Severity
		IDs      []int64
		Blocked  bool
	}
	var got []row
	for _, f := range fs {
		got = append(got, row{f.Type, f.Severity, f.GoroutineIDs, f.BlockedMinutes != nil})
	}
	want := []row{
		{api.StuckInitialEvents, "", nil, false},
		{api.WaitingForWatchCache, api.SeverityWarning, []int64{50}, false},
		{api.WaitingForWatchCache, api.SeverityCritical, []int64{60, 61}, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(toMatch) != 3 || toMatch[1].Phase != api.PhaseWaitingForCache || toMatch[2].GoroutineID != 60 || toMatch[2].APFGoroutineID != 61 {
		t.Errorf("watchers to match = %+v", toMatch)
	}
	if !strings.Contains(fs[1].Message, "waiting under a minute") || !strings.Contains(fs[2].Message, "waiting for at least 3 minutes") {
		t.Errorf("messages %q, %q", fs[1].Message, fs[2].Message)
	}
}

func TestCacheWaitAdvice(t *testing.T) {
	r := &api.Report{Findings: []api.Finding{
		{Type: api.WaitingForWatchCache, APIServer: "b"}, {Type: api.StuckInitialEvents, APIServer: "c"},
		{Type: api.WaitingForWatchCache, APIServer: "a"}, {Type: api.WaitingForWatchCache, APIServer: "b"},
	}}
	got := cacheWaitAdvice(r)
	if len(got) != 2 || !strings.HasPrefix(got[0], "a: 1 watch request(s) wait for a watch cache") || !strings.HasPrefix(got[1], "b: 2 watch request(s)") {
		t.Errorf("advice = %q, want one line per server, by name", got)
	}
	if got := cacheWaitAdvice(&api.Report{}); len(got) != 0 {
		t.Errorf("no cache wait: advice %q", got)
	}
}
