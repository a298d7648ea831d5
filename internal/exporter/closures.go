package exporter

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Watches the server closed (diagnosis.ClosedBetween), counted between
// consecutive looks of one instance: the growth of
// apiserver_terminated_watchers_total, per resource at once, and by the
// client a look tied them to. A client the server closed first drains what
// was already sent to it, then watches again, seconds to minutes later: the
// look that sees its new watch in APF dump_requests is often a later one
// than the look that counted the closure. So closures not tied at once are
// held, and each later look tries again over the whole span since they
// were first counted (ClosedBetween of the held look and this one), until
// one ties them or closureHold has passed; then they count as "unknown".

// User label values of watchdoctor_watch_closures_by_client_total when no
// single client was tied: several came back (ambiguous), or none did
// (unknown).
const (
	UserAmbiguous = "ambiguous"
	UserUnknown   = "unknown"
)

// closureHold is the least time closures no look has tied wait for a
// later look to tie them; at least two intervals (closureHoldFor).
const closureHold = 3 * time.Minute

// closureHoldFor is the hold with looks every interval: closureHold, or
// two intervals when longer, so that one more look always tries.
func closureHoldFor(interval time.Duration) time.Duration {
	return max(closureHold, 2*interval)
}

type closureKey struct{ apiserver, resource, user string }

// heldKey names the held closures of one resource of one instance.
type heldKey struct{ instance, group, resource string }

// heldClosures are closures of one resource of one instance counted per
// resource and not yet by client: closed of them since base, the /metrics
// of the look before the first of them (its APF dump dropped: a tie reads
// the current look's), first counted at since.
type heldClosures struct {
	base   watches.Sample
	since  time.Time
	closed int
}

// closureCounts are the closures counted since serve started. The
// series per instance are bounded: at most MaxResources resources (the
// rest in resource="other") and TopUsers users per instance (the rest in
// user="other"), the first seen kept. Not safe for concurrent use: the
// Exporter guards it with mu.
type closureCounts struct {
	byResource map[[2]string]float64
	byClient   map[closureKey]float64
	// resources and users are the label values kept per instance.
	resources map[string]map[string]bool
	users     map[string]map[string]bool
	// held are the closures not yet counted by client.
	held map[heldKey]*heldClosures
}

func newClosureCounts() closureCounts {
	return closureCounts{byResource: map[[2]string]float64{}, byClient: map[closureKey]float64{},
		resources: map[string]map[string]bool{}, users: map[string]map[string]bool{}, held: map[heldKey]*heldClosures{}}
}

// bounded returns v when kept[instance] has it or room for it (adding
// it), else Other.
func bounded(kept map[string]map[string]bool, instance, v string, limit int) string {
	set := kept[instance]
	if set == nil {
		set = map[string]bool{}
		kept[instance] = set
	}
	if set[v] {
		return v
	}
	if len(set) >= limit {
		return Other
	}
	set[v] = true
	return v
}

// resourceLabel is the resource label value of group and resource.
func (c *closureCounts) resourceLabel(instance, group, resource string, b bounds) string {
	name := resource
	if group != "" {
		name += "." + group
	}
	return bounded(c.resources, instance, Label(name), b.resources)
}

// addResource counts the closures of fs on instance per resource, and
// holds them for a tie to a client (base: the look before fs's, at now).
func (c *closureCounts) addResource(instance string, fs []api.Finding, base watches.Sample, now time.Time, b bounds) {
	for _, f := range fs {
		if f.Type != api.WatchClosedByServer || f.Closures == nil {
			continue
		}
		res := c.resourceLabel(instance, f.Closures.Group, f.Closures.Resource, b)
		c.byResource[[2]string{instance, res}] += float64(f.Closures.Closed)
		k := heldKey{instance, f.Closures.Group, f.Closures.Resource}
		h := c.held[k]
		if h == nil {
			h = &heldClosures{base: watches.Sample{CapturedAt: base.CapturedAt, MetricsAt: base.MetricsAt, Metrics: base.Metrics}, since: now}
			c.held[k] = h
		}
		h.closed += f.Closures.Closed
	}
}

// heldOf is a copy of instance's held closures.
func (c *closureCounts) heldOf(instance string) map[heldKey]heldClosures {
	out := map[heldKey]heldClosures{}
	for k, h := range c.held {
		if k.instance == instance {
			out[k] = *h
		}
	}
	return out
}

