package v1alpha1

// Closures is what a WatchClosedByServer finding counts: the watches of
// one resource the server closed between two samples of one process, and
// what the client tied to them did about it.
type Closures struct {
	// Group and Resource name the resource whose watchers were closed.
	Group    string `json:"group,omitempty"`
	Resource string `json:"resource"`
	// WindowSeconds is the time between the two samples compared.
	WindowSeconds float64 `json:"windowSeconds"`
	// Closed is the growth of apiserver_terminated_watchers_total of the
	// resource over the window: every watcher of it the cacher closed,
	// whoever held it. When several clients are tied (Candidates), it is
	// theirs together.
	Closed int `json:"closed"`
	// Reasons split Closed by the counter's reason label, where the
	// server's counter has one; absent otherwise.
	Reasons map[string]int `json:"reasons,omitempty"`
	// Returns counts the client's new watch requests seen in the window:
	// the same user and path with a new start time at a later sample
	// (APF dump_requests). A lower bound: a watch that came and went
	// between two samples is not seen.
	Returns int `json:"returns"`
	// ReplaySeats is the APF seats the newest return's initial replay
	// holds (its row's initial seats); 0 when not known.
	ReplaySeats int `json:"replaySeats,omitempty"`
	// ReplayObjects is about how many objects one replay sends, where
	// /metrics says: the growth of apiserver_init_events_total over the
	// window per closure (a replay cut by the close still counts its whole
	// snapshot); an estimate, exact when every replay of the resource in
	// the window was a closed one. 0 when not known.
	ReplayObjects int64 `json:"replayObjects,omitempty"`
	// ReplayBytes is about how many bytes one replay sends: ReplayObjects
	// times the mean size of the resource's watch events
	// (apiserver_watch_events_sizes); 0 when not known.
	ReplayBytes int64 `json:"replayBytes,omitempty"`
	// CaughtUp is false when the evidence says the client never caught
	// up in the window (replaying again at the last sample, or no replay
	// of its resource ended); absent when it cannot tell.
	CaughtUp *bool `json:"caughtUp,omitempty"`
}
