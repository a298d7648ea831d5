package diagnosis

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// FormatAPF is APIServer.DumpFormat for a server decided from its APF
// dumps and /metrics alone: no goroutine dump or execution trace was
// read (profiling off, refused, or not captured).
const FormatAPF = api.DumpFormatAPF

// hasRequests reports whether some sample of s has an APF dump.
func hasRequests(s watches.Server) bool {
	for _, sm := range s.Samples {
		if sm.Requests != nil {
			return true
		}
	}
	return false
}

// noDumpReason is why s has no goroutine dump: the status /debug/pprof
// refused it with, when a sample recorded one.
func noDumpReason(s watches.Server) (api.UndecidedReason, string) {
	for _, sm := range s.Samples {
		switch sm.ProfileStatus {
		case http.StatusNotFound:
			return api.UndecidedProfilingDisabled, "profiling is disabled on this server (/debug/pprof answered 404: --profiling=false), so no goroutine dump or execution trace can be taken"
		case http.StatusForbidden:
			return api.UndecidedProfilingForbidden, `/debug/pprof answered 403: grant nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"] to take a goroutine dump`
		}
	}
	return api.UndecidedNoGoroutineDump, "no goroutine dump or execution trace was read"
}

// diagnoseAPF decides what the APF dumps and /metrics of a server without
// a goroutine dump or trace allow, and never drops a row for want of one:
//   - a row of the first APF dump gone from the last ended: not stuck;
//   - a row executing from the first sample to the last, at least
//     StallBound apart, on a resource whose apiserver_watch_events_total
//     did not grow in between (same process) sent nothing: stuck;
//   - every other row initializing for longer than StallBound at the last
//     sample is UndecidedInitialEvents, saying why (noDumpReason), and
//     the report is incomplete.
//
// It stops early once ctx is done (DiagnoseContext then returns ctx.Err()).
func diagnoseAPF(ctx context.Context, info api.APIServer, s watches.Server) (api.APIServer, added) {
	var out added
	reason, why := noDumpReason(s)
	a, b := traceSamples(s.Samples)
	info.DumpFormat = FormatAPF
	if !b.CapturedAt.IsZero() {
		at := b.CapturedAt.UTC()
		info.CapturedAt = &at
	}
	if m := b.Metrics; m != nil && m.Goroutines != nil {
		info.Goroutines = int(*m.Goroutines)
	}
	addMetricsInfo(&info, b.Metrics)
	info.Notes = append(info.Notes, "evidence: APF dump_requests and /metrics only: "+why)
	var reqsA *apf.Requests
	var zero map[string]bool
	var interval time.Duration
	if a != nil {
		reqsA = a.Requests
		zero = zeroDeltaResources(a.Metrics, b.Metrics)
		if !a.CapturedAt.IsZero() && !b.CapturedAt.IsZero() {
			interval = b.CapturedAt.Sub(a.CapturedAt)
		}
	}
	rows, stopped := traceRows(reqsA, b.Requests)
	if stopped > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d watch requests executing in the first sample had ended by the last: not stuck", stopped))
	}
	for _, sm := range s.Samples {
		if w := skippedRows(s.Name, sm); w != "" {
			// A row that could not be read may be a stuck watch: no
			// all-clear from the rows that could.
			out.warnings = append(out.warnings, w)
			out.incomplete = append(out.incomplete, w+": a watch they list is in no finding")
		}
	}
	if b.Requests != nil && !b.Requests.HasDetails {
		out.warnings = append(out.warnings, fmt.Sprintf("%s: the APF dump was taken without includeRequestDetails=1: it names no verbs or paths, so every executing request outside the exempt level counts as a watch", s.Name))
	}
	if b.CapturedAt.IsZero() && len(rows) > 0 {
		// Not aged, so none can be cleared: each is named.
		for _, rw := range rows {
			if done(ctx) {
				break
			}
			f := undecidedFinding(s.Name, rw.req, time.Time{}, "")
			f.UndecidedReason = reason
			f.Message = fmt.Sprintf("initializing (age unknown: no capture time), holding %d APF seat(s): stuck or slow: not decidable on this server: %s", f.Client.Seats, why)
			f.Evidence = []string{fmt.Sprintf("APF dump_requests: executing watch of %s started %s", f.Client.User, rw.req.StartTime.UTC().Format(time.RFC3339))}
			out.findings = append(out.findings, f)
		}
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %d executing watch requests, and no capture time to age them by: stuck or slow: not decidable on this server: %s", s.Name, len(rows), why))
		return info, out
	}
	young, undecided := 0, 0
	listed := listedRows(s.Samples, a, b)
	texts := interner{}
	for _, rw := range rows {
		if done(ctx) {
			break
		}
		if b.CapturedAt.Sub(rw.req.StartTime) <= StallBound {
			young++
			continue
		}
		ages := rowAges(listed, rw)
		key := resourceKey(rw.req)
		if rw.inA && a != nil && interval >= StallBound && zero[key] {
			out.findings = append(out.findings, texts.shared(apfStuckFinding(s.Name, rw.req, b, interval, ages)))
			continue
		}
		f := undecidedFinding(s.Name, rw.req, b.CapturedAt, "stuck or slow: not decidable on this server: "+why)
		f.UndecidedReason = reason
		f.Evidence = append(f.Evidence, agesEvidence(ages))
		f.Evidence = append(f.Evidence, growthEvidence(a, b, key, rw.inA)...)
		f.Evidence = append(f.Evidence, seatsEvidence(rw.req.PriorityLevel, b.Metrics)...)
		out.findings = append(out.findings, texts.shared(f))
		undecided++
	}
	if young > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d watch requests initializing for %s or less at the last sample: none is stuck past that bound", young, StallBound))
	}
	if undecided > 0 {
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %d watch requests initializing for longer than %s: stuck or slow: not decidable on this server: %s", s.Name, undecided, StallBound, why))
	}
	out.levels = priorityLevels(s.Name, out.findings, *b)
	return info, out
}

