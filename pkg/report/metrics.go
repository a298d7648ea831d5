package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// MetricsKind and MetricsAPIVersion identify the JSON and YAML form of a
// metrics report.
const (
	MetricsKind       = "WatchMetrics"
	MetricsAPIVersion = "watch-doctor/v1alpha1"
)

// RenderMetrics writes the watch metrics of one or more API servers in
// format f.
//
// The table shows per server a summary line, the resources that have
// watchers or watch-cache activity (wide: all resources, more columns), the
// priority levels, and below them the blind spots of the columns, the
// missing and unknown metrics, and notes. With two samples the counter
// columns become rates per second.
func RenderMetrics(w io.Writer, r metrics.Report, f Format) error {
	switch f {
	case FormatJSON, FormatYAML:
		return writeStructured(w, metricsDocument(r), f)
	case FormatTable, FormatWide:
		return renderMetricsTable(escapeWriter{w}, r, f == FormatWide)
	}
	return fmt.Errorf("unsupported format %q: use one of table, wide, json, yaml", f)
}

// WatchMetricsDoc is the JSON/YAML form of a metrics report. Field names are
// part of the output contract. Absent values are null, never 0.
type WatchMetricsDoc struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	APIServers []APIServerMetrics `json:"apiservers"`
}

// APIServerMetrics is one API server in WatchMetricsDoc.
type APIServerMetrics struct {
	Name  string `json:"name"`
	Error string `json:"error,omitempty"`

	Source     string           `json:"source,omitempty"`
	CapturedAt string           `json:"capturedAt,omitempty"`
	Version    *MetricsVersion  `json:"version,omitempty"`
	Sampling   *MetricsSampling `json:"sampling,omitempty"`

	Goroutines          *float64 `json:"goroutines"`
	ResidentMemoryBytes *float64 `json:"residentMemoryBytes"`
	// ProcessStartTime is RFC 3339, UTC.
	ProcessStartTime string `json:"processStartTime,omitempty"`

	Resources      []ResourceMetrics      `json:"resources"`
	PriorityLevels []PriorityLevelMetrics `json:"priorityLevels"`
	Missing        []MissingMetric        `json:"missing"`
	Unknown        []UnknownMetric        `json:"unknown,omitempty"`
	BlindSpots     []MetricsBlindSpot     `json:"blindSpots,omitempty"`
	Notes          []string               `json:"notes,omitempty"`
}

// MetricsVersion says which release's metric names were expected, and why.
type MetricsVersion struct {
	Release    string   `json:"release"`
	GitVersion string   `json:"gitVersion,omitempty"`
	From       string   `json:"from"`
	Min        string   `json:"min,omitempty"`
	Max        string   `json:"max,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
}

// MetricsSampling is present when rates were computed from two samples.
type MetricsSampling struct {
	FirstCapturedAt string  `json:"firstCapturedAt,omitempty"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	Restarted       bool    `json:"restarted"`
}

// ResourceMetrics is one resource. The counters are totals since the
// process started; with two samples the ...PerSecond fields are added.
type ResourceMetrics struct {
	Group    string `json:"group"`
	Resource string `json:"resource"`
	Kind     string `json:"kind,omitempty"`

	Watchers           *float64 `json:"watchers"`
	InitEvents         *float64 `json:"initEvents"`
	TerminatedWatchers *float64 `json:"terminatedWatchers"`
	EventsDispatched   *float64 `json:"eventsDispatched"`
	CacheCapacity      *float64 `json:"cacheCapacity"`

	RegisteredWatchers   *float64 `json:"registeredWatchers,omitempty"`
	EventsReceived       *float64 `json:"eventsReceived"`
	CacheInitializations *float64 `json:"cacheInitializations"`
	CacheResourceVersion *float64 `json:"cacheResourceVersion"`
	WatchEvents          *float64 `json:"watchEvents"`
	WatchEventBytes      *float64 `json:"watchEventBytes"`
	WatchLists           *float64 `json:"watchLists"`
	WatchListSeconds     *float64 `json:"watchListSeconds"`

	*ResourceRates
}

