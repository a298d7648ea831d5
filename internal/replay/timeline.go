package replay

import (
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// timelineRecorder collects one column's series (Options.Timeline). Used by
// the driver's goroutine only.
type timelineRecorder struct {
	s api.TimelineSeries
}

func newTimelineRecorder(column string, runs []*clientRun) *timelineRecorder {
	tr := &timelineRecorder{s: api.TimelineSeries{Column: column}}
	for _, r := range runs {
		tr.s.Clients = append(tr.s.Clients, api.TimelineClient{Name: r.name, Steps: []api.TimelineStep{}})
	}
	return tr
}

// record samples the column at t, after the tick's reads, changes and
// observe (so Alive is valid): the watcher goroutines blocked sending, as
// the backend counts them, and each client's state (a step when it
// changed). Seats are counted as observeEnd counts seat-seconds.
func (tr *timelineRecorder) record(b Backend, t time.Duration, runs []*clientRun) {
	tr.s.Blocked = append(tr.s.Blocked, b.BlockedNow())
	for i, r := range runs {
		if r.h == nil {
			continue
		}
		st := api.TimelineStep{AtSeconds: t.Seconds()}
		st.Watcher = r.h.end != endWatchError && r.h.w != nil && b.Alive(r.h.w)
		_, inWrite := r.h.writeState()
		st.HandlerBlockedInWrite = inWrite && !r.h.done()
		now := Epoch().Add(t)
		init := r.initializedAt.Load()
		ended := r.h.done() && !r.h.endAt.After(now)
		if !ended && (init == 0 || init > now.UnixNano()) {
			st.Seats = float64(r.spec.Seats)
		}
		st.Told = r.h.clientTold()
		tc := &tr.s.Clients[i]
		prev := api.TimelineStep{}
		if n := len(tc.Steps); n > 0 {
			prev = tc.Steps[n-1]
		}
		prev.AtSeconds = st.AtSeconds
		if st != prev {
			tc.Steps = append(tc.Steps, st)
		}
	}
}
