package metrics

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/watch-doctor/watch-doctor/internal/golden"
)

// captures are the real /metrics files of kube-apiserver v1.37.2.
var captures = goldenfile.Fixture()

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, name, got)
}

// parseCapture parses one real capture and sets its capture time.
func parseCapture(t testing.TB, which string) *Sample {
	t.Helper()
	dir := filepath.Join(captures, which)
	f, err := os.Open(filepath.Join(dir, "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f, filepath.ToSlash(filepath.Join("seed-repro", which, "metrics.txt")))
	if err != nil {
		t.Fatal(err)
	}
	at, err := os.ReadFile(filepath.Join(dir, "captured-at.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s.CapturedAt, err = time.Parse(time.RFC3339, strings.TrimSpace(string(at)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func num(v float64) string {
	if Absent(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// dumpSnapshot writes a snapshot as stable, diffable text for golden files.
// With hideProcess, process totals print only as present or absent (for
// in-process registries, whose values change from run to run).
func dumpSnapshot(w io.Writer, s *Snapshot, hideProcess bool) {
	proc := num
	if hideProcess {
		proc = func(v float64) string {
			if Absent(v) {
				return "absent"
			}
			return "present"
		}
	}
	fmt.Fprintf(w, "source: %s\n", s.Source)
	if !s.CapturedAt.IsZero() {
		fmt.Fprintf(w, "capturedAt: %s\n", s.CapturedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "version: %s\n", s.Version)
	for _, e := range s.Version.Evidence {
		fmt.Fprintf(w, "  evidence: %s\n", e)
	}
	fmt.Fprintf(w, "goroutines: %s\nresidentMemoryBytes: %s\nprocessStartTime: %s\n",
		proc(s.Goroutines), proc(s.ResidentMemoryBytes), proc(s.ProcessStartTime))
	fmt.Fprintf(w, "resources: %d\n", len(s.Resources))
	for _, r := range s.Resources {
		fmt.Fprintf(w, "  %s: %s\n", r.Name(), resourceFields(r))
	}
	fmt.Fprintf(w, "priorityLevels: %d\n", len(s.PriorityLevels))
	for _, p := range s.PriorityLevels {
		var fs []string
		for _, f := range p.FlowSchemas {
			fs = append(fs, fmt.Sprintf("%s(seats=%s requests=%s)", f.Name, num(f.ExecutingSeats), num(f.ExecutingRequests)))
		}
		fmt.Fprintf(w, "  %s: executingSeats=%s limitSeats=%s executingRequests=%s flowSchemas=[%s]\n",
			p.Name, num(p.ExecutingSeats), num(p.LimitSeats), num(p.ExecutingRequests), strings.Join(fs, " "))
	}
	fmt.Fprintf(w, "missing: %d\n", len(s.Missing))
	for _, m := range s.Missing {
		fmt.Fprintf(w, "  %s %v readAsZero=%v: %s\n", m.Metric, m.Names, m.ReadAsZero, m.Reason)
	}
	fmt.Fprintf(w, "unknown: %d\n", len(s.Unknown))
	for _, u := range s.Unknown {
		fmt.Fprintf(w, "  %s{%s}: %s\n", u.Name, strings.Join(u.Labels, ","), u.Reason)
	}
	fmt.Fprintf(w, "blindSpots: %d\n", len(s.BlindSpots))
	for _, b := range s.BlindSpots {
		fmt.Fprintf(w, "  %s: %s [%s]\n", b.Metric, b.Text, b.Source)
	}
	fmt.Fprintf(w, "notes: %d\n", len(s.Notes))
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

func resourceFields(r Resource) string {
	return fmt.Sprintf("watchers=%s registeredWatchers=%s initEvents=%s terminatedWatchers=%s eventsReceived=%s eventsDispatched=%s cacheInitializations=%s cacheCapacity=%s cacheResourceVersion=%s watchEvents=%s watchEventBytes=%s watchLists=%s watchListSeconds=%s",
		num(r.Watchers), num(r.RegisteredWatchers), num(r.InitEvents), num(r.TerminatedWatchers),
		num(r.EventsReceived), num(r.EventsDispatched), num(r.CacheInitializations), num(r.CacheCapacity),
		num(r.CacheResourceVersion), num(r.WatchEvents), num(r.WatchEventBytes), num(r.WatchLists), num(r.WatchListSeconds))
}

func dumpRates(w io.Writer, rs *RateSnapshot) {
	fmt.Fprintf(w, "first: %s\nsecond: %s\ninterval: %s\nrestarted: %v\n", rs.First.Source, rs.Second.Source, rs.Interval, rs.Restarted)
	fmt.Fprintf(w, "resources: %d\n", len(rs.Resources))
	for _, r := range rs.Resources {
		fmt.Fprintf(w, "  %s: watchers=%s watchersChange=%s initEvents/s=%s terminatedWatchers/s=%s eventsReceived/s=%s eventsDispatched/s=%s cacheInitializations/s=%s watchEvents/s=%s watchEventBytes/s=%s watchLists/s=%s\n",
			r.Current.Name(), num(r.Current.Watchers), num(r.WatchersChange), rate(r.InitEventsPerSecond), rate(r.TerminatedWatchersPerSecond),
			rate(r.EventsReceivedPerSecond), rate(r.EventsDispatchedPerSecond), rate(r.CacheInitializationsPerSecond),
			rate(r.WatchEventsPerSecond), rate(r.WatchEventBytesPerSecond), rate(r.WatchListsPerSecond))
	}
	fmt.Fprintf(w, "notes: %d\n", len(rs.Notes))
	for _, n := range rs.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

func rate(v float64) string {
	if Absent(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// TestGoldenCaptures extracts the real captures of kube-apiserver v1.37.2.
func TestGoldenCaptures(t *testing.T) {
	for _, which := range []string{"t1", "t2"} {
		t.Run(which, func(t *testing.T) {
			snap := Extract(parseCapture(t, which))
			var buf bytes.Buffer
			dumpSnapshot(&buf, snap, false)
			golden(t, "seed-repro-"+which+".txt", buf.Bytes())

			// Ground truth from the capture's README: three watch clients
			// on pods in rand2, two of them in the initial phase holding
			// one seat each in global-default.
			pods := findResource(t, snap, "", "pods")
			if pods.Watchers < 3 {
				t.Errorf("pods watchers = %v, want at least the 3 clients", pods.Watchers)
			}
			gd := findLevel(t, snap, "global-default")
			if gd.ExecutingSeats != 2 || gd.ExecutingRequests != 2 || gd.LimitSeats != 49 {
				t.Errorf("global-default = %+v, want 2 seats of 49 held by 2 requests", gd)
			}
		})
	}
}

// TestGoldenRates compares the two captures, 83 s apart.
func TestGoldenRates(t *testing.T) {
	first, second := Extract(parseCapture(t, "t1")), Extract(parseCapture(t, "t2"))
	rs, err := Rates(first, second, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Interval != 83*time.Second {
		t.Errorf("interval = %s, want 83s from captured-at.txt", rs.Interval)
	}
	var buf bytes.Buffer
	dumpRates(&buf, rs)
	golden(t, "seed-repro-rates-t1-t2.txt", buf.Bytes())

	// The stuck replay adds nothing to init events between the captures.
	for _, r := range rs.Resources {
		if r.Current.Group == "" && r.Current.Resource == "pods" && r.InitEventsPerSecond != 0 {
			t.Errorf("pods init events rate = %v, want 0 while the replays are stuck", r.InitEventsPerSecond)
		}
	}
}

func findResource(t *testing.T, s *Snapshot, group, resource string) Resource {
	t.Helper()
	for _, r := range s.Resources {
		if r.Group == group && r.Resource == resource {
			return r
		}
	}
	t.Fatalf("no resource %s/%s", group, resource)
	return Resource{}
}

func findLevel(t *testing.T, s *Snapshot, name string) PriorityLevel {
	t.Helper()
	for _, p := range s.PriorityLevels {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no priority level %q", name)
	return PriorityLevel{}
}