// ResourceRates are the per-second rates over the sampling interval.
type ResourceRates struct {
	WatchersChange                *float64 `json:"watchersChange"`
	InitEventsPerSecond           *float64 `json:"initEventsPerSecond"`
	TerminatedWatchersPerSecond   *float64 `json:"terminatedWatchersPerSecond"`
	EventsDispatchedPerSecond     *float64 `json:"eventsDispatchedPerSecond"`
	EventsReceivedPerSecond       *float64 `json:"eventsReceivedPerSecond"`
	CacheInitializationsPerSecond *float64 `json:"cacheInitializationsPerSecond"`
	WatchEventsPerSecond          *float64 `json:"watchEventsPerSecond"`
	WatchEventBytesPerSecond      *float64 `json:"watchEventBytesPerSecond"`
	WatchListsPerSecond           *float64 `json:"watchListsPerSecond"`
}

// PriorityLevelMetrics is one APF priority level.
type PriorityLevelMetrics struct {
	Name              string              `json:"name"`
	ExecutingSeats    *float64            `json:"executingSeats"`
	LimitSeats        *float64            `json:"limitSeats"`
	ExecutingRequests *float64            `json:"executingRequests"`
	FlowSchemas       []MetricsFlowSchema `json:"flowSchemas,omitempty"`
}

// MetricsFlowSchema is the executing load of one flow schema.
type MetricsFlowSchema struct {
	Name              string   `json:"name"`
	ExecutingSeats    *float64 `json:"executingSeats"`
	ExecutingRequests *float64 `json:"executingRequests"`
}

// MissingMetric is a metric with no series, and why.
type MissingMetric struct {
	Name       string `json:"name"`
	Metric     string `json:"metric"`
	Reason     string `json:"reason"`
	ReadAsZero bool   `json:"readAsZero"`
}

// UnknownMetric is a family or label set the mapping does not know.
type UnknownMetric struct {
	Name   string   `json:"name"`
	Labels []string `json:"labels,omitempty"`
	Reason string   `json:"reason"`
}

// MetricsBlindSpot says what a column cannot show.
type MetricsBlindSpot struct {
	Metric string `json:"metric"`
	Text   string `json:"text"`
	Source string `json:"source"`
}

