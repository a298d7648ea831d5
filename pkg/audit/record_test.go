package audit

import (
	"context"
	"strings"
	"testing"
)

// Hostile values in a record read as far as they are valid: a huge or
// fractional timeoutSeconds is none, a status code that is not a small
// integer none, names with control characters and U+202E kept as given
// (the report escapes them), a value nested 10,000 deep walked without
// recursion.
func TestHostileValues(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	in := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"h1","stage":"ResponseComplete","verb":"watch","requestURI":"/api/v1/pods?timeoutSeconds=99999999999999999999\u0026watch=true","user":{"username":"evil\u001b[2J\u202e"},"sourceIPs":["999.1.1.1","not-an-ip"],"userAgent":"ua\u0000","responseStatus":{"code":1e400},"deep":` + deep + `,"requestReceivedTimestamp":"2026-02-31T10:00:00Z","stageTimestamp":"NaN"}` + "\n" +
		`{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"h2","verb":"watch","requestURI":"/api/v1/pods?timeoutSeconds=-5","responseStatus":{"code":NaN}}` + "\n" +
		`{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"h3","verb":"watch","requestURI":"/api/v1/pods?timeoutSeconds=1.5","user":{"username":"\ud800"}}` + "\n"
	got, err := Read(context.Background(), strings.NewReader(in), "h.log", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 2 || got.SkippedCount != 1 {
		t.Fatalf("%d events, %d skipped (%v): want 2 and the NaN line skipped", len(got.Events), got.SkippedCount, got.Skipped)
	}
	e := got.Events[0]
	if e.TimeoutSeconds != 0 || e.Code != 0 || !e.RequestReceived.IsZero() || !e.Completed.IsZero() {
		t.Errorf("timeout %d, code %d, received %v, completed %v: want none of them", e.TimeoutSeconds, e.Code, e.RequestReceived, e.Completed)
	}
	if e.User != "evil\x1b[2J\u202e" || e.UserAgent != "ua\x00" || len(e.SourceIPs) != 2 {
		t.Errorf("user %q, user agent %q, addresses %q: want them as given", e.User, e.UserAgent, e.SourceIPs)
	}
	if got.Events[1].User != "\uFFFD" || got.Events[1].TimeoutSeconds != 0 {
		t.Errorf("a lone surrogate read as %q, timeout %d", got.Events[1].User, got.Events[1].TimeoutSeconds)
	}
}