// shared keeps one copy of f's message and of its evidence after the
// first line (which names the row's own request) among the findings
// sharing them word for word: tens of thousands of rows of one resource
// share them (ages are rounded to the second). It returns f.
func (t interner) shared(f *api.Finding) *api.Finding {
	f.Message = t.intern(f.Message)
	for i := 1; i < len(f.Evidence); i++ {
		f.Evidence[i] = t.intern(f.Evidence[i])
	}
	return f
}

// skippedLinesSaid is how many of the lines of skipped APF rows a
// warning names.
const skippedLinesSaid = 3

// skippedRows says how many rows of sm's APF dump_requests could not be
// read, where it came from, and the first lines and why; "" when none.
func skippedRows(server string, sm watches.Sample) string {
	rs := sm.Requests
	if rs == nil || rs.SkippedCount() == 0 {
		return ""
	}
	of := "the APF dump_requests"
	if sm.Source != "" {
		of += " of " + sm.Source
	}
	var lines []string
	for _, sk := range rs.Skipped[:min(len(rs.Skipped), skippedLinesSaid)] {
		lines = append(lines, fmt.Sprintf("line %d: %s", sk.Line, sk.Reason))
	}
	if more := rs.SkippedCount() - len(lines); more > 0 {
		lines = append(lines, fmt.Sprintf("%d more", more))
	}
	return fmt.Sprintf("%s: %s could not be read in %s (%s)", server, english.Count(rs.SkippedCount(), "row", "rows"), of, strings.Join(lines, "; "))
}

// sampleAge is a row's age at one sample; present is false when that
// sample's APF dump did not list it.
type sampleAge struct {
	at      time.Time
	age     time.Duration
	present bool
}

// sampleRows are the executing watch rows of one sample with an APF dump
// and a capture time, by rowKey; keys is nil for samples A and B of
// traceRows, whose rows traceRow marks already.
type sampleRows struct {
	at       time.Time
	keys     map[requestKey]bool
	isA, isB bool
}

// listedRows are the sampleRows of each sample of ss with an APF dump and
// a capture time, oldest first, a and b those of traceSamples: built once
// per sample, so that a row's ages (rowAges) cost a lookup per sample,
// not a pass over every row of it (which made the APF-only diagnosis
// quadratic in the rows: 50,000 took hours).
func listedRows(ss []watches.Sample, a, b *watches.Sample) []sampleRows {
	var out []sampleRows
	for i := range ss {
		sm := &ss[i]
		if sm.Requests == nil || sm.CapturedAt.IsZero() {
			continue
		}
		sr := sampleRows{at: sm.CapturedAt, isA: sm == a, isB: sm == b}
		if !sr.isA && !sr.isB {
			ws := executingWatches(sm.Requests)
			sr.keys = make(map[requestKey]bool, len(ws))
			for _, r := range ws {
				sr.keys[rowKey(r)] = true
			}
		}
		out = append(out, sr)
	}
	return out
}

// rowAges are rw's ages at each of listed, oldest first.
func rowAges(listed []sampleRows, rw traceRow) []sampleAge {
	var key requestKey
	out := make([]sampleAge, 0, len(listed))
	for _, sr := range listed {
		present := sr.isB || (sr.isA && rw.inA)
		if sr.keys != nil {
			if key == (requestKey{}) {
				key = rowKey(rw.req)
			}
			present = sr.keys[key]
		}
		out = append(out, sampleAge{at: sr.at, age: sr.at.Sub(rw.req.StartTime), present: present})
	}
	return out
}