// jsonNum maps the model's NaN (absent) and infinities to null.
func metricsJSONNum(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func metricsDocument(r metrics.Report) WatchMetricsDoc {
	doc := WatchMetricsDoc{APIVersion: MetricsAPIVersion, Kind: MetricsKind, APIServers: []APIServerMetrics{}}
	for _, a := range r.APIServers {
		doc.APIServers = append(doc.APIServers, metricsServerDoc(a))
	}
	return doc
}

func metricsServerDoc(a metrics.APIServer) APIServerMetrics {
	d := APIServerMetrics{Name: a.Name}
	snap := metricsSnapshot(a)
	if a.Err != nil {
		d.Error = a.Err.Error()
	}
	if snap == nil {
		if d.Error == "" {
			d.Error = "no sample"
		}
		return d
	}
	d.Source = snap.Source
	d.CapturedAt = metricsTime(snap.CapturedAt)
	v := snap.Version
	d.Version = &MetricsVersion{Release: v.Release.String(), GitVersion: v.GitVersion, From: v.From, Evidence: v.Evidence}
	if !v.Min.IsZero() {
		d.Version.Min = v.Min.String()
	}
	if !v.Max.IsZero() {
		d.Version.Max = v.Max.String()
	}
	d.Goroutines, d.ResidentMemoryBytes = metricsJSONNum(snap.Goroutines), metricsJSONNum(snap.ResidentMemoryBytes)
	d.ProcessStartTime = metricsUnixTime(snap.ProcessStartTime)

	rates := map[string]metrics.ResourceRate{}
	if a.Rates != nil {
		d.Sampling = &MetricsSampling{
			FirstCapturedAt: metricsTime(a.Rates.First.CapturedAt),
			IntervalSeconds: a.Rates.Interval.Seconds(),
			Restarted:       a.Rates.Restarted,
		}
		for _, rr := range a.Rates.Resources {
			rates[rr.Current.Key()] = rr
		}
	}
	d.Resources = []ResourceMetrics{}
	for _, res := range snap.Resources {
		rm := ResourceMetrics{
			Group: res.Group, Resource: res.Resource, Kind: res.Kind,
			Watchers: metricsJSONNum(res.Watchers), InitEvents: metricsJSONNum(res.InitEvents),
			TerminatedWatchers: metricsJSONNum(res.TerminatedWatchers), EventsDispatched: metricsJSONNum(res.EventsDispatched),
			CacheCapacity: metricsJSONNum(res.CacheCapacity), RegisteredWatchers: metricsJSONNum(res.RegisteredWatchers),
			EventsReceived: metricsJSONNum(res.EventsReceived), CacheInitializations: metricsJSONNum(res.CacheInitializations),
			CacheResourceVersion: metricsJSONNum(res.CacheResourceVersion), WatchEvents: metricsJSONNum(res.WatchEvents),
			WatchEventBytes: metricsJSONNum(res.WatchEventBytes), WatchLists: metricsJSONNum(res.WatchLists),
			WatchListSeconds: metricsJSONNum(res.WatchListSeconds),
		}
		if a.Rates != nil {
			rr, ok := rates[res.Key()]
			if !ok {
				rr = metricsNaNRates()
			}
			rm.ResourceRates = &ResourceRates{
				WatchersChange:                metricsJSONNum(rr.WatchersChange),
				InitEventsPerSecond:           metricsJSONNum(rr.InitEventsPerSecond),
				TerminatedWatchersPerSecond:   metricsJSONNum(rr.TerminatedWatchersPerSecond),
				EventsDispatchedPerSecond:     metricsJSONNum(rr.EventsDispatchedPerSecond),
				EventsReceivedPerSecond:       metricsJSONNum(rr.EventsReceivedPerSecond),
				CacheInitializationsPerSecond: metricsJSONNum(rr.CacheInitializationsPerSecond),
				WatchEventsPerSecond:          metricsJSONNum(rr.WatchEventsPerSecond),
				WatchEventBytesPerSecond:      metricsJSONNum(rr.WatchEventBytesPerSecond),
				WatchListsPerSecond:           metricsJSONNum(rr.WatchListsPerSecond),
			}
		}
		d.Resources = append(d.Resources, rm)
	}
	d.PriorityLevels = []PriorityLevelMetrics{}
	for _, pl := range snap.PriorityLevels {
		pd := PriorityLevelMetrics{Name: pl.Name, ExecutingSeats: metricsJSONNum(pl.ExecutingSeats), LimitSeats: metricsJSONNum(pl.LimitSeats), ExecutingRequests: metricsJSONNum(pl.ExecutingRequests)}
		for _, fs := range pl.FlowSchemas {
			pd.FlowSchemas = append(pd.FlowSchemas, MetricsFlowSchema{Name: fs.Name, ExecutingSeats: metricsJSONNum(fs.ExecutingSeats), ExecutingRequests: metricsJSONNum(fs.ExecutingRequests)})
		}
		d.PriorityLevels = append(d.PriorityLevels, pd)
	}
	d.Missing = []MissingMetric{}
	for _, m := range snap.Missing {
		d.Missing = append(d.Missing, MissingMetric{Name: strings.Join(m.Names, ","), Metric: string(m.Metric), Reason: m.Reason, ReadAsZero: m.ReadAsZero})
	}
	for _, u := range snap.Unknown {
		d.Unknown = append(d.Unknown, UnknownMetric{Name: u.Name, Labels: u.Labels, Reason: u.Reason})
	}
	for _, b := range snap.BlindSpots {
		d.BlindSpots = append(d.BlindSpots, MetricsBlindSpot{Metric: string(b.Metric), Text: b.Text, Source: b.Source})
	}
	d.Notes = append(d.Notes, snap.Notes...)
	if a.Rates != nil {
		d.Notes = append(d.Notes, a.Rates.Notes...)
	}
	return d
}

// currentSnapshot is the snapshot a server's entry shows: the second one
// when there are rates.
func metricsSnapshot(a metrics.APIServer) *metrics.Snapshot {
	if a.Rates != nil && a.Rates.Second != nil {
		return a.Rates.Second
	}
	return a.Snapshot
}

func metricsNaNRates() metrics.ResourceRate {
	n := math.NaN()
	return metrics.ResourceRate{WatchersChange: n, InitEventsPerSecond: n, TerminatedWatchersPerSecond: n,
		EventsDispatchedPerSecond: n, EventsReceivedPerSecond: n, CacheInitializationsPerSecond: n,
		WatchEventsPerSecond: n, WatchEventBytesPerSecond: n, WatchListsPerSecond: n}
}

func renderMetricsTable(w io.Writer, r metrics.Report, wide bool) error {
	ew := &errWriter{w: w}
	multi := len(r.APIServers) > 1
	withServer := func(name string, cells ...string) []string {
		if multi {
			return append([]string{name}, cells...)
		}
		return cells
	}
	headers := func(h ...string) []string {
		if multi {
			return append([]string{"apiserver"}, h...)
		}
		return h
	}

	// Summary: one line per server.
	sum := NewTable(ew, "apiserver", "release", "goroutines", "memory", "started", "sampling")
	for _, a := range r.APIServers {
		snap := metricsSnapshot(a)
		if snap == nil {
			msg := "no sample"
			if a.Err != nil {
				msg = a.Err.Error()
			}
			if err := sum.Append(a.Name, "error: "+msg); err != nil {
				return err
			}
			continue
		}
		sampling := "one sample"
		if a.Rates != nil {
			sampling = "rates over " + a.Rates.Interval.Round(time.Second).String()
			if a.Rates.Restarted {
				sampling += " (restarted)"
			}
		}
		if err := sum.Append(a.Name, snap.Version.String(), metricsCount(snap.Goroutines), metricsBytes(snap.ResidentMemoryBytes),
			metricsStarted(snap.ProcessStartTime, snap.CapturedAt), sampling); err != nil {
			return err
		}
	}
	if err := sum.Render(); err != nil {
		return err
	}

	// Resources.
	anyRates := false
	for _, a := range r.APIServers {
		if a.Rates != nil {
			anyRates = true
		}
	}
	var cols []string
	if anyRates {
		cols = []string{"resource", "watchers", "init events/s[1]", "terminated/s[2]", "dispatched/s", "cache capacity"}
		if wide {
			cols = append(cols, "watchers change", "received/s", "watch events/s", "watch bytes/s", "watch lists/s", "cache inits/s", "init events[1]", "terminated[2]")
		}
	} else {
		cols = []string{"resource", "watchers", "init events[1]", "terminated watchers[2]", "events dispatched", "cache capacity"}
		if wide {
			cols = append(cols, "events received", "watch events", "watch bytes", "watch lists", "cache inits", "cache rv")
		}
	}
	rt := NewTable(ew, headers(cols...)...)
	shown, hidden := 0, 0
	for _, a := range r.APIServers {
		snap := metricsSnapshot(a)
		if snap == nil {
			continue
		}
		rates := map[string]metrics.ResourceRate{}
		if a.Rates != nil {
			for _, rr := range a.Rates.Resources {
				rates[rr.Current.Key()] = rr
			}
		}
		for _, res := range snap.Resources {
			rr, hasRate := rates[res.Key()]
			if !hasRate {
				rr = metricsNaNRates()
			}
			if !wide && !metricsActive(res, rr, a.Rates != nil) {
				hidden++
				continue
			}
			shown++
			var row []string
			if anyRates {
				row = []string{res.Name(), metricsCount(res.Watchers), metricsRate(rr.InitEventsPerSecond), metricsRate(rr.TerminatedWatchersPerSecond),
					metricsRate(rr.EventsDispatchedPerSecond), metricsCount(res.CacheCapacity)}
				if wide {
					row = append(row, metricsSigned(rr.WatchersChange), metricsRate(rr.EventsReceivedPerSecond), metricsRate(rr.WatchEventsPerSecond),
						metricsBytesRate(rr.WatchEventBytesPerSecond), metricsRate(rr.WatchListsPerSecond), metricsRate(rr.CacheInitializationsPerSecond),
						metricsCount(res.InitEvents), metricsCount(res.TerminatedWatchers))
				}
			} else {
				row = []string{res.Name(), metricsCount(res.Watchers), metricsCount(res.InitEvents), metricsCount(res.TerminatedWatchers),
					metricsCount(res.EventsDispatched), metricsCount(res.CacheCapacity)}
				if wide {
					row = append(row, metricsCount(res.EventsReceived), metricsCount(res.WatchEvents), metricsBytes(res.WatchEventBytes),
						metricsCount(res.WatchLists), metricsCount(res.CacheInitializations), metricsCount(res.CacheResourceVersion))
				}
			}
			if err := rt.Append(withServer(a.Name, row...)...); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(ew)
	if shown > 0 {
		if err := rt.Render(); err != nil {
			return err
		}
	}
	if hidden > 0 {
		fmt.Fprintf(ew, "(%d more %s without watchers or watch cache activity: -o wide shows all)\n", hidden, metricsPlural(hidden, "resource", "resources"))
	}

	// Priority levels.
	var plCols []string
	plCols = []string{"priority level", "executing seats[3]", "limit seats", "used", "executing requests"}
	if wide {
		plCols = append(plCols, "flow schemas (seats/requests)")
	}
	pt := NewTable(ew, headers(plCols...)...)
	levels := 0
	for _, a := range r.APIServers {
		snap := metricsSnapshot(a)
		if snap == nil {
			continue
		}
		for _, pl := range snap.PriorityLevels {
			levels++
			row := []string{pl.Name, metricsCount(pl.ExecutingSeats), metricsCount(pl.LimitSeats), metricsPercent(pl.ExecutingSeats, pl.LimitSeats), metricsCount(pl.ExecutingRequests)}
			if wide {
				var fs []string
				for _, f := range pl.FlowSchemas {
					fs = append(fs, fmt.Sprintf("%s=%s/%s", f.Name, metricsCount(f.ExecutingSeats), metricsCount(f.ExecutingRequests)))
				}
				row = append(row, orDash(strings.Join(fs, ",")))
			}
			if err := pt.Append(withServer(a.Name, row...)...); err != nil {
				return err
			}
		}
	}
	if levels > 0 {
		fmt.Fprintln(ew)
		if err := pt.Render(); err != nil {
			return err
		}
	}

	// Footnotes: blind spots (once), then per-server missing, unknown,
	// notes.
	marks := map[metrics.MetricID]string{metrics.InitEvents: "[1]", metrics.TerminatedWatchers: "[2]", metrics.ExecutingSeats: "[3]"}
	seen := map[metrics.MetricID]bool{}
	var blind []string
	for _, a := range r.APIServers {
		if snap := metricsSnapshot(a); snap != nil {
			for _, b := range snap.BlindSpots {
				if !seen[b.Metric] {
					seen[b.Metric] = true
					blind = append(blind, fmt.Sprintf("%s %s %s [%s]", marks[b.Metric], metricsNameFor(b.Metric), b.Text, b.Source))
				}
			}
		}
	}
	if len(blind) > 0 {
		fmt.Fprintln(ew)
		fmt.Fprintln(ew, "Blind spots:")
		for _, b := range blind {
			fmt.Fprintf(ew, "  %s\n", b)
		}
	}
	for _, a := range r.APIServers {
		snap := metricsSnapshot(a)
		if snap == nil {
			continue
		}
		prefix := ""
		if multi {
			prefix = a.Name + ": "
		}
		if len(snap.Missing) > 0 {
			fmt.Fprintln(ew)
			fmt.Fprintf(ew, "%sMissing metrics:\n", prefix)
			for _, m := range snap.Missing {
				fmt.Fprintf(ew, "  %s: %s\n", strings.Join(m.Names, ", "), m.Reason)
			}
		}
		if len(snap.Unknown) > 0 {
			fmt.Fprintln(ew)
			fmt.Fprintf(ew, "%sUnknown metrics (not used):\n", prefix)
			for _, u := range snap.Unknown {
				fmt.Fprintf(ew, "  %s{%s}: %s\n", u.Name, strings.Join(u.Labels, ","), u.Reason)
			}
		}
		notes := append([]string(nil), snap.Notes...)
		if a.Rates != nil {
			notes = append(notes, a.Rates.Notes...)
		}
		if len(notes) > 0 {
			fmt.Fprintln(ew)
			fmt.Fprintf(ew, "%sNotes:\n", prefix)
			for _, n := range notes {
				fmt.Fprintf(ew, "  %s\n", n)
			}
		}
		if wide && len(snap.Version.Evidence) > 0 {
			fmt.Fprintln(ew)
			fmt.Fprintf(ew, "%sVersion evidence:\n", prefix)
			for _, e := range snap.Version.Evidence {
				fmt.Fprintf(ew, "  %s\n", e)
			}
		}
	}
	return ew.err
}

// active reports whether a resource belongs in the narrow table: it has
// watchers, or watchers were replayed to or terminated on it.
func metricsActive(res metrics.Resource, rr metrics.ResourceRate, rates bool) bool {
	if res.Watchers > 0 || res.TerminatedWatchers > 0 || res.InitEvents > 0 {
		return true
	}
	// Not the dispatch rate: every cached resource dispatches a few events
	// a minute (etcd progress notifications count too).
	return rates && (rr.InitEventsPerSecond > 0 || rr.TerminatedWatchersPerSecond > 0)
}

func metricsNameFor(id metrics.MetricID) string {
	if m, ok := metrics.CatalogMetric(id); ok {
		if names := m.Names(); len(names) > 0 {
			return names[0] + ":"
		}
	}
	return string(id) + ":"
}

// count prints an absent value as "-" and a whole number without decimals.
func metricsCount(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func metricsSigned(v float64) string {
	if !math.IsNaN(v) && v > 0 {
		return "+" + metricsCount(v)
	}
	return metricsCount(v)
}

func metricsRate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// bytesText prints a byte count with binary units, as kubectl prints
// quantities (Ki, Mi, Gi).
func metricsBytes(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	units := []string{"", "Ki", "Mi", "Gi", "Ti"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return metricsCount(v)
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + units[i]
}

func metricsBytesRate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v < 1024:
		return metricsRate(v) + "/s"
	}
	return metricsBytes(v) + "/s"
}

func metricsPercent(part, whole float64) string {
	if math.IsNaN(part) || math.IsNaN(whole) || whole <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 0, 64) + "%"
}

// startedText prints the process start time, and its age at capture.
func metricsStarted(start float64, at time.Time) string {
	s := metricsUnixTime(start)
	if s == "" {
		return "-"
	}
	if !at.IsZero() {
		sec, frac := math.Modf(start)
		age := at.Sub(time.Unix(int64(sec), int64(frac*1e9)))
		if age >= 0 {
			s += " (" + age.Round(time.Second).String() + " before capture)"
		}
	}
	return s
}

func metricsUnixTime(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > 1e11 {
		return ""
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC().Format(time.RFC3339)
}

func metricsTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func metricsPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
