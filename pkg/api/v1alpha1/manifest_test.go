package v1alpha1

import (
	"testing"
	"time"
)

// TestManifestJSON: the manifest.json of a bundle, with its field names
// and file kinds, reads back as written.
func TestManifestJSON(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 24, 32, 0, time.UTC)
	m := Manifest{APIVersion: GroupVersion, Kind: KindManifest, CreatedAt: at, Tool: "kubectl-watch_doctor dev", Server: "https://10.0.0.1:6443",
		Instances: []Instance{{Name: "10.0.0.1:6443", Pinned: true, Samples: []Sample{{Dir: "10.0.0.1_6443/sample-1", CapturedAt: at,
			Fetches: []FetchInfo{{Kind: FileGoroutineDebug2, Path: "/debug/pprof/goroutine?debug=2", File: "goroutine-debug2.txt", StartedAt: at, ServerDate: &at, Duration: "1s", Bytes: 10}}}}}},
		Notes: []string{"n"}}
	roundTrip(t, m, `{"apiVersion":"watchdoctor/v1alpha1","kind":"WatchDoctorBundle","createdAt":"2026-11-29T10:24:32Z","tool":"kubectl-watch_doctor dev","server":"https://10.0.0.1:6443",`+
		`"instances":[{"name":"10.0.0.1:6443","pinned":true,"samples":[{"dir":"10.0.0.1_6443/sample-1","capturedAt":"2026-11-29T10:24:32Z",`+
		`"fetches":[{"kind":"goroutine-debug2","path":"/debug/pprof/goroutine?debug=2","file":"goroutine-debug2.txt","startedAt":"2026-11-29T10:24:32Z","serverDate":"2026-11-29T10:24:32Z","duration":"1s","bytes":10}]}]}],"notes":["n"]}`)
}

// TestFileKindsAreDistinct: every kind names one input, as bundles and
// manifests write it.
func TestFileKindsAreDistinct(t *testing.T) {
	seen := map[FileKind]bool{}
	for _, k := range []FileKind{FileGoroutineDebug2, FileGoroutineDebug1, FileGoroutineProfile, FileAPFRequests, FileAPFLevels,
		FileMetrics, FileVersion, FileCapturedAt, FileManifest, FileTrace, FileAuditLog} {
		if k == "" || seen[k] {
			t.Errorf("file kind %q empty or repeated", k)
		}
		seen[k] = true
	}
}
