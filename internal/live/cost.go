package live

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// What a run cost each API server is measured by the server's own
// runtime: go_sched_pauses_total_other_seconds (runtime/metrics
// /sched/pauses/total/other:seconds, Go 1.22+) counts every stop-the-world
// pause that is not a GC's, a debug=2 goroutine dump and the start of an
// execution trace among them. Its growth between the first /metrics read
// of the run and one more read after the last fetch bounds what the run
// cost, the other pauses of the process in that window included (the
// histogram is the whole process's, not ours alone).

// wholeProcessNote is ServerCost.Note when the figures could be read: what
// they do not single out.
const wholeProcessNote = "the runtime's histogram is the whole server process's: other non-GC stop-the-world pauses in the run's window (another client's dump or trace) are counted too"

// costMeter is one instance's cost as the run goes: the pause histogram at
// its first /metrics read and the bytes of reads not recorded as a fetch.
// Used by one goroutine at a time (an instance's samples are sequential).
type costMeter struct {
	first *metrics.Pauses
	// note is why no pause figure can be given (no histogram, a parse
	// error), set by the first read that tells.
	note string
	// extraBytes are bytes read outside the samples' fetches (the final
	// /metrics read, the load-balancer check).
	extraBytes int64
}

// notePauses records the histogram of a /metrics read, when it is the
// first successful one of the run.
func (m *costMeter) notePauses(s *metrics.Sample) {
	if m.first != nil {
		return
	}
	p, ok, err := metrics.SchedPauses(s)
	switch {
	case err != nil:
		m.note = err.Error()
	case !ok:
		m.note = fmt.Sprintf("the server exports no %s (a Go runtime older than 1.22, or no runtime metrics collector): its stop-the-world pauses cannot be measured", metrics.SchedPausesOther)
	default:
		m.first, m.note = &p, ""
	}
}

// finishCost reads /metrics once more, after the instance's last fetch
// (only when an earlier read gave the histogram), and sets ir.Cost: the pause histogram's growth since the first read and
// every byte read from the instance.
func finishCost(ctx context.Context, cfg Config, c *client, ir *InstanceResult) {
	m := &ir.cost
	cost := &api.ServerCost{}
	if !c.inst.Pinned && (c.conn == nil || c.conn.redialed()) {
		// Through a load balancer the two /metrics reads may reach two
		// processes: their histograms cannot be subtracted (unless both
		// went over the instance's own connection, not dialed again since
		// its process was verified).
		m.first, m.note = nil, "read through the kubeconfig host, not pinned to one process: the pauses counted by two /metrics reads that may reach different servers are not compared"
	}
	// Without a first reading there is nothing to compare with: no second
	// read (a server whose /metrics failed is not asked again).
	var last metrics.Pauses
	var err error
	if m.first != nil {
		var n int64
		last, n, err = readPauses(ctx, c)
		m.extraBytes += n
	}
	switch {
	case m.first == nil && m.note == "":
		cost.Note = "no /metrics read of the run succeeded: its stop-the-world pauses cannot be measured"
	case m.first == nil:
		cost.Note = m.note
	case err != nil:
		cost.Note = fmt.Sprintf("the /metrics read after the last fetch failed, so the pauses are not measured: %v", err)
	default:
		d, err := last.Since(*m.first)
		if err != nil {
			cost.Note = fmt.Sprintf("%s: %v (the server restarted during the run?)", c.inst.Name, err)
			break
		}
		cost.Pauses, cost.PauseSeconds, cost.LargestPauseAtMostSeconds = d.Count, d.Sum, d.LargestAtMost
		if d.StoppingKnown {
			cost.StoppingSeconds = &d.Stopping
		}
		if math.IsInf(d.LargestAtMost, 1) {
			cost.LargestPauseAtMostSeconds = -1
		}
		cost.PausesMeasured, cost.Note = true, wholeProcessNote
	}
	cost.BytesRead = m.extraBytes + ir.traceBytes()
	for _, s := range ir.Samples {
		for _, f := range s.Fetches {
			cost.BytesRead += f.Bytes
		}
	}
	ir.Cost = cost
	if cfg.Progress != nil {
		cfg.progress("%s: cost of this run: %s, %d bytes read", c.inst.Name, pausesText(cost), cost.BytesRead)
	}
}

// readPauses GETs /metrics (bounded) and reads its pause histogram, the
// one family parsed (metrics.Parser.Families); n is the bytes read.
func readPauses(ctx context.Context, c *client) (p metrics.Pauses, n int64, err error) {
	resp, err := c.Get(ctx, pathOf(api.FileMetrics))
	if err != nil {
		return p, 0, err
	}
	defer resp.Close()
	cr := &countingReader{r: resp.Body}
	b, err := io.ReadAll(io.LimitReader(cr, maxMetricsBytes+1))
	if err != nil {
		return p, cr.n, fmt.Errorf("%s: reading /metrics: %w", c.inst.Name, err)
	}
	if len(b) > maxMetricsBytes {
		return p, cr.n, fmt.Errorf("%s: /metrics is larger than %d MiB", c.inst.Name, maxMetricsBytes>>20)
	}
	s, err := metrics.Parser{Families: []string{metrics.SchedPausesOther, metrics.SchedPausesStoppingOther}}.Parse(bytes.NewReader(b), c.inst.Name+"/metrics")
	if err != nil {
		return p, cr.n, err
	}
	p, ok, err := metrics.SchedPauses(s)
	if err == nil && !ok {
		err = fmt.Errorf("%s: /metrics has no %s any more", c.inst.Name, metrics.SchedPausesOther)
	}
	return p, cr.n, err
}

// finishCosts measures the cost of the run to every instance still read
// (clients[i] non-nil), concurrently.
func finishCosts(ctx context.Context, cfg Config, clients []*client, results []InstanceResult) {
	if len(cfg.Only) != 0 || ctx.Err() != nil {
		return
	}
	parallel(ctx, cfg.Parallel, len(clients), func(i int) {
		if clients[i] != nil {
			finishCost(ctx, cfg, clients[i], &results[i])
		}
	})
}

// pausesText says the pauses of cost, or that they were not measured and
// why: never "0 pauses" when nothing was measured.
func pausesText(cost *api.ServerCost) string {
	if !cost.PausesMeasured {
		return "stop-the-world pauses not measured (" + cost.Note + ")"
	}
	out := fmt.Sprintf("%d stop-the-world pause(s), %.3f ms in all", cost.Pauses, cost.PauseSeconds*1e3)
	if st := cost.StoppingSeconds; st != nil {
		out += fmt.Sprintf(" (%.3f ms of it stopping the world)", *st*1e3)
	}
	return out
}
