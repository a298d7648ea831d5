package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Watches the server closed (diagnosis.ClosedBetween), counted between
// consecutive looks of one instance: the growth of
// apiserver_terminated_watchers_total, per resource, and by the client
// the look tied them to.

// User label values of watchdoctor_watch_closures_by_client_total when no
// single client was tied: several came back (ambiguous), or none did
// (unknown).
const (
	UserAmbiguous = "ambiguous"
	UserUnknown   = "unknown"
)

type closureKey struct{ apiserver, resource, user string }

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
}

func newClosureCounts() closureCounts {
	return closureCounts{byResource: map[[2]string]float64{}, byClient: map[closureKey]float64{},
		resources: map[string]map[string]bool{}, users: map[string]map[string]bool{}}
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

// add counts the closures of fs on instance.
func (c *closureCounts) add(instance string, fs []api.Finding, b bounds) {
	for _, f := range fs {
		if f.Type != api.WatchClosedByServer || f.Closures == nil {
			continue
		}
		name := f.Closures.Resource
		if f.Closures.Group != "" {
			name += "." + f.Closures.Group
		}
		res := bounded(c.resources, instance, Label(name), b.resources)
		user := UserUnknown
		switch {
		case len(f.Candidates) > 0:
			user = UserAmbiguous
		case f.Client != nil && f.Client.User != "":
			user = bounded(c.users, instance, Label(f.Client.User), b.users)
		}
		n := float64(f.Closures.Closed)
		c.byResource[[2]string{instance, res}] += n
		c.byClient[closureKey{instance, res, user}] += n
	}
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
// previous look and this one, and keeps this look's sample for the next.
func (e *Exporter) closuresSince(instance string, cur watches.Sample) {
	e.mu.Lock()
	prev, ok := e.prevSample[instance]
	e.prevSample[instance] = cur
	e.mu.Unlock()
	if !ok {
		return
	}
	fs := diagnosis.ClosedBetween(instance, prev, cur)
	if len(fs) == 0 {
		return
	}
	for _, f := range fs {
		args := []any{"apiserver", instance, "resource", f.Closures.Resource, "closed", f.Closures.Closed}
		if f.Client != nil && f.Client.User != "" {
			args = append(args, "user", f.Client.User, "match", string(f.Client.Match))
		}
		e.cfg.Logger.Warn("the server closed watches for not keeping up", args...)
	}
	e.mu.Lock()
	e.closures.add(instance, fs, bounds{users: e.cfg.TopUsers, resources: e.cfg.MaxResources, levels: e.cfg.MaxLevels})
	e.mu.Unlock()
}
