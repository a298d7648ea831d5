package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// transportText describes a scenario's transport: its profile, if any,
// then its window and refresh.
func transportText(t api.Transport) string {
	s := fmt.Sprintf("HTTP/2 window %s with %s refresh", byteSize(float64(t.Window)), t.Refresh)
	if t.Refresh == api.RefreshThreshold {
		s = fmt.Sprintf("%s in flight, credit returned per %s read", byteSize(float64(t.Window)), byteSize(float64(t.RefreshBytes)))
	}
	if t.Profile != "" {
		s = fmt.Sprintf("transport %s (%s)", t.Profile, s)
	}
	return s
}

// clientTransportText is a client's own transport in its model cell.
func clientTransportText(t api.Transport) string {
	if t.Profile != "" {
		return string(t.Profile)
	}
	if t.Refresh == api.RefreshThreshold {
		return fmt.Sprintf("threshold %s, %s in flight", byteSize(float64(t.RefreshBytes)), byteSize(float64(t.Window)))
	}
	return fmt.Sprintf("%s, %s window", t.Refresh, byteSize(float64(t.Window)))
}

// printReplay writes a replay result: one row per client with one cell
// per column (completed / stopped at t=... / blocked at end), then one row
// per column with what it left behind, then the verdict; wide adds the
// events each client received. Under NoHeaders it is the clients' rows
// alone.
func printReplay(t *text, r *api.Replay) error {
	if t.opts.NoHeaders {
		return replayClients(t, r)
	}
	t.printf("SCENARIO %s: %s virtual, stall timeout %s, %s unless a client says otherwise\n",
		EscapeCell(r.Scenario), seconds(r.DurationSeconds), seconds(r.StallTimeoutSeconds), transportText(r.Transport))
	if r.Description != "" {
		t.printf("%s\n", r.Description)
	}
	t.println()
	if err := replayClients(t, r); err != nil {
		return err
	}
	t.println()
	if err := replayColumns(t, r); err != nil {
		return err
	}
	if r.Timeline != nil {
		t.printf("\nTIMELINE watcher goroutines parked in sendWatchCacheEvent, %s per character:\n", seconds(r.TickSeconds*float64(sparkStride(len(r.Timeline.Seconds)))))
		width := 0
		for _, s := range r.Timeline.Series {
			width = max(width, len(s.Column))
		}
		for _, s := range r.Timeline.Series {
			lo, hi := minMax(s.Blocked)
			t.printf("  %-*s  %s  (min %d, max %d)\n", width, s.Column, sparkline(s.Blocked), lo, hi)
		}
	}
	t.printf("\nVERDICT %s\n", r.Verdict.Summary)
	if r.Verdict.Fidelity != "" {
		t.printf("FIDELITY upstream vs unpatched: %s\n", r.Verdict.Fidelity)
	}
	for _, n := range r.Verdict.Notes {
		t.printf("NOTE %s\n", n)
	}
	return nil
}

// replayClients is one row per client, one cell per column.
func replayClients(t *text, r *api.Replay) error {
	wide := t.opts.wide()
	headers := []string{"client", "model", "scope"}
	for _, c := range r.Columns {
		h := c.Name
		if c.Release != "" {
			// The upstream column of another release (replay
			// --upstream-release): say which.
			h += " " + c.Release
		}
		headers = append(headers, h)
	}
	tb := t.table(t.opts.NoHeaders, headers...)
	if len(r.Columns) > 0 {
		for i, cl := range r.Columns[0].Clients {
			model := cl.Model
			if cl.Transport != nil {
				model += " (" + clientTransportText(*cl.Transport) + ")"
			}
			row := []string{cl.Name, model, scope(cl.Scope)}
			for _, c := range r.Columns {
				if i < len(c.Clients) {
					row = append(row, cell(c.Clients[i], r.DurationSeconds, r.StallTimeoutSeconds, wide))
				}
			}
			if err := tb.append(row...); err != nil {
				return err
			}
		}
	}
	return tb.render()
}

