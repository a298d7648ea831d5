package v1alpha1

import "time"

// KindManifest is the kind of a bundle's manifest.
const KindManifest = "WatchDoctorBundle"

// Manifest describes a bundle written by collect: which API server
// instances were read, how, and what each fetch returned.
type Manifest struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	CreatedAt  time.Time  `json:"createdAt"`
	Tool       string     `json:"tool"`
	Server     string     `json:"server"`
	Context    string     `json:"context,omitempty"`
	Instances  []Instance `json:"instances"`
	// Notes carry what the collector had to say (fallbacks, mixing).
	Notes []string `json:"notes,omitempty"`
	// AuditLogs are the audit logs collect was given (--audit-log), each
	// kept as its watch requests alone.
	AuditLogs []AuditLogCopy `json:"auditLogs,omitempty"`
	// Coverage is how many of the live instances collect read; analyze
	// reports it as the run's.
	Coverage *InstanceCoverage `json:"coverage,omitempty"`
}

// AuditLogCopy is the watch requests of an audit log, kept in a bundle.
type AuditLogCopy struct {
	// Source is the log as given to collect.
	Source string `json:"source"`
	// File is the copy, relative to the bundle's root; empty for a log
	// without a watch request (nothing to keep).
	File string `json:"file"`
	// Watches counts the watch requests kept; Lines the lines read.
	Watches int `json:"watches"`
	Lines   int `json:"lines"`
}

// Instance is one API server instance.
type Instance struct {
	Name string `json:"name"`
	// Address is the host:port the fetches were pinned to; empty when the
	// kubeconfig host (a load balancer) was used.
	Address string `json:"address,omitempty"`
	Pinned  bool   `json:"pinned"`
	// Version is the instance's gitVersion from /version.
	Version string   `json:"version,omitempty"`
	Samples []Sample `json:"samples"`
	Error   string   `json:"error,omitempty"`
	// Cost is what the collect run cost this instance (the reports of
	// analyze show it as APIServer.Cost).
	Cost *ServerCost `json:"cost,omitempty"`
	// Trace is the execution trace taken between the samples; its File is
	// relative to the instance's directory (<instance>/trace.out).
	Trace *FetchInfo `json:"trace,omitempty"`
	// Evidence says what was to tell stuck from slow between the samples,
	// and why (see APIServer.Evidence).
	Evidence string `json:"evidence,omitempty"`
	// Incomplete says why what was read of the instance cannot decide
	// its watches: its execution trace, the evidence chosen, was set
	// aside with no goroutine dump in its place. Each is the report's
	// Incomplete, in the run and in analyze of the bundle alike.
	Incomplete []string `json:"incomplete,omitempty"`
}

// Sample is one round of fetches from one instance.
type Sample struct {
	// Dir is the sample's directory, relative to the manifest.
	Dir        string      `json:"dir"`
	CapturedAt time.Time   `json:"capturedAt"`
	Fetches    []FetchInfo `json:"fetches"`
	// Mixed says why the sample's fetches may come from different API
	// server processes (read through a load balancer); empty when not.
	Mixed string `json:"mixed,omitempty"`
	// Withheld says what a debug=2 dump would have cost when it was not
	// taken for the pause budget ("a dump would stop this server for
	// about 1.2 s"); empty when it was taken or not needed.
	Withheld string `json:"withheld,omitempty"`
	// Notes say what the collector decided (no dump needed, and why).
	Notes []string `json:"notes,omitempty"`
	// ProfileStatus is the HTTP status /debug/pprof answered when it
	// refused the goroutine profiles: 404 (the API server runs with
	// --profiling=false) or 403 (RBAC); 0 when they were served or not
	// asked for.
	ProfileStatus int `json:"profileStatus,omitempty"`
}

// FetchInfo is one fetch of a sample.
type FetchInfo struct {
	Kind FileKind `json:"kind"`
	Path string   `json:"path"`
	// File is the file written, relative to the sample directory; empty
	// when the fetch failed.
	File      string    `json:"file,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	// ServerDate is the response's Date header: the server's clock.
	ServerDate *time.Time `json:"serverDate,omitempty"`
	Duration   string     `json:"duration"`
	Bytes      int64      `json:"bytes"`
	Error      string     `json:"error,omitempty"`
	// ProcessStartTime is process_start_time_seconds read from /metrics,
	// to tell whether fetches reached the same process.
	ProcessStartTime float64 `json:"processStartTime,omitempty"`
}

// FileKind is what a file (or any input) holds.
type FileKind string

// Input kinds.
const (
	FileGoroutineDebug2  FileKind = "goroutine-debug2"
	FileGoroutineDebug1  FileKind = "goroutine-debug1"
	FileGoroutineProfile FileKind = "goroutine-protobuf"
	FileAPFRequests      FileKind = "apf-requests"
	FileAPFLevels        FileKind = "apf-priority-levels"
	FileMetrics          FileKind = "metrics"
	FileVersion          FileKind = "version"
	FileCapturedAt       FileKind = "captured-at"
	FileManifest         FileKind = "manifest"
	// FileTrace is a Go execution trace, /debug/pprof/trace?seconds=N
	// (trace.out in a bundle, beside its samples).
	FileTrace FileKind = "trace"
	// FileAuditLog is an API server audit log's watch requests, as collect
	// keeps them (audit-logs/ in a bundle, beside the instances).
	FileAuditLog FileKind = "audit-log"
)
