package v1alpha1

import (
	"fmt"
	"slices"
	"time"
)

// KindReport is the kind of the Report.
const KindReport = "Report"

// UndecidedReason says why an UndecidedInitialEvents finding was not
// decided.
type UndecidedReason string

// Undecided reasons.
const (
	// UndecidedProfilingDisabled: /debug/pprof answered 404: the API
	// server runs with --profiling=false, so no goroutine dump or trace
	// can be taken.
	UndecidedProfilingDisabled UndecidedReason = "ProfilingDisabled"
	// UndecidedProfilingForbidden: /debug/pprof answered 403: the user
	// lacks nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"].
	UndecidedProfilingForbidden UndecidedReason = "ProfilingForbidden"
	// UndecidedNoGoroutineDump: no goroutine dump or trace among the
	// inputs (or withheld for its pause), for no reason the server gave.
	UndecidedNoGoroutineDump UndecidedReason = "NoGoroutineDump"
	// UndecidedAggregatedProfile: only a debug=1 or protobuf profile,
	// which cannot tell stuck from slow.
	UndecidedAggregatedProfile UndecidedReason = "AggregatedProfile"
	// UndecidedPartialDump: its watcher may be in the missing part of a
	// partial goroutine dump.
	UndecidedPartialDump UndecidedReason = "PartialDump"
	// UndecidedNoRecognisedWatcher: the goroutine dump holds no
	// initial-phase watcher that explains it: the server's watcher loop
	// may have a shape this build does not recognise (a newer release).
	UndecidedNoRecognisedWatcher UndecidedReason = "NoRecognisedWatcher"
	// UndecidedMixedProcesses: the sample's fetches reached different API
	// server processes (an HTTP, L7, load balancer), so its goroutine
	// dump, APF dumps and /metrics may each be another process's: no
	// client, seats or verdict is taken from them.
	UndecidedMixedProcesses UndecidedReason = "MixedProcesses"
)

// DumpFormatAPF is APIServer.DumpFormat for a server decided from its APF
// dumps and /metrics alone: no goroutine dump or execution trace was read
// (profiling off, refused, or not captured), so no cacheWatcher was seen.
const DumpFormatAPF = "apf"

// Severity is how much a finding matters.
type Severity string

// Severities, ordered.
const (
	SeverityCritical Severity = "critical"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
)

// Rank orders severities: higher is worse; unknown (and "") is -1.
func (s Severity) Rank() int {
	switch s {
	case SeverityCritical:
		return 2
	case SeverityWarning:
		return 1
	case SeverityInfo:
		return 0
	}
	return -1
}

// Match is how sure the attribution of a watcher to a request is.
type Match string

// Match confidences.
const (
	// MatchExact: the evidence (ages, the handler's object type against
	// the request's group/resource, counts) forces the pair, and the APF
	// dump lists a request for every watcher.
	MatchExact Match = "exact"
	// MatchLikely: the evidence would force the pair, but the APF dump
	// may be missing requests. Never from goroutine-id order.
	MatchLikely Match = "likely"
	// MatchAmbiguous: several requests could be the watch's; Candidates
	// lists them (up to 10) and Client keeps what they share.
	MatchAmbiguous Match = "ambiguous"
)

// Report is the outcome of a diagnosis. Field names in JSON/YAML are a
// contract: apiVersion, kind, findings[] (type, severity, apiserver, phase,
// blockedMinutes, goroutineIDs, client{user, verb, path, namespace,
// resource, priorityLevel, flowSchema, seats, startTime, match},
// candidates[] when the match is ambiguous) and
// summary{stuckWatches, slowWatches, goroutines} do not change within
// watchdoctor/v1alpha1.
type Report struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	APIServers []APIServer `json:"apiservers"`
	Findings   []Finding   `json:"findings"`
	// Groups bucket the findings alike (a relist storm), as the
	// diagnosis found them; see FindingGroup. Absent when no
	// GroupAtLeast findings are alike.
	Groups []FindingGroup `json:"groups,omitempty"`
	// UnmatchedRequests are executing watch requests no watcher was
	// attributed to (nor listed as a candidate of one).
	UnmatchedRequests []Request `json:"unmatchedRequests,omitempty"`
	// UnmatchedWatchers are initial-phase watchers no executing request
	// fits.
	UnmatchedWatchers []UnmatchedWatcher `json:"unmatchedWatchers,omitempty"`
	PriorityLevels    []PriorityLevel    `json:"priorityLevels,omitempty"`
	Summary           Summary            `json:"summary"`
	Advice            []string           `json:"advice,omitempty"`
	// Warnings say what was skipped, degraded or could not be decided.
	Warnings []string `json:"warnings,omitempty"`
	// Errors are requests that failed during a live read (the report
	// covers what could be read).
	Errors []string `json:"errors,omitempty"`
	// Incomplete says why the findings do not cover every watch: a
	// partial goroutine dump, or watches not decided without a debug=2
	// dump. Empty when the report is a complete answer. Missing
	// goroutines are never counted healthy.
	Incomplete []string `json:"incomplete,omitempty"`
	// Instances is how many of the live API server instances a live run
	// read; nil for files read (analyze).
	Instances *InstanceCoverage `json:"instances,omitempty"`
}

