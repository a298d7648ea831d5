package live

import (
	"fmt"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// The content tie (issue 35): an APF requests dump read through the
// kubeconfig host must agree with the /metrics read just before it over
// the same connection. kube-apiserver counts a request in
// apiserver_flowcontrol_current_executing_requests{priority_level,
// flow_schema} from the moment it starts executing until it finishes
// (k8s.io/apiserver v0.37.2 pkg/util/flowcontrol/metrics/metrics.go:234,
// added to at fairqueuing/queueset/queueset.go:678 and :724, taken from
// at :866 in finishRequestLocked, which removes the request from the
// executing sets under the same lock, :934 and :941), and dump_requests
// lists those sets (Dump, :996), executing rows with
// RequestIndexInQueue -1 and their StartTime
// (apf_controller_debug.go:211-216). A request the dump lists as
// executing that started before the /metrics read was executing at it:
// in each pair, such rows are no more than that read's gauge. The read's
// time is its Date header, the server's clock, stamped after the gauges
// were gathered; tieSlack covers the gathering and a second's rounding.
// A dump listing more is of another process than that /metrics.

// executingGaugeFamily is the gauge the content tie reads.
const executingGaugeFamily = "apiserver_flowcontrol_current_executing_requests"

// tieSlack is how long before the /metrics read's Date a dump row must
// have started to count against that read's gauge.
const tieSlack = 5 * time.Second

// unexpectedLabel is the value component-base puts in place of a label
// value not on an --allow-metric-labels list (k8s.io/component-base
// v0.37.2 metrics/options.go:159): a pair the gauge lacks may then be
// counted under it.
const unexpectedLabel = "unexpected"

// apfPair is a priority level and a flow schema.
type apfPair struct{ level, schema string }

// executingGauge is the gauge of one /metrics read: absent says why it
// cannot be used ("" when it can).
type executingGauge struct {
	at     time.Time
	absent string
	pairs  map[apfPair]float64
	// folded is set when a series carries the "unexpected" label value:
	// pairs the gauge lacks are then not checked.
	folded bool
}

// gaugeOf reads the gauge from a /metrics snapshot read at (its Date; the
// zero time when it had none).
func gaugeOf(snap *metrics.Snapshot, at time.Time) executingGauge {
	g := executingGauge{at: at}
	for _, m := range snap.Missing {
		if m.Metric == metrics.ExecutingRequests {
			g.absent = "its /metrics has no " + executingGaugeFamily + " (an older release, the metric disabled or renamed)"
			return g
		}
	}
	for _, u := range snap.Unknown {
		if u.Name == executingGaugeFamily {
			g.absent = fmt.Sprintf("its /metrics' %s is not usable (%s)", executingGaugeFamily, u.Reason)
			return g
		}
	}
	if at.IsZero() {
		g.absent = "its /metrics carried no Date header to compare the dump's start times with"
		return g
	}
	g.pairs = map[apfPair]float64{}
	for _, pl := range snap.PriorityLevels {
		for _, fs := range pl.FlowSchemas {
			if metrics.Absent(fs.ExecutingRequests) {
				continue
			}
			g.pairs[apfPair{pl.Name, fs.Name}] = fs.ExecutingRequests
			if pl.Name == unexpectedLabel || fs.Name == unexpectedLabel {
				g.folded = true
			}
		}
	}
	return g
}

// overcount is a pair in which a dump lists more requests executing
// since before the gauge's read than the gauge counted.
type overcount struct {
	pair  apfPair
	rows  int
	gauge float64
}

// overcounted checks the dump's executing rows against g: the first pair
// (in the dump's order) listing more rows started before g.at - tieSlack
// than g counts, and how many rows were checked. A pair g lacks counts 0,
// unless g is folded.
func overcounted(rows []apf.Request, g executingGauge) (over *overcount, checked int) {
	before := g.at.Add(-tieSlack)
	count := map[apfPair]int{}
	var order []apfPair
	for _, r := range rows {
		if !r.Executing() || r.StartTime.IsZero() || !r.StartTime.Before(before) {
			continue
		}
		p := apfPair{r.PriorityLevel, r.FlowSchema}
		if _, ok := g.pairs[p]; !ok && g.folded {
			continue
		}
		if count[p] == 0 {
			order = append(order, p)
		}
		count[p]++
		checked++
	}
	for _, p := range order {
		if float64(count[p]) > g.pairs[p] {
			return &overcount{pair: p, rows: count[p], gauge: g.pairs[p]}, checked
		}
	}
	return nil, checked
}

// tieByContent checks, on an instance read through the kubeconfig host,
// the APF requests dump against the gauge of the sample's /metrics read
// just before it. A dump listing more makes the sample mixed; what was
// checked, or why nothing could be, is said in the note of checkPinned.
func (sp *sampler) tieByContent(path string, at time.Time) {
	if sp.c.Inst.Pinned || sp.look.Requests == nil || sp.sample.Mixed != "" {
		return
	}
	g := sp.gauge
	if g.absent != "" {
		sp.tie = "its APF requests dump could not be checked against /metrics: " + g.absent
		return
	}
	over, checked := overcounted(sp.look.Requests.Requests, g)
	if over == nil {
		sp.tie = fmt.Sprintf("its APF requests dump lists no more requests executing per priority level and flow schema since %s before its /metrics than that read's %s counted (%d rows checked)", tieSlack, executingGaugeFamily, checked)
		return
	}
	dumpAt := "at " + at.UTC().Format(time.RFC3339)
	sp.mixed(fmt.Sprintf("sample %d: its APF requests dump (GET %s, %s) lists %d request(s) of priority level %q, flow schema %q executing since more than %s before its /metrics (read at %s, process_start_time_seconds %.2f), whose %s counted %g there: the dump is of another API server process than that /metrics, so the load balancer sends this connection's /debug paths elsewhere",
		sp.n, path, dumpAt, over.rows, over.pair.level, over.pair.schema, tieSlack, g.at.UTC().Format(time.RFC3339), sp.look.Start, executingGaugeFamily, over.gauge), true)
}