// addClient counts n held closures of k by the client of f (nil: none
// tied) and lets them go.
func (c *closureCounts) addClient(k heldKey, f *api.Finding, n int, b bounds) string {
	delete(c.held, k)
	user := clientLabel(f)
	if user != UserUnknown && user != UserAmbiguous {
		user = bounded(c.users, k.instance, user, b.users)
	}
	res := c.resourceLabel(k.instance, k.group, k.resource, b)
	c.byClient[closureKey{k.instance, res, user}] += float64(n)
	return user
}

// clientLabel is the user label of f's closures: its client's user,
// "ambiguous" with candidates, "unknown" with neither or no f.
func clientLabel(f *api.Finding) string {
	switch {
	case f == nil:
		return UserUnknown
	case len(f.Candidates) > 0:
		return UserAmbiguous
	case f.Client != nil && f.Client.User != "":
		return Label(f.Client.User)
	}
	return UserUnknown
}

func (c *closureCounts) collect(counter func(*prometheus.Desc, float64, ...string)) {
	for k, v := range c.byResource {
		counter(descClosures, v, k[0], k[1])
	}
	for k, v := range c.byClient {
		counter(descClientClosures, v, k.apiserver, k.resource, k.user)
	}
}

// closuresSince counts what the server closed between the instance's
// previous look and this one, tries to tie the closures held so far to a
// client, and keeps this look's sample for the next.
func (e *Exporter) closuresSince(instance string, cur watches.Sample) {
	e.mu.Lock()
	prev, ok := e.prevSample[instance]
	e.prevSample[instance] = cur
	e.mu.Unlock()
	if !ok {
		return
	}
	now := e.cfg.Clock.Now()
	b := bounds{users: e.cfg.TopUsers, resources: e.cfg.MaxResources, levels: e.cfg.MaxLevels}
	fs := diagnosis.ClosedBetween(instance, prev, cur)
	for _, f := range fs {
		e.cfg.Logger.Warn("the server closed watches for not keeping up", "apiserver", instance, "resource", f.Closures.Resource, "closed", f.Closures.Closed)
	}
	e.mu.Lock()
	e.closures.addResource(instance, fs, prev, now, b)
	held := e.closures.heldOf(instance)
	e.mu.Unlock()
	e.tieHeld(instance, prev, cur, fs, now, held, b)
}

// tieHeld counts by client the held closures of instance that this look
// ties to one (ClosedBetween of their base and cur: a watch of the
// resource in cur's APF dump started after the base), or, as "unknown",
// those held past the hold or that can no longer be tied (cur's /metrics
// shows no growth since the base: a restart since). The rest stay held.
// fs are the findings of prev and cur.
func (e *Exporter) tieHeld(instance string, prev, cur watches.Sample, fs []api.Finding, now time.Time, held map[heldKey]heldClosures, b bounds) {
	// One ClosedBetween per base: the resources held since one look
	// share it.
	byBase := map[*watches.MetricsContext][]api.Finding{prev.Metrics: fs}
	type count struct {
		k heldKey
		f *api.Finding
		n int
		h heldClosures
	}
	var counts []count
	for k, h := range held {
		fs, ok := byBase[h.base.Metrics]
		if !ok {
			fs = diagnosis.ClosedBetween(instance, h.base, cur)
			byBase[h.base.Metrics] = fs
		}
		var f *api.Finding
		for i := range fs {
			if cl := fs[i].Closures; cl != nil && cl.Group == k.group && cl.Resource == k.resource {
				f = &fs[i]
			}
		}
		tied := f != nil && clientLabel(f) != UserUnknown
		lost := f == nil && cur.Metrics != nil
		if !tied && !lost && now.Sub(h.since) < closureHoldFor(e.cfg.Interval) {
			continue // not yet: a later look may see the client back
		}
		counts = append(counts, count{k, f, h.closed, h})
	}
	for _, c := range counts {
		e.mu.Lock()
		user := e.closures.addClient(c.k, c.f, c.n, b)
		e.mu.Unlock()
		args := []any{"apiserver", instance, "resource", c.k.resource, "closed", c.n, "user", user, "since", c.h.since.UTC().Format(time.RFC3339)}
		switch {
		case c.f != nil && len(c.f.Candidates) > 0:
			args = append(args, "candidates", c.f.CandidateUsers())
		case c.f != nil && c.f.Client != nil && c.f.Client.User != "":
			args = append(args, "match", string(c.f.Client.Match))
		}
		e.cfg.Logger.Info("closed watches counted by client", args...)
	}
}