// replayColumns is one row per column: what it left behind, and, when
// clients relisted, how often they came back and the seats that took.
func replayColumns(t *text, r *api.Replay) error {
	headers := []string{"column", "blocked goroutines", "watchers alive", "handlers blocked in write", "held objects", "held bytes", "apf seat-seconds", "closed by dispatcher", "stopped by stall timeout"}
	returns := false
	for _, c := range r.Columns {
		returns = returns || c.Returns > 0
	}
	if returns {
		headers = append(headers, "client returns", "returns' seat-seconds")
	}
	ct := t.table(false, headers...)
	for _, c := range r.Columns {
		var term, stall int64
		for _, x := range c.Counters {
			term += x.TerminatedWatchers
			stall += x.StalledWatchers
		}
		stalled := fmt.Sprint(stall)
		if c.Name != api.ColumnPR141899 && c.Name != api.ColumnComplete {
			stalled = "-"
		}
		row := []string{c.Name, fmt.Sprint(c.BlockedGoroutines), fmt.Sprint(c.WatcherGoroutines), fmt.Sprint(c.HandlersBlockedInWrite),
			fmt.Sprint(c.HeldObjects), byteSize(float64(c.HeldBytes)), english.Number(c.APFSeatSeconds), fmt.Sprint(term), stalled}
		if returns {
			row = append(row, fmt.Sprint(c.Returns), english.Number(c.ReturnSeatSeconds))
		}
		if err := ct.append(row...); err != nil {
			return err
		}
	}
	return ct.render()
}

func scope(s string) string { return strings.TrimPrefix(s, "namespace ") }

// cell says how one client ended in one column, after its loop if the
// server closed it and it came back (loopText).
// end and stall are the replay's duration and stall timeout: a client that
// made progress within the last stall timeout is in progress, not stuck.
func cell(c api.ClientResult, end, stall float64, wide bool) string {
	s := watchCell(c, end, stall)
	if c.Returns > 0 {
		s = loopText(c) + "; last " + s
	}
	if wide {
		s += fmt.Sprintf(", %d/%d events, %d window updates", c.EventsReceived, c.InitialEvents, c.WindowUpdates)
	}
	return s
}

// loopText says how often the server closed a client that came back, what
// the returns held of APF, and whether it ever had its initial events.
func loopText(c api.ClientResult) string {
	s := fmt.Sprintf("closed %d time%s, back %d (%s seat-seconds)", c.Closures, english.Plural(c.Closures, "", "s"),
		c.Returns, english.Number(c.ReturnSeatSeconds))
	if c.InitialDoneAtSeconds == nil {
		return s + ", never had its initial events"
	}
	return s + fmt.Sprintf(", initial events by t=%s", seconds(*c.InitialDoneAtSeconds))
}

// watchCell says how the client's (last) watch ended.
func watchCell(c api.ClientResult, end, stall float64) string {
	var s string
	switch c.Outcome {
	case api.OutcomeCompleted:
		s = "completed"
		if c.InitialDoneAtSeconds != nil && c.InitialEvents > 0 {
			s = fmt.Sprintf("completed (initial events by t=%s)", seconds(*c.InitialDoneAtSeconds))
		}
	case api.OutcomeStopped:
		s = fmt.Sprintf("stopped at t=%s", seconds(*c.StoppedAtSeconds))
		if c.LastProgressSeconds != nil && *c.LastProgressSeconds <= *c.StoppedAtSeconds {
			s += fmt.Sprintf(" (%s after last progress)", seconds(*c.StoppedAtSeconds-*c.LastProgressSeconds))
		}
		switch {
		case c.HandlerBlockedInWrite && !c.ClientTold:
			s += ", handler still blocked writing, client not told"
		case c.ClientTold:
			s += ", client told"
		}
	case api.OutcomeBlocked:
		s = "still blocked at end"
		if c.LastProgressSeconds != nil {
			s += fmt.Sprintf(" (no progress since t=%s)", seconds(*c.LastProgressSeconds))
			if end-*c.LastProgressSeconds < stall {
				s = fmt.Sprintf("still in its initial events at end (last progress t=%s)", seconds(*c.LastProgressSeconds))
			}
		}
	case api.OutcomeDisconnected:
		s = fmt.Sprintf("disconnected at t=%s", seconds(*c.DisconnectedAtSeconds))
	default:
		s = string(c.Outcome)
	}
	return s
}

// seconds writes a duration in seconds as Go does ("90s" -> "1m30s").

const sparkWidth = 60

func sparkStride(n int) int { return max(1, (n+sparkWidth-1)/sparkWidth) }

