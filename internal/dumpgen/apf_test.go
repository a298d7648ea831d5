package dumpgen_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

// TestWriteAPFRequests: pkg/apf reads the table back as n executing pod
// watches, one user each, a millisecond apart from first.
func TestWriteAPFRequests(t *testing.T) {
	for _, step := range []time.Duration{time.Millisecond, 0} {
		t.Run(step.String(), func(t *testing.T) { writeAPFRequests(t, step) })
	}
}

// writeAPFRequests checks WriteAPFRequestsEvery with step (WriteAPFRequests
// for a millisecond): the requests start step apart, 0 at one instant.
func writeAPFRequests(t *testing.T, step time.Duration) {
	t.Helper()
	first := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	write := func() error { return dumpgen.WriteAPFRequestsEvery(&b, 3, first, step) }
	if step == time.Millisecond {
		write = func() error { return dumpgen.WriteAPFRequests(&b, 3, first) }
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	rq, err := apf.ParseRequests(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rq.Requests) != 3 || len(rq.Skipped) != 0 {
		t.Fatalf("%d requests, %d skipped; want 3, 0", len(rq.Requests), len(rq.Skipped))
	}
	for i, r := range rq.Requests {
		want := fmt.Sprintf("client-%d watch /api/v1/namespaces/ns-%d/pods pods %v executing %v seats 1", i, i, first.Add(time.Duration(i)*step), true)
		got := fmt.Sprintf("%s %s %s %s %v executing %v seats %d", r.User, r.Verb, r.Path, r.Resource, r.StartTime, r.Executing(), r.Seats())
		if got != want {
			t.Errorf("request %d: %s\nwant %s", i, got, want)
		}
	}
}

// TestWriteAPFOnlyCaptures: two captures of one process, each an APF
// dump of the same n executing watches, /metrics and a capture time 90 s
// apart.
func TestWriteAPFOnlyCaptures(t *testing.T) {
	dirs, err := dumpgen.WriteAPFOnlyCaptures(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	var ats []string
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, "apf-requests.txt"))
		if err != nil {
			t.Fatal(err)
		}
		rq, err := apf.ParseRequests(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(rq.Requests) != 3 || !rq.HasDetails {
			t.Errorf("%s: %d requests (details %v), want 3 with details", d, len(rq.Requests), rq.HasDetails)
		}
		at, err := os.ReadFile(filepath.Join(d, "captured-at.txt"))
		if err != nil {
			t.Fatal(err)
		}
		ats = append(ats, strings.TrimSpace(string(at)))
		m, err := os.ReadFile(filepath.Join(d, "metrics.txt"))
		if err != nil || !strings.Contains(string(m), "process_start_time_seconds ") {
			t.Errorf("%s: metrics %q (%v), want process_start_time_seconds", d, m, err)
		}
	}
	if diff := cmp.Diff([]string{"2026-11-29T10:30:00Z", "2026-11-29T10:31:30Z"}, ats); diff != "" {
		t.Errorf("capture times (-want +got):\n%s", diff)
	}
}