// agesEvidence says how old the row was at each sample, and whether it
// was past StallBound on every one.
func agesEvidence(ages []sampleAge) string {
	var parts []string
	every := len(ages) > 0
	for _, sa := range ages {
		if !sa.present {
			parts = append(parts, fmt.Sprintf("not listed at %s", sa.at.UTC().Format(time.TimeOnly)))
			every = false
			continue
		}
		parts = append(parts, fmt.Sprintf("%s old at %s", roundDuration(sa.age), sa.at.UTC().Format(time.TimeOnly)))
		if sa.age <= StallBound {
			every = false
		}
	}
	s := "APF dump_requests, sample by sample: " + strings.Join(parts, ", ")
	if every {
		s += fmt.Sprintf("; initializing past the %s stall bound on every sample", StallBound)
	}
	return s
}

// growthEvidence says what the counters of the row's resource did
// between the samples (same process): apiserver_watch_events_total, and
// apiserver_init_events_total and apiserver_terminated_watchers_total when
// they grew (neither counts a replay still blocked: pkg/metrics
// blindspots.go).
func growthEvidence(a, b *watches.Sample, key string, inA bool) []string {
	if a == nil || a.Metrics == nil || b.Metrics == nil || key == "" {
		return nil
	}
	if pa, pb := a.Metrics.ProcessStartTime, b.Metrics.ProcessStartTime; pa == nil || pb == nil || *pa != *pb {
		return nil
	}
	res := resourceOf(key)
	var out []string
	if d, ok := growth(a.Metrics.WatchEvents, b.Metrics.WatchEvents, key); ok {
		switch {
		case d > 0 && inA:
			out = append(out, fmt.Sprintf("apiserver_watch_events_total{resource=%q} grew by %.0f between the samples: some watch of %s received events, maybe this one", res, d, res))
		case d == 0 && !inA:
			out = append(out, fmt.Sprintf("apiserver_watch_events_total{resource=%q} did not grow between the samples, but this request started after the first", res))
		}
	}
	if d, ok := growth(a.Metrics.InitEvents, b.Metrics.InitEvents, key); ok && d > 0 {
		out = append(out, fmt.Sprintf("apiserver_init_events_total{resource=%q} grew by %.0f: some initial replays of %s ended between the samples (a replay still blocked adds nothing)", res, d, res))
	}
	if d, ok := growth(a.Metrics.TerminatedWatchers, b.Metrics.TerminatedWatchers, key); ok && d > 0 {
		out = append(out, fmt.Sprintf("apiserver_terminated_watchers_total{resource=%q} grew by %.0f: the cacher closed watchers of %s whose input buffer stayed full; a handler of one may still hold its APF seats", res, d, res))
	}
	return out
}

// growth is b[key] - a[key]; false when either is absent.
func growth(a, b map[string]float64, key string) (float64, bool) {
	before, okA := a[key]
	after, okB := b[key]
	if !okA || !okB || math.IsNaN(before) || math.IsNaN(after) {
		return 0, false
	}
	return after - before, true
}

// seatsEvidence is the executing seats of level from /metrics.
func seatsEvidence(level string, m *watches.MetricsContext) []string {
	if m == nil || level == "" {
		return nil
	}
	ls, ok := m.Levels[level]
	if !ok || ls.Executing == nil {
		return nil
	}
	s := fmt.Sprintf("priority level %s: %.0f seats executing", level, *ls.Executing)
	if ls.Limit != nil {
		s += fmt.Sprintf(" of a limit of %.0f", *ls.Limit)
	}
	return []string{s + " (apiserver_flowcontrol_current_executing_seats)"}
}

func resourceOf(key string) string { return key[strings.LastIndex(key, "/")+1:] }

// apfStuckFinding is the StuckInitialEvents finding of a row that
// executed from the first sample to the last (b) while no handler of its
// resource wrote an event.
func apfStuckFinding(server string, rq apf.Request, b *watches.Sample, interval time.Duration, ages []sampleAge) *api.Finding {
	f := undecidedFinding(server, rq, b.CapturedAt, "")
	f.Type, f.Severity = api.StuckInitialEvents, api.SeverityCritical
	f.Client.Match = api.MatchExact
	res := resourceOf(resourceKey(rq))
	f.Message = fmt.Sprintf("stuck replaying initial events: APF held it initializing over the %s between the samples while apiserver_watch_events_total{resource=%q} did not grow, so it sent nothing; past the 30 s no-progress bound of the proposed fix (kubernetes PR 141899), and nothing frees it before the request ends", roundDuration(interval), res)
	f.Evidence = append(f.Evidence, agesEvidence(ages),
		fmt.Sprintf("decided without a goroutine dump: no handler of %s wrote a watch event between the samples (same process), and this request executed throughout", res))
	f.Evidence = append(f.Evidence, seatsEvidence(rq.PriorityLevel, b.Metrics)...)
	return f
}
