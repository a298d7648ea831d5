package dumpgen

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// The log of the APF-only captures: events lines, the rows' own watches
// first (received 3 ms before their APF start, still open), then the
// history of the same users and paths, hours before, half of it ended.
func TestWriteAPFOnlyAuditLog(t *testing.T) {
	const rows, events = 3, 3000
	var b bytes.Buffer
	requests, err := WriteAPFOnlyAuditLog(&b, rows, events)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b.Bytes(), []byte("\n")); n != events {
		t.Errorf("%d lines, want %d", n, events)
	}
	log, err := audit.Read(context.Background(), &b, "audit.jsonl", audit.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Events) != requests || log.SkippedCount != 0 {
		t.Fatalf("%d requests read, %d skipped; want %d and none", len(log.Events), log.SkippedCount, requests)
	}
	ended := 0
	for i, e := range log.Events {
		if e.User != "client-"+strconv.Itoa(i%rows) || e.Path != "/api/v1/namespaces/ns-"+strconv.Itoa(i%rows)+"/pods" {
			t.Fatalf("request %d is %s's of %s", i, e.User, e.Path)
		}
		if i < rows {
			if want := apfOnlyStart.Add(time.Duration(i)*time.Millisecond - 3*time.Millisecond); !e.RequestReceived.Equal(want) || !e.Completed.IsZero() {
				t.Errorf("row %d's watch received %s, ended %s; want %s, open", i, e.RequestReceived, e.Completed, want)
			}
			continue
		}
		if apfOnlyStart.Sub(e.RequestReceived) < time.Hour {
			t.Errorf("request %d received %s, within the hour before the rows", i, e.RequestReceived)
		}
		if !e.Completed.IsZero() {
			ended++
		}
	}
	if history := requests - rows; ended < history/2-auditLag || ended > history/2+1 {
		t.Errorf("%d of %d requests of the history ended, want about half", ended, requests-rows)
	}
}

// WriteAPFOnlyAudit writes the captures and the log once.
func TestWriteAPFOnlyAudit(t *testing.T) {
	dir := t.TempDir()
	dirs, log, err := WriteAPFOnlyAudit(dir, 2, 100)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(log)
	if err != nil || len(dirs) != 2 {
		t.Fatalf("captures %q, log %v", dirs, err)
	}
	if _, again, err := WriteAPFOnlyAudit(dir, 2, 100); err != nil || again != log {
		t.Fatalf("again: %q, %v", again, err)
	}
	if st2, err := os.Stat(log); err != nil || !st2.ModTime().Equal(st.ModTime()) {
		t.Errorf("the log was written again")
	}
}