// sparkline draws a series in at most sparkWidth characters, each the
// maximum of its stride.
func sparkline(v []int) string {
	const levels = "▁▂▃▄▅▆▇█"
	runes := []rune(levels)
	_, hi := minMax(v)
	stride := sparkStride(len(v))
	var b strings.Builder
	for i := 0; i < len(v); i += stride {
		m := 0
		for _, x := range v[i:min(i+stride, len(v))] {
			m = max(m, x)
		}
		idx := 0
		if hi > 0 {
			idx = m * (len(runes) - 1) / hi
		}
		if m == 0 {
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(runes[idx])
	}
	return strings.TrimRight(b.String(), " ")
}

func minMax(v []int) (lo, hi int) {
	for i, x := range v {
		if i == 0 || x < lo {
			lo = x
		}
		hi = max(hi, x)
	}
	return lo, hi
}

// Colors of the timeline's series, by column.
var seriesColors = map[string]string{
	api.ColumnUpstream:  "#1f77b4",
	api.ColumnUnpatched: "#ff7f0e",
	api.ColumnPR141899:  "#2ca02c",
	api.ColumnComplete:  "#9467bd",
}

// ErrNoTimeline is WriteReplaySVG's refusal of a result recorded without
// a timeline. The CLI says which flag records one.
var ErrNoTimeline = errors.New("the result has no timeline")

// WriteReplaySVG draws the result's timeline, blocked watcher goroutines
// per column over virtual time, as a standalone SVG chart (the file of
// replay --svg, beside the printed document).
func WriteReplaySVG(w io.Writer, r *api.Replay) error {
	if r.Timeline == nil || len(r.Timeline.Seconds) == 0 {
		return ErrNoTimeline
	}
	const (
		width, height             = 880, 420
		left, right, top, bottom  = 70, 170, 50, 60
		plotW, plotH              = width - left - right, height - top - bottom
		dash                      = "6,4"
		fontFamily                = "Helvetica, Arial, sans-serif"
		titleSize, labelSize, tks = 16, 13, 11
	)
	xs := r.Timeline.Seconds
	xmax := xs[len(xs)-1]
	if xmax <= 0 {
		xmax = 1
	}
	ymax := 1
	for _, s := range r.Timeline.Series {
		_, hi := minMax(s.Blocked)
		ymax = max(ymax, hi)
	}
	ystep := math.Max(1, niceStep(float64(ymax)/5))
	ytop := ystep * math.Ceil(float64(ymax)/ystep)
	yticks := int(math.Round(ytop / ystep))
	px := func(x float64) float64 { return left + x/xmax*plotW }
	py := func(y float64) float64 { return top + plotH - y/ytop*plotH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">`+"\n", width, height, width, height, fontFamily)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="28" font-size="%d" font-weight="bold">%s: watcher goroutines parked in sendWatchCacheEvent (stall timeout %s)</text>`+"\n", left, titleSize, xmlEscape(r.Scenario), seconds(r.StallTimeoutSeconds))
	// Axes and grid.
	for i := 0; i <= yticks; i++ {
		y := ystep * float64(i)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, py(y), left+plotW, py(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="%d" text-anchor="end">%s</text>`+"\n", left-8, py(y)+4, tks, english.Number(y))
	}
	xstep := timeStep(xmax / 6)
	for x := 0.0; x <= xmax+1e-9; x += xstep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", px(x), top, px(x), top+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="%d" text-anchor="middle">%s</text>`+"\n", px(x), top+plotH+18, tks, seconds(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", left, top, plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="%d" text-anchor="middle">virtual time</text>`+"\n", left+plotW/2, height-15, labelSize)
	fmt.Fprintf(&b, `<text x="18" y="%d" font-size="%d" text-anchor="middle" transform="rotate(-90 18 %d)">goroutines parked sending to a full result channel</text>`+"\n", top+plotH/2, labelSize, top+plotH/2)
	// Series, drawn as steps; upstream dashed so that an identical
	// unpatched line under it stays visible.
	for i, s := range r.Timeline.Series {
		color := seriesColors[s.Column]
		if color == "" {
			color = "#555"
		}
		var pts strings.Builder
		for j, v := range s.Blocked {
			if j >= len(xs) {
				break
			}
			if j > 0 {
				fmt.Fprintf(&pts, "%.1f,%.1f ", px(xs[j]), py(float64(s.Blocked[j-1])))
			}
			fmt.Fprintf(&pts, "%.1f,%.1f ", px(xs[j]), py(float64(v)))
		}
		style := ""
		if s.Column == api.ColumnUpstream {
			style = ` stroke-dasharray="` + dash + `"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%d"%s points="%s"/>`+"\n", color, 3-min(i, 1), style, strings.TrimSpace(pts.String()))
		ly := top + 20 + i*24
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"%s/>`+"\n", left+plotW+15, ly, left+plotW+45, ly, color, style)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="%d">%s</text>`+"\n", left+plotW+52, ly+4, labelSize, xmlEscape(s.Column))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// timeStep picks a tick spacing that reads as a round duration.
func timeStep(raw float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200} {
		if raw <= s {
			return s
		}
	}
	return niceStep(raw)
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
