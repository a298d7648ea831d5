package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/cli"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Checking what the measured tools found against what the generator planted.

// checkOurs verifies that analyze found exactly the planted stuck watches,
// fully linked, and nothing else.
func checkOurs(m measurement, res dumpgen.Result) error {
	if m.timedOut {
		return errors.New("timed out")
	}
	if m.exit != cli.ExitFindings {
		return fmt.Errorf("exit code %d, want %d (critical findings); stderr: %s", m.exit, cli.ExitFindings, firstLine(m.stderr))
	}
	var r api.Report
	if err := json.Unmarshal(m.stdout, &r); err != nil {
		return fmt.Errorf("decoding the report: %w", err)
	}
	if r.Summary.Goroutines != res.Goroutines {
		return fmt.Errorf("report counts %d goroutines, the dump holds %d", r.Summary.Goroutines, res.Goroutines)
	}
	want := map[int64]dumpgen.Planted{}
	for _, p := range res.Planted {
		want[p.WatcherID] = p
	}
	found := map[int64]bool{}
	for _, f := range r.Findings {
		w := f.Watcher
		p, ok := want[w.GoroutineID]
		if !ok || f.Type != api.StuckInitialEvents {
			return fmt.Errorf("unexpected finding %s for watcher goroutine %d", f.Type, w.GoroutineID)
		}
		if found[w.GoroutineID] {
			return fmt.Errorf("watcher goroutine %d reported twice", w.GoroutineID)
		}
		found[w.GoroutineID] = true
		if w.Handler == nil || w.Handler.GoroutineID != p.HandlerID || w.APFGoroutineID != p.APFID ||
			w.Handler.ConnGoroutineID != p.ConnID || !w.Handler.ConnInDump || w.WaitMinutes != p.WaitMinutes {
			return fmt.Errorf("watcher goroutine %d: linked to handler %+v, APF %d, wait %d; planted handler %d, APF %d, connection %d, wait %d",
				w.GoroutineID, w.Handler, w.APFGoroutineID, w.WaitMinutes, p.HandlerID, p.APFID, p.ConnID, p.WaitMinutes)
		}
	}
	if len(found) != len(want) || r.Summary.StuckWatches != len(want) {
		var missing []string
		for id := range want {
			if !found[id] {
				missing = append(missing, strconv.FormatInt(id, 10))
			}
		}
		return fmt.Errorf("found %d of %d planted stuck watches (summary says %d); missing watcher goroutines %s", len(found), len(want), r.Summary.StuckWatches, strings.Join(missing, ", "))
	}
	return nil
}

// peerResult is what bench/peers prints.
type peerResult struct {
	Goroutines int    `json:"goroutines"`
	Buckets    int    `json:"buckets"`
	Errors     int    `json:"errors"`
	Mallocs    uint64 `json:"mallocs"`
	AllocBytes uint64 `json:"allocBytes"`
}

func checkPeer(m measurement, n int, r *row) error {
	if m.timedOut {
		return nil
	}
	if m.exit != 0 {
		return fmt.Errorf("exit code %d: %s", m.exit, firstLine(m.stderr))
	}
	var p peerResult
	if err := json.Unmarshal(m.stdout, &p); err != nil {
		return fmt.Errorf("decoding its output: %w", err)
	}
	r.mallocs, r.allocBytes = p.Mallocs, p.AllocBytes
	if p.Buckets > 0 {
		r.extra = fmt.Sprintf("%d buckets", p.Buckets)
	}
	if p.Goroutines != n || p.Errors != 0 {
		return fmt.Errorf("read %d goroutines with %d errors, want %d and none", p.Goroutines, p.Errors, n)
	}
	return nil
}
