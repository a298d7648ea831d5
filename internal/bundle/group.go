package bundle

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// ProcessCaptures is the captures of one API server process, oldest first:
// the loaded captures' process (docs/architecture.md, Glossary).
type ProcessCaptures struct {
	// Name is how the reports name it (DisplayName): the instance, or the
	// captures' common directory, and the process start when the instance
	// restarted. It is for people: code compares Instance and
	// ProcessStart.
	Name string
	// Instance is the instance the captures were read from (a collect
	// bundle's, or a live run's, instance name: its address, or the
	// kubeconfig host); "" for files read alone.
	Instance string
	// ProcessStart is the process' start (process_start_time_seconds of
	// its /metrics); zero when no capture has it.
	ProcessStart time.Time
	// Restarted is set when the instance's captures came from more than
	// one process: each is a ProcessCaptures of its own.
	Restarted bool
	Captures  []*Capture
	// SameProcess is set when captures were grouped by equal
	// process_start_time_seconds rather than by a collect manifest.
	SameProcess bool
}

// DisplayName is the name reports give a process of an instance: the
// instance's own name, and when it restarted between samples, which
// process ("10.0.0.1:6443 (process started 2026-11-29T10:00:00Z)"). It
// is the only place that string is made; nothing parses it back.
func DisplayName(instance string, restarted bool, start time.Time) string {
	if !restarted {
		return instance
	}
	when := "unknown"
	if !start.IsZero() {
		when = start.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s (process started %s)", instance, when)
}

// Processes sorts the captures into API server processes: captures of one
// collect instance, or captures whose /metrics show the same
// process_start_time_seconds (the same process), are samples of one
// server, split where the instance restarted; any other capture is a
// server of its own.
func (l *Loaded) Processes() []ProcessCaptures {
	var groups []*ProcessCaptures
	byKey := map[string]*ProcessCaptures{}
	for i, c := range l.Captures {
		key := fmt.Sprintf("capture:%d", i)
		same := false
		switch {
		case c.Instance != "":
			key = "instance:" + c.manifest + "\x00" + c.Instance
		case c.Metrics != nil && !math.IsNaN(c.Metrics.ProcessStartTime) && c.Metrics.ProcessStartTime > 0:
			key = fmt.Sprintf("process:%f", c.Metrics.ProcessStartTime)
			same = true
		}
		g, ok := byKey[key]
		if !ok {
			g = &ProcessCaptures{SameProcess: same}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.Captures = append(g.Captures, c)
	}
	out := make([]ProcessCaptures, 0, len(groups))
	for _, g := range groups {
		sortSamples(g.Captures)
		name := serverName(g.Captures)
		parts := splitByProcess(g.Captures)
		for _, caps := range parts {
			// When the instance restarted between samples, goroutine ids
			// of two processes must not be compared: a ProcessCaptures each.
			sub := ProcessCaptures{Instance: caps[0].Instance, ProcessStart: processStart(caps), Restarted: len(parts) > 1, Captures: caps, SameProcess: g.SameProcess}
			sub.Name = DisplayName(name, sub.Restarted, sub.ProcessStart)
			out = append(out, sub)
		}
	}
	return out
}

// sortSamples orders the captures of one process by capture time, or,
// when a capture has none, by the highest goroutine id of its dump: the
// runtime hands out ids in increasing order, so a later dump holds higher
// ones.
func sortSamples(caps []*Capture) {
	timed := true
	for _, c := range caps {
		if c.CapturedAt.IsZero() {
			timed = false
		}
	}
	maxID := func(c *Capture) int64 {
		if c.Dump == nil {
			return 0
		}
		return c.Dump.MaxGoroutineID
	}
	sort.SliceStable(caps, func(i, j int) bool {
		if timed {
			return caps[i].CapturedAt.Before(caps[j].CapturedAt)
		}
		return maxID(caps[i]) < maxID(caps[j])
	})
}

// splitByProcess cuts time-ordered captures of one instance where the
// process start time changes; a capture without metrics stays with the one
// before it.
func splitByProcess(caps []*Capture) [][]*Capture {
	var parts [][]*Capture
	last := math.NaN()
	for _, c := range caps {
		pst := math.NaN()
		if c.Metrics != nil {
			pst = c.Metrics.ProcessStartTime
		}
		if len(parts) == 0 || (!math.IsNaN(pst) && !math.IsNaN(last) && pst != last) {
			parts = append(parts, nil)
		}
		parts[len(parts)-1] = append(parts[len(parts)-1], c)
		if !math.IsNaN(pst) {
			last = pst
		}
	}
	return parts
}

// processStart is the start of the captures' process, to the second;
// zero when none has it.
func processStart(caps []*Capture) time.Time {
	for _, c := range caps {
		if c.Metrics != nil && !math.IsNaN(c.Metrics.ProcessStartTime) {
			return time.Unix(int64(c.Metrics.ProcessStartTime), 0).UTC()
		}
	}
	return time.Time{}
}

// Servers turns the processes into the diagnosis' input, one per process
// in the order of Processes.
func (l *Loaded) Servers() []watches.Server {
	var out []watches.Server
	for _, g := range l.Processes() {
		out = append(out, g.Server())
	}
	return out
}

// Server is the diagnosis' input for the process.
func (g ProcessCaptures) Server() watches.Server {
	s := watches.Server{Name: g.Name}
	var note string
	if s.Trace, note = groupTrace(g.Captures); note != "" {
		s.Notes = append(s.Notes, note)
	}
	for _, c := range g.Captures {
		if c.Version != "" {
			s.Version = c.Version
		}
		s.Notes = append(s.Notes, c.notes...)
		s.Samples = append(s.Samples, c.sample())
	}
	if len(g.Captures) > 1 {
		if g.SameProcess {
			s.Notes = append(s.Notes, fmt.Sprintf("%d captures of the same process (same process_start_time_seconds) read as samples: %s", len(g.Captures), captureNames(g.Captures)))
		}
		for _, c := range g.Captures {
			if c.CapturedAt.IsZero() {
				s.Notes = append(s.Notes, fmt.Sprintf("%s has no capture time: samples are ordered by goroutine ids, and only a wait that went down counts as progress", c.Name))
			}
		}
	}
	return s
}

func serverName(cs []*Capture) string {
	if cs[0].Instance != "" {
		return cs[0].Instance
	}
	if len(cs) == 1 {
		return cs[0].Name
	}
	parent := filepath.Dir(cs[0].Name)
	for _, c := range cs[1:] {
		if filepath.Dir(c.Name) != parent {
			return captureNames(cs)
		}
	}
	return parent
}

// put sets m[k] = v, making m, unless v is absent (NaN).
func put(m *map[string]float64, k string, v float64) {
	if math.IsNaN(v) {
		return
	}
	if *m == nil {
		*m = map[string]float64{}
	}
	(*m)[k] = v
}

func (c *Capture) sample() watches.Sample {
	s := watches.Sample{Source: c.Name, CapturedAt: c.CapturedAt, MetricsAt: c.MetricsAt, Dump: c.Dump, Requests: c.Requests, Levels: c.Levels, Mixed: c.Mixed, Withheld: c.Withheld, ProfileStatus: c.ProfileStatus}
	if m := c.Metrics; m != nil {
		mc := &watches.MetricsContext{Levels: map[string]watches.LevelSeats{}}
		num := func(v float64) *float64 {
			if math.IsNaN(v) {
				return nil
			}
			return &v
		}
		mc.Goroutines, mc.ResidentMemoryBytes, mc.ProcessStartTime = num(m.Goroutines), num(m.ResidentMemoryBytes), num(m.ProcessStartTime)
		for _, pl := range m.PriorityLevels {
			mc.Levels[pl.Name] = watches.LevelSeats{Executing: num(pl.ExecutingSeats), Limit: num(pl.LimitSeats)}
		}
		for _, r := range m.Resources {
			put(&mc.WatchEvents, r.Key(), r.WatchEvents)
			put(&mc.WatchEventBytes, r.Key(), r.WatchEventBytes)
			put(&mc.InitEvents, r.Key(), r.InitEvents)
			put(&mc.TerminatedWatchers, r.Key(), r.TerminatedWatchers)
			if !math.IsNaN(r.Watchers) && r.Watchers > 0 {
				mc.WatchersByResource = append(mc.WatchersByResource, api.ResourceCount{Group: r.Group, Resource: r.Name(), Count: r.Watchers})
			}
		}
		if c.MetricsSample != nil {
			mc.WatchRequests = metrics.WatchRequests(c.MetricsSample)
			mc.EventSizes = metrics.EventSizeBuckets(c.MetricsSample)
			mc.TerminatedReasons = metrics.TerminatedByReason(c.MetricsSample)
		}
		s.Metrics = mc
	}
	return s
}

// Foreign names the captures whose goroutine dump holds no kube-apiserver
// code (Capture.Foreign).
func (l *Loaded) Foreign() []string {
	var out []string
	for _, c := range l.Captures {
		if c.Foreign() {
			out = append(out, c.Name)
		}
	}
	return out
}

// orderWarnings says where capture times and goroutine ids disagree on the
// order of a process' samples: ids only grow, so one capture time is wrong.
func (l *Loaded) orderWarnings() []string {
	var out []string
	for _, g := range l.Processes() {
		for i := 1; i < len(g.Captures); i++ {
			a, b := g.Captures[i-1], g.Captures[i]
			if a.CapturedAt.IsZero() || b.CapturedAt.IsZero() || a.Dump == nil || b.Dump == nil || a.Dump.MaxGoroutineID == 0 || b.Dump.MaxGoroutineID == 0 {
				continue
			}
			if a.Dump.MaxGoroutineID > b.Dump.MaxGoroutineID {
				out = append(out, fmt.Sprintf("%s: capture times put %s (%s) before %s (%s), but its goroutine ids are higher (up to %d, against %d), and ids only grow: one capture time is wrong; samples are read in capture-time order",
					g.Name, a.Name, a.CapturedAt.Format(time.RFC3339), b.Name, b.CapturedAt.Format(time.RFC3339), a.Dump.MaxGoroutineID, b.Dump.MaxGoroutineID))
			}
		}
	}
	return out
}
