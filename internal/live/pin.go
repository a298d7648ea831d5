package live

import (
	"fmt"
	"math"

	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Evidence without identity, through a load balancer (issue 35). Only
// /metrics says which API server process answered it
// (process_start_time_seconds); an APF dump, a goroutine profile or dump
// and /version say nothing of it. On an instance read through the
// kubeconfig host (not Pinned), such a fetch is the connection's
// process's only when the connection is shown to stay on it: the
// sample's /metrics, and one identity probe (discovery.FingerprintOf)
// right after each fetch without identity, so that each such fetch sits
// between two probes over the same connection, not dialed again during
// the sample; and at least pinProbes reads of the process in all,
// counting the one the connection was kept for (the search's, or
// SameProcess's). Every one must name the connection's process. Else the
// sample is mixed (api.Sample.Mixed): nothing of it names a client or
// seats. And once one connection of the run reached two processes,
// every sample read through the kubeconfig host is mixed (spreadMixed).
//
// A balancer choosing each request's process at random among n agrees
// with k reads of one connection by chance once in n^(k-1): with
// pinProbes = 6, once in 32 for two processes, for each connection
// alone; for the run, whose every connection must agree, once in 2^(5c)
// over c connections (1 in 1,024 for two). A balancer that routes by
// path (every /metrics to the connection's process, the /debug paths to
// another) agrees with every probe: no probe can tell. The content tie
// (tie.go) catches it whenever the APF requests dump lists, in a
// priority level and flow schema, more requests executing since before
// the sample's /metrics than that /metrics' executing-requests gauge
// counts. Two processes whose executing APF requests agree (the same
// pairs, no more rows than the gauge) pass it too, and their dumps name
// the same clients then; where the gauge is absent the tie is not made,
// and the sample's note says so. docs/diagnose.md says what remains.

// pinProbes is how many reads of a connection's process, all naming it,
// show that the connection stays on it.
const pinProbes = 6

// startPin, after the sample's /metrics, counts the reads of the
// process so far: the one the connection was kept for, and the sample's
// own /metrics when it named the same process. Without a connection of
// its own (one connection through the host, discovery.oneConnection),
// the sample's /metrics names the process the probes must find.
func (sp *sampler) startPin() {
	if sp.c.Inst.Pinned {
		return
	}
	if o := sp.c.Conn; o != nil {
		sp.pin, sp.agreed = o.Process.Start, 1
		if sp.look.Start == sp.pin {
			sp.agreed++
		}
		sp.dials = o.Dials.Load()
		return
	}
	sp.pin = sp.look.Start
	if !math.IsNaN(sp.pin) {
		sp.agreed = 1
	}
}

// probeAfter reads, after a fetch of kind that carries no identity, the
// process behind the connection again; one that is not the connection's
// makes the sample mixed.
func (sp *sampler) probeAfter(kind api.FileKind) {
	if sp.c.Inst.Pinned || kind == api.FileMetrics {
		return
	}
	sp.idless++
	sp.probe("after GET " + sp.fetchPath(kind))
}

func (sp *sampler) fetchPath(kind api.FileKind) string {
	for _, f := range sp.sample.Fetches {
		if f.Kind == kind {
			return f.Path
		}
	}
	return string(kind)
}

// probe is one identity probe, made while the sample is not yet mixed.
func (sp *sampler) probe(when string) {
	if sp.sample.Mixed != "" || sp.down != nil {
		return
	}
	if math.IsNaN(sp.pin) {
		sp.mixed(fmt.Sprintf("sample %d: its /metrics named no API server process, so nothing read through the load balancer can be tied to one", sp.n), false)
		return
	}
	fp, n, err := discovery.FingerprintOf(sp.ctx, sp.c)
	sp.ir.Meter.ExtraBytes += n
	sp.probes++
	sp.probeBytes += n
	switch {
	case err != nil:
		if unreachable(err) {
			sp.down = err
		}
		sp.mixed(fmt.Sprintf("sample %d: the identity probe %s failed (%v): what the sample read cannot be tied to one API server process", sp.n, when, err), false)
	case fp.Start != sp.pin:
		sp.mixed(fmt.Sprintf("sample %d reached different API server processes (process_start_time_seconds %.2f, then %.2f %s): through the load balancer its goroutine dump and APF dump may come from different servers", sp.n, sp.pin, fp.Start, when), !sp.redialed())
	default:
		sp.agreed++
	}
}

// redialed reports whether the connection was dialed again during the
// sample.
func (sp *sampler) redialed() bool {
	o := sp.c.Conn
	return o != nil && o.Dials.Load() != sp.dials
}

// mixed marks the sample mixed, saying why; spread is set when one
// connection reached two processes (spreadMixed then marks every sample
// through the host).
func (sp *sampler) mixed(note string, spread bool) {
	if sp.cfg.Words.APIServers != "" {
		note += "; pin instances with " + sp.cfg.Words.APIServers
	}
	sp.ir.Notes = append(sp.ir.Notes, note)
	sp.sample.Mixed = note
	if spread && sp.ir.Spread == "" {
		sp.ir.Spread = note
	}
	sp.cfg.Progressf("%s: %s", sp.c.Inst.Name, note)
}

// checkPinned ends a sample through the kubeconfig host that read
// evidence without identity: more probes until pinProbes reads named the
// process, then the connection must not have been dialed again since the
// sample began. Its probes are said, with their bytes (counted in the
// instance's cost).
func (sp *sampler) checkPinned() {
	if sp.c.Inst.Pinned || sp.idless == 0 {
		return
	}
	for sp.agreed < pinProbes && sp.sample.Mixed == "" && sp.down == nil && sp.ctx.Err() == nil {
		sp.probe("at the end of the sample")
	}
	if sp.sample.Mixed == "" && sp.redialed() {
		sp.mixed(fmt.Sprintf("sample %d: the connection was dialed again during the sample: its fetches may have reached another API server process than its identity probes", sp.n), false)
	}
	if sp.sample.Mixed == "" && sp.agreed < pinProbes {
		sp.mixed(fmt.Sprintf("sample %d: only %d of the %d reads of the API server process that tie a sample to it were made", sp.n, sp.agreed, pinProbes), false)
	}
	if sp.probes > 0 {
		sp.cfg.Progressf("sample %d/%d: %s: %d identity probe(s) of /metrics, %d bytes", sp.n, sp.cfg.Samples, sp.c.Inst.Name, sp.probes, sp.probeBytes)
	}
	if sp.sample.Mixed == "" {
		note := fmt.Sprintf("sample %d: %d reads of the process over this connection, one right after each of its %d fetches that carry no process identity, all named process_start_time_seconds %.2f (%d identity probes of /metrics, %d bytes)", sp.n, sp.agreed, sp.idless, sp.pin, sp.probes, sp.probeBytes)
		if sp.tie != "" {
			note += "; " + sp.tie
		}
		sp.ir.Notes = append(sp.ir.Notes, note)
	}
}
