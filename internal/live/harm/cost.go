package harm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
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

// WholeProcessNote is ServerCost.Note when the figures could be read: what
// they do not single out.
const WholeProcessNote = "the runtime's histogram is the whole server process's: other non-GC stop-the-world pauses in the run's window (another client's dump or trace) are counted too"

// finishCost reads /metrics once more, after the instance's last fetch
// (only when an earlier read gave the histogram), and sets ir.Cost: the pause histogram's growth since the first read and
// every byte read from the instance.
func finishCost(ctx context.Context, cfg model.Config, c *model.Client, ir *model.InstanceResult) {
	m := &ir.Meter
	cost := &api.ServerCost{}
	if !c.Inst.Pinned && (c.Conn == nil || c.Conn.Redialed()) {
		// Through a load balancer the two /metrics reads may reach two
		// processes: their histograms cannot be subtracted (unless both
		// went over the instance's own connection, not dialed again since
		// its process was verified).
		m.First, m.Note = nil, "read through the kubeconfig host, not pinned to one process: the pauses counted by two /metrics reads that may reach different servers are not compared"
	}
	// Without a first reading there is nothing to compare with: no second
	// read (a server whose /metrics failed is not asked again).
	var last metrics.Pauses
	var err error
	if m.First != nil {
		var n int64
		last, n, err = readPauses(ctx, c)
		m.ExtraBytes += n
	}
	switch {
	case m.First == nil && m.Note == "":
		cost.Note = "no /metrics read of the run succeeded: its stop-the-world pauses cannot be measured"
	case m.First == nil:
		cost.Note = m.Note
	case err != nil:
		cost.Note = fmt.Sprintf("the /metrics read after the last fetch failed, so the pauses are not measured: %v", err)
	default:
		d, err := last.Since(*m.First)
		if err != nil {
			cost.Note = fmt.Sprintf("%s: %v (the server restarted during the run?)", c.Inst.Name, err)
			break
		}
		cost.Pauses, cost.PauseSeconds, cost.LargestPauseAtMostSeconds = d.Count, d.Sum, d.LargestAtMost
		if d.StoppingKnown {
			cost.StoppingSeconds = &d.Stopping
		}
		if math.IsInf(d.LargestAtMost, 1) {
			cost.LargestPauseAtMostSeconds = -1
		}
		cost.PausesMeasured, cost.Note = true, WholeProcessNote
	}
	cost.BytesRead = bytesRead(ir)
	ir.Cost = cost
	if cfg.Progress != nil {
		cfg.Progressf("%s: cost of this run: %s, %d bytes read", c.Inst.Name, pausesText(cost), cost.BytesRead)
	}
}

// bytesRead is every byte read from the instance: its samples' fetches,
// its trace and what the meter counted beside them.
func bytesRead(ir *model.InstanceResult) int64 {
	n := ir.Meter.ExtraBytes + ir.TraceBytes()
	for _, s := range ir.Samples {
		for _, f := range s.Fetches {
			n += f.Bytes
		}
	}
	return n
}

// readPauses GETs /metrics (bounded) and reads its pause histogram, the
// one family parsed (metrics.Parser.Families); n is the bytes read.
func readPauses(ctx context.Context, c *model.Client) (p metrics.Pauses, n int64, err error) {
	resp, err := c.Get(ctx, model.PathOf(api.FileMetrics))
	if err != nil {
		return p, 0, err
	}
	defer resp.Close()
	cr := &model.CountingReader{R: resp.Body}
	b, err := io.ReadAll(io.LimitReader(cr, model.MaxMetricsBytes+1))
	if err != nil {
		return p, cr.N, fmt.Errorf("%s: reading /metrics: %w", c.Inst.Name, err)
	}
	if len(b) > model.MaxMetricsBytes {
		return p, cr.N, fmt.Errorf("%s: /metrics is larger than %d MiB", c.Inst.Name, model.MaxMetricsBytes>>20)
	}
	s, err := metrics.Parser{Families: []string{metrics.SchedPausesOther, metrics.SchedPausesStoppingOther}}.Parse(bytes.NewReader(b), c.Inst.Name+"/metrics")
	if err != nil {
		return p, cr.N, err
	}
	p, ok, err := metrics.SchedPauses(s)
	if err == nil && !ok {
		err = fmt.Errorf("%s: /metrics has no %s any more", c.Inst.Name, metrics.SchedPausesOther)
	}
	return p, cr.N, err
}

// FinishCosts measures the cost of the run to every instance still read
// (clients[i] non-nil), concurrently.
func FinishCosts(ctx context.Context, cfg model.Config, clients []*model.Client, results []model.InstanceResult) {
	if len(cfg.Only) != 0 || ctx.Err() != nil {
		return
	}
	model.Parallel(ctx, cfg.Parallel, len(clients), func(i int) {
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
