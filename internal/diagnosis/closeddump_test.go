package diagnosis

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The goroutine dump's full buffers: watchers past their initial phase
// sending an event to a full result buffer, from the last sample with a
// dump (debug=2: parked ones; a profile: those in the send), said beside
// the closures; a replaying watcher, or one streaming and not sending, is
// not counted.
func TestFullBuffers(t *testing.T) {
	at := t0.Add(time.Minute)
	debug2 := &watches.Dump{Watchers: []api.Watcher{
		{Phase: api.PhaseStreaming, InSend: true, Blocked: true},
		{Phase: api.PhaseStreaming, InSend: true, Blocked: true},
		{Phase: api.PhaseStreaming, InSend: true},
		{Phase: api.PhaseInitial, InSend: true, Blocked: true},
		{Phase: api.PhaseStreaming},
	}}
	profile := &watches.Dump{PhaseCounts: []api.PhaseCount{
		{Phase: api.PhaseStreaming, InSend: true, Count: 3},
		{Phase: api.PhaseInitial, InSend: true, Count: 5},
		{Phase: api.PhaseStreaming, Count: 9},
	}}
	quiet := &watches.Dump{Watchers: []api.Watcher{{Phase: api.PhaseInitial, InSend: true, Blocked: true}}}
	tests := []struct {
		name    string
		samples []watches.Sample
		want    string
	}{
		{"debug=2, the last sample with a dump", []watches.Sample{{Dump: quiet}, {CapturedAt: at, Dump: debug2}, {CapturedAt: at.Add(time.Minute)}},
			"the goroutine dump at 10:01:00: 2 cacheWatcher goroutine(s) past their initial phase blocked in sendWatchCacheEvent (parked), sending an event to a full result buffer: such a watcher reads no input meanwhile, its input buffer fills next, and the cacher closes it (the dump does not say of which resource)"},
		{"a profile, no time", []watches.Sample{{Dump: profile}},
			"the last goroutine dump: 3 cacheWatcher goroutine(s) past their initial phase in sendWatchCacheEvent, sending an event to a full result buffer: such a watcher reads no input meanwhile, its input buffer fills next, and the cacher closes it (the dump does not say of which resource)"},
		{"only replaying watchers sending", []watches.Sample{{Dump: debug2}, {Dump: quiet}}, ""},
		{"no dump", []watches.Sample{{CapturedAt: at}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fullBuffers(tt.samples)); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}

	// Beside the closures of a resource, in the finding's evidence.
	a, b := closedSample(at, 0, 0), closedSample(at.Add(time.Minute), 2, 0)
	b.Dump = debug2
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{a, b}}}, Options{})
	for _, f := range r.Findings {
		if f.Type == api.WatchClosedByServer && !slices.Contains(f.Evidence, fullBuffers([]watches.Sample{b})) {
			t.Errorf("the closures' evidence lacks the dump's full buffers: %q", f.Evidence)
		}
	}
	if got := closedVerdicts(r); len(got) != 1 {
		t.Errorf("verdicts %+v, want one", got)
	}
}
