package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWatcherGoroutineIDs: the goroutines a watch keeps alive, the
// watcher first; a handler or APF goroutine not found is not listed.
func TestWatcherGoroutineIDs(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    Watcher
		want []int64
	}{
		{"all three", Watcher{GoroutineID: 10, Handler: &Handler{GoroutineID: 11}, APFGoroutineID: 12}, []int64{10, 11, 12}},
		{"no handler", Watcher{GoroutineID: 10, APFGoroutineID: 12}, []int64{10, 12}},
		{"watcher alone", Watcher{GoroutineID: 10}, []int64{10}},
	} {
		if diff := cmp.Diff(tc.want, tc.w.GoroutineIDs()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestWatcherJSON(t *testing.T) {
	roundTrip(t, Watcher{GoroutineID: 10, Phase: PhaseInitial, InSend: true, Blocked: true, State: "select", WaitMinutes: 3,
		Handler: &Handler{GoroutineID: 11, State: "select", ConnInDump: true}, APFGoroutineID: 12},
		`{"goroutineID":10,"phase":"initial","inSend":true,"blocked":true,"state":"select","waitMinutes":3,"handler":{"goroutineID":11,"state":"select","block":"","connInDump":true},"apfGoroutineID":12}`)
	roundTrip(t, PhaseCount{Phase: PhaseStreaming, Count: 4}, `{"phase":"streaming","inSend":false,"count":4}`)
}
