package metrics

// Report is what the metrics command shows: the watch health of every API
// server it read. One server that could not be read does not hide the
// others: its entry carries Err.
type Report struct {
	APIServers []APIServer
}

// APIServer is one API server's entry in a Report.
type APIServer struct {
	// Name identifies the server (its address, pod name or file).
	Name string
	// Snapshot is the (last) sample; nil when Err is set.
	Snapshot *Snapshot
	// Rates is set when two samples were taken.
	Rates *RateSnapshot
	// Err is why this server has no snapshot.
	Err error
}
