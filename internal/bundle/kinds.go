package bundle

import api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"

// KindInfo is what the tool knows of one kind of input: where it comes
// from, what collect names its file, and how its content is recognised.
type KindInfo struct {
	Kind api.FileKind
	// FileName is the name collect gives the file (the fixture layout).
	FileName string
	// Path is the API server path, with its query, the input is fetched
	// from; "" for a kind the tool writes itself.
	Path string
	// Detect says how Open recognises the content (detect in detect.go;
	// TestKindsTable holds the two together on the real captures).
	Detect string
	// GoroutineRank orders the goroutine kinds of one capture, the richest
	// first: a capture keeps the goroutine input of the highest rank. 0 for
	// a kind that is no goroutine dump.
	GoroutineRank int
}

// Kinds is the one table of the input kinds. Every fact about a kind
// (its file name, its path, its rank) is read from here.
var Kinds = []KindInfo{
	{api.FileGoroutineDebug2, "goroutine-debug2.txt", "/debug/pprof/goroutine?debug=2", `starts "goroutine " and a digit`, 3},
	{api.FileGoroutineDebug1, "goroutine-debug1.txt", "/debug/pprof/goroutine?debug=1", `starts "goroutine profile: total "`, 1},
	{api.FileGoroutineProfile, "goroutine.pb.gz", "/debug/pprof/goroutine", "binary (after gzip): the only binary kind; the profile parser decides", 2},
	{api.FileAPFRequests, "apf-requests.txt", "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1", `first line starts "PriorityLevelName," and names FlowSchemaName`, 0},
	{api.FileAPFLevels, "apf-priority-levels.txt", "/debug/api_priority_and_fairness/dump_priority_levels", `first line starts "PriorityLevelName," and names ActiveQueues`, 0},
	{api.FileMetrics, "metrics.txt", "/metrics", `"# HELP " or "# TYPE ", or a first line shaped like a sample of a metric kube-apiserver exposes`, 0},
	{api.FileVersion, "version.json", "/version", `a JSON object with "gitVersion"`, 0},
	{api.FileCapturedAt, "captured-at.txt", "", "one RFC 3339 time alone", 0},
	{api.FileManifest, ManifestName, "", `a JSON object of kind ` + api.KindManifest, 0},
	{api.FileTrace, "trace.out", "/debug/pprof/trace", "not detected: read from its name in a bundle", 0},
	{api.FileAuditLog, AuditDir + "/<log>.jsonl", "", "not detected among captures: read from its place in a bundle (" + AuditDir + "/) or given as an audit log; pkg/audit recognises its format by content", 0},
}

// Kind returns the table's row of k, and false for a kind it lacks.
func Kind(k api.FileKind) (KindInfo, bool) {
	for _, ki := range Kinds {
		if ki.Kind == k {
			return ki, true
		}
	}
	return KindInfo{}, false
}

// FileName is the name collect gives a kind's file (the fixture layout);
// "" for a kind of no file.
func FileName(k api.FileKind) string {
	ki, _ := Kind(k)
	return ki.FileName
}

// Path is the path, with its query, a kind is fetched from; "" for a kind
// that is not fetched.
func Path(k api.FileKind) string {
	ki, _ := Kind(k)
	return ki.Path
}

func isGoroutineKind(k api.FileKind) bool { return rank(k) > 0 }

func rank(k api.FileKind) int {
	ki, _ := Kind(k)
	return ki.GoroutineRank
}
