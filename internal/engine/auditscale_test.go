package engine

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// The joined read of an audit log grows linearly with the log, and what
// it keeps with the APF rows alone: against the APF-only captures of 200
// stuck watches, logs of every request of their users and paths
// (dumpgen.WriteAPFOnlyAuditLog, half never shown ending), n then 2n
// events. The requests kept are the rows' own at both sizes, the memory
// kept after the read does not grow with the log, and the bytes
// allocated at most double. Before, every request of a user and path of
// the rows was kept, and a request the log never showed ending was held
// until its end: a million events held 437 MiB.
func TestAuditJoinIsLinear(t *testing.T) {
	const rows = 200
	dirs, err := dumpgen.WriteAPFOnlyCaptures(t.TempDir(), rows)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := bundle.Load(dirs, bundle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type cost struct {
		kept                int
		allocated, retained uint64
	}
	measure := func(events int) cost {
		var log bytes.Buffer
		if _, err := dumpgen.WriteAPFOnlyAuditLog(&log, rows, events); err != nil {
			t.Fatal(err)
		}
		src := bundle.AuditSource{Name: "audit.log", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(log.Bytes())), nil }}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		read, err := readAudit(context.Background(), []bundle.AuditSource{src}, auditNeed(loaded))
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		c := cost{kept: len(read.events), allocated: after.TotalAlloc - before.TotalAlloc, retained: after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)}
		runtime.KeepAlive(read)
		runtime.KeepAlive(&log)
		return c
	}
	small, large := measure(20_000), measure(40_000)
	if small.kept != rows || large.kept != rows {
		t.Errorf("kept %d and %d requests, want the %d rows' own at both sizes", small.kept, large.kept, rows)
	}
	if float64(large.allocated) > 2.1*float64(small.allocated) {
		t.Errorf("events 20,000 -> 40,000: bytes allocated %d -> %d: more than doubled", small.allocated, large.allocated)
	}
	if large.retained > small.retained+256<<10 {
		t.Errorf("events 20,000 -> 40,000: bytes kept after the read %d -> %d: grew with the log", small.retained, large.retained)
	}
}