// Coverage is how much of an API server's goroutines a partial dump held.
type Coverage struct {
	// Goroutines were read in full and decided.
	Goroutines int `json:"goroutines"`
	// Of is go_goroutines from /metrics; 0 when unknown.
	Of int `json:"of,omitempty"`
	// Reason says how the dump is known to be partial.
	Reason string `json:"reason"`
}

// Text is "N of M goroutines", or "N goroutines" when M is unknown.
func (c Coverage) Text() string {
	if c.Of > 0 {
		return fmt.Sprintf("%d of %d goroutines (go_goroutines)", c.Goroutines, c.Of)
	}
	return fmt.Sprintf("%d goroutines, of an unknown total", c.Goroutines)
}

// APIServer describes one API server instance and what was read of it.
type APIServer struct {
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	CapturedAt *time.Time `json:"capturedAt,omitempty"`
	Samples    int        `json:"samples"`
	DumpFormat string     `json:"dumpFormat,omitempty"`
	Goroutines int        `json:"goroutines,omitempty"`
	// ResidentMemoryBytes and the rest come from /metrics when given.
	ResidentMemoryBytes float64 `json:"residentMemoryBytes,omitempty"`
	Watchers            int     `json:"cacheWatchers"`
	InitialPhase        int     `json:"initialPhaseWatchers"`
	// PhaseCounts are given for aggregated dumps instead of findings.
	PhaseCounts []PhaseCount `json:"phaseCounts,omitempty"`
	// Coverage is set when the goroutine dump is partial.
	Coverage *Coverage `json:"coverage,omitempty"`
	// WatchersByResource is from apiserver_registered_watchers or
	// apiserver_longrunning_requests{verb="WATCH"} when metrics are given.
	WatchersByResource []ResourceCount `json:"watchersByResource,omitempty"`
	// Cost is what reading this API server cost it, when it was read live
	// (or a bundle recorded it).
	Cost *ServerCost `json:"cost,omitempty"`
	// Evidence says what told stuck from slow between the samples when
	// the server was read live (or a bundle recorded it): the debug=2
	// dumps, or an execution trace and why, with the window it proved.
	Evidence string   `json:"evidence,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// ServerCost is what one run's fetches cost one API server: the
// stop-the-world pauses they caused, from the growth of the runtime's
// go_sched_pauses_total_other_seconds histogram between the first and the
// last /metrics read of the run, and the bytes read.
type ServerCost struct {
	// PausesMeasured is false when the pause figures could not be read
	// (no histogram, a failed /metrics read, a restart): Note says why,
	// and Pauses, PauseSeconds and LargestPauseAtMostSeconds are 0.
	PausesMeasured bool `json:"pausesMeasured"`
	// Pauses is how many non-GC stop-the-world pauses the runtime counted
	// over the run; PauseSeconds their total.
	Pauses       uint64  `json:"pauses"`
	PauseSeconds float64 `json:"pauseSeconds"`
	// LargestPauseAtMostSeconds is the upper bound of the highest histogram
	// bucket that grew: the longest pause was at most this long (the
	// runtime's buckets are coarse). 0 when no pause was counted; +Inf is
	// written as -1.
	LargestPauseAtMostSeconds float64 `json:"largestPauseAtMostSeconds"`
	// StoppingSeconds is the part of PauseSeconds spent stopping the
	// world (go_sched_pauses_stopping_other_seconds): bringing every
	// running thread to a safe point, before the pause's own work. Most
	// of a long pause on a CPU-starved server is this. Absent when the
	// server does not export it.
	StoppingSeconds *float64 `json:"stoppingSeconds,omitempty"`
	// BytesRead is the sum of every response body read from the server.
	BytesRead int64 `json:"bytesRead"`
	// Note says what the figures do not cover, e.g. pauses of the server's
	// own or of other clients in the same window (the histogram is the
	// whole process's), or a /metrics read that failed.
	Note string `json:"note,omitempty"`
}

// ResourceCount is a count for one group/resource.
type ResourceCount struct {
	Group    string  `json:"group,omitempty"`
	Resource string  `json:"resource"`
	Count    float64 `json:"count"`
}

// Finding is one watch worth attention.
type Finding struct {
	Type      FindingType `json:"type"`
	Severity  Severity    `json:"severity"`
	APIServer string      `json:"apiserver"`
	Phase     Phase       `json:"phase"`
	// BlockedMinutes is the wait the Go runtime printed for the watcher
	// goroutine, in whole minutes; absent when unknown. The runtime counts
	// from the collection before the one that saw the goroutine blocked, so
	// it can overstate a fresh block by up to one GC interval (see
	// pkg/stacks Goroutine.WaitMinutes); two samples decide by the event being
	// sent.
	BlockedMinutes *int    `json:"blockedMinutes,omitempty"`
	GoroutineIDs   []int64 `json:"goroutineIDs"`
	// Client is absent when no request could be attributed.
	Client *Client `json:"client,omitempty"`
	// Candidates lists the requests that fit when the match is ambiguous.
	Candidates []Request `json:"candidates,omitempty"`
	Watcher    Watcher   `json:"watcher"`
	// Connection groups watches served over the same client connection.
	Connection int64  `json:"connection,omitempty"`
	Message    string `json:"message"`
	// Evidence says what the verdict and the match rest on.
	Evidence []string `json:"evidence,omitempty"`
	// UndecidedReason says why an UndecidedInitialEvents finding was
	// not decided; empty for the other types.
	UndecidedReason UndecidedReason `json:"undecidedReason,omitempty"`
	// Audit lists the audit log events that fit the finding's request
	// (see AuditEvent): one names its source address and user agent in
	// Client; several keep the ambiguity and Client names neither.
	Audit []AuditEvent `json:"audit,omitempty"`
	// Closures are what a WatchClosedByServer finding counts; absent for
	// the other types.
	Closures *Closures `json:"closures,omitempty"`
}

// CandidateUsers lists the users of the finding's candidates, each once, in
// the order listed.
func (f Finding) CandidateUsers() []string {
	var us []string
	for _, c := range f.Candidates {
		if !slices.Contains(us, c.User) {
			us = append(us, c.User)
		}
	}
	return us
}

// SeatsKnown reports whether the APF seats the finding's watch holds are
// known: attributed exact or likely, or ambiguous among candidates of one
// priority level that all hold the same seats.
func (f Finding) SeatsKnown() bool {
	c := f.Client
	return c != nil && c.Seats > 0 && (c.Match != MatchAmbiguous || c.PriorityLevel != "")
}

// Client is the request a watcher was attributed to.
type Client struct {
	User          string     `json:"user,omitempty"`
	Verb          string     `json:"verb,omitempty"`
	Path          string     `json:"path,omitempty"`
	Namespace     string     `json:"namespace,omitempty"`
	Resource      string     `json:"resource,omitempty"`
	APIVersion    string     `json:"apiVersion,omitempty"`
	PriorityLevel string     `json:"priorityLevel,omitempty"`
	FlowSchema    string     `json:"flowSchema,omitempty"`
	Seats         int        `json:"seats,omitempty"`
	StartTime     *time.Time `json:"startTime,omitempty"`
	Match         Match      `json:"match"`
	// SourceIPs and UserAgent come from the one audit log event that fits
	// the request (Finding.Audit); absent without one. The user agent is
	// the client's own word.
	SourceIPs []string `json:"sourceIPs,omitempty"`
	UserAgent string   `json:"userAgent,omitempty"`
	// Pods are the pods that held SourceIPs when a live run looked them
	// up (a pods list by status.podIP); absent offline, without source
	// addresses, or when the lookup was refused (the report's warnings
	// say why). More than one is ambiguous: pods on the host network
	// share their node's address, and any of them may hold the watch.
	Pods []Pod `json:"pods,omitempty"`
}

// Pod is a pod holding a client's source address.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// IP is the source address it was found by.
	IP string `json:"ip"`
	// Owner is the pod's controller, "Kind/name" (a ReplicaSet, a
	// StatefulSet, a DaemonSet, a Job); absent for a bare pod.
	Owner string `json:"owner,omitempty"`
	// HostNetwork is set for a pod on its node's network: the address
	// is its node's, shared with every such pod there.
	HostNetwork bool `json:"hostNetwork,omitempty"`
}

// AuditEvent is a watch request of an API server audit log that fits a
// finding's request: same user and path, verb watch, received within the
// join's tolerance of the request's APF start.
type AuditEvent struct {
	// Source is the log and line it was read from ("audit.log:12").
	Source                   string    `json:"source"`
	AuditID                  string    `json:"auditID,omitempty"`
	SourceIPs                []string  `json:"sourceIPs,omitempty"`
	UserAgent                string    `json:"userAgent,omitempty"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// Request is an executing watch request of the APF dump.
type Request struct {
	APIServer     string    `json:"apiserver"`
	User          string    `json:"user,omitempty"`
	Verb          string    `json:"verb"`
	Path          string    `json:"path,omitempty"`
	Namespace     string    `json:"namespace,omitempty"`
	Resource      string    `json:"resource,omitempty"`
	PriorityLevel string    `json:"priorityLevel"`
	FlowSchema    string    `json:"flowSchema"`
	Seats         int       `json:"seats"`
	StartTime     time.Time `json:"startTime"`
	// AgeSeconds is capture time minus StartTime; absent without a capture time.
	AgeSeconds *int `json:"ageSeconds,omitempty"`
	// SourceIPs, UserAgent and Pods are a candidate's own audit join, as
	// Client's: from the one audit log event that fits this request, and
	// the pods holding its addresses in a live run.
	SourceIPs []string `json:"sourceIPs,omitempty"`
	UserAgent string   `json:"userAgent,omitempty"`
	Pods      []Pod    `json:"pods,omitempty"`
}

// UnmatchedWatcher is an initial-phase watcher no request was attributed to.
type UnmatchedWatcher struct {
	APIServer   string `json:"apiserver"`
	GoroutineID int64  `json:"goroutineID"`
	State       string `json:"state"`
	WaitMinutes int    `json:"waitMinutes,omitempty"`
}

// PriorityLevel is the seats stuck watches hold in one APF priority level.
type PriorityLevel struct {
	APIServer string `json:"apiserver"`
	Name      string `json:"name"`
	// StuckSeats are held by StuckInitialEvents watches attributed to it.
	StuckSeats int `json:"stuckSeats"`
	// ExecutingSeats and LimitSeats come from metrics when given
	// (apiserver_flowcontrol_current_executing_seats,
	// apiserver_flowcontrol_nominal_limit_seats); absent otherwise.
	ExecutingSeats *float64 `json:"executingSeats,omitempty"`
	LimitSeats     *float64 `json:"limitSeats,omitempty"`
	// ExecutingRequests is from dump_priority_levels when given.
	ExecutingRequests *int `json:"executingRequests,omitempty"`
}

// Summary totals a report.
type Summary struct {
	StuckWatches     int `json:"stuckWatches"`
	SlowWatches      int `json:"slowWatches"`
	BlockedStreaming int `json:"blockedStreaming"`
	// UndecidedWatches are UndecidedInitialEvents findings.
	UndecidedWatches int `json:"undecidedWatches,omitempty"`
	// HeldAfterWatcherClosed counts handlers holding APF seats with no
	// watcher left (see the finding type).
	HeldAfterWatcherClosed int `json:"heldAfterWatcherClosed,omitempty"`
	// WaitingForWatchCache counts watch requests waiting for a watch
	// cache that is not ready (see the finding type).
	WaitingForWatchCache int `json:"waitingForWatchCache,omitempty"`
	// ClosedWatches counts WatchClosedByServer findings: clients (or
	// resources, when no client was tied) whose watches the server
	// closed.
	ClosedWatches int `json:"closedWatches,omitempty"`
	// Goroutines is the total over the API servers' last dumps.
	Goroutines int `json:"goroutines"`
	// StuckGoroutines are kept alive by stuck watches.
	StuckGoroutines int `json:"stuckGoroutines"`
	// StuckSeats are the seats of stuck watches attributed (exact or
	// likely) to a request; StuckUnattributed counts the stuck watches
	// whose seats are not known.
	StuckSeats        int `json:"stuckSeats"`
	StuckUnattributed int `json:"stuckUnattributed,omitempty"`
}

// MaxSeverity is the worst severity among the findings, "" when none.
func (r *Report) MaxSeverity() Severity {
	var best Severity
	for _, f := range r.Findings {
		if f.Severity.Rank() > best.Rank() {
			best = f.Severity
		}
	}
	return best
}
