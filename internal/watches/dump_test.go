package watches

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func frames(fns ...string) []stacks.Frame {
	out := make([]stacks.Frame, len(fns))
	for i, fn := range fns {
		out[i] = stacks.Frame{Func: fn}
	}
	return out
}

// An aggregated profile is counted per phase and send state; handlers
// blocked writing are counted; nothing is judged, and the note says why.
func TestFromAggregated(t *testing.T) {
	a := &stacks.Aggregated{Total: 20, Stacks: []stacks.Stack{
		{Count: 3, Frames: frames(fnSendWatchCacheEvent, fnProcessInterval)},
		{Count: 2, Frames: frames("runtime.gopark", fnSendWatchCacheEvent, fnProcess, fnProcessInterval)},
		{Count: 4, Frames: frames("runtime.gopark", fnProcess, fnProcessInterval)},
		{Count: 5, Frames: frames(fnWriteDataFromH, fnHandleHTTP)},
		{Count: 6, Frames: frames("main.main")},
	}, SkippedLines: 2, Skipped: []stacks.Skipped{{Line: 7, Reason: "no count"}}}
	d := FromAggregated(a, FormatDebug1)
	want := []api.PhaseCount{
		{Phase: api.PhaseInitial, InSend: true, Count: 3},
		{Phase: api.PhaseStreaming, InSend: true, Count: 2}, // the runtime's frames above do not count
		{Phase: api.PhaseStreaming, Count: 4},
	}
	if diff := cmp.Diff(want, d.PhaseCounts); diff != "" {
		t.Errorf("phase counts (-want +got):\n%s", diff)
	}
	if d.ClientNotReading != 5 || d.Goroutines != 20 || !d.Aggregated() || d.HasParentIDs || !d.APIServer {
		t.Errorf("client not reading %d, goroutines %d, aggregated %v, parent ids %v, apiserver %v", d.ClientNotReading, d.Goroutines, d.Aggregated(), d.HasParentIDs, d.APIServer)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "a debug=1 dump carries no goroutine ids") {
		t.Errorf("notes = %q", d.Notes)
	}
	if diff := cmp.Diff([]string{"2 unknown lines skipped in the goroutine dump (first at line 7: no count)"}, d.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if d.TopFuncs[0] != (FuncCount{Func: "main.main", Count: 6}) {
		t.Errorf("top funcs = %+v, want main.main first", d.TopFuncs)
	}
}

func TestDumpAggregated(t *testing.T) {
	for format, want := range map[string]bool{FormatDebug2: false, FormatDebug1: true, FormatProtobuf: true} {
		if got := (&Dump{Format: format}).Aggregated(); got != want {
			t.Errorf("%s: Aggregated() = %v, want %v", format, got, want)
		}
	}
}

func TestInSend(t *testing.T) {
	counts := []api.PhaseCount{
		{Phase: api.PhaseInitial, InSend: true, Count: 3},
		{Phase: api.PhaseInitial, Count: 4},
		{Phase: api.PhaseStreaming, InSend: true, Count: 2},
		{Phase: api.PhaseStreaming, Count: 9},
	}
	if initial, other := InSend(counts); initial != 3 || other != 2 {
		t.Errorf("InSend = %d initial, %d other; want 3, 2", initial, other)
	}
	if initial, other := InSend(nil); initial != 0 || other != 0 {
		t.Errorf("InSend(nil) = %d, %d; want 0, 0", initial, other)
	}
}
