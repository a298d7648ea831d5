package replay

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// defaultDerivedBytes is the object size assumed when the metrics give no
// watch event sizes.
const defaultDerivedBytes = 2048

// Evidence is what a scenario is derived from: a kube-apiserver's /metrics
// (object counts, average watch event size per resource) and a diagnosis
// (one client per finding, with its scope). Either may be nil. A plain
// value, read only.
type Evidence struct {
	// Name names the scenario.
	Name    string
	Metrics *metrics.Sample
	Report  *api.Report
}

// maxDerivedDuration bounds the virtual time of a derived scenario.
const maxDerivedDuration = 2 * time.Hour

// Derive builds a scenario that replays what the evidence shows: every
// resource a finding names, with the object count apiserver_resource_objects
// reports and the average size of its watch events, and one client per
// finding: stuck initial events read one event and stop, slow ones read at
// one event per second, blocked streaming ones stop after their initial
// events. The metrics say how many objects a resource has, not where: all of
// them go to the namespace the findings name when they name one, else they
// are spread evenly over the namespaces named (and a cluster-scoped
// remainder).
func Derive(ev Evidence) (*Scenario, error) {
	if ev.Report == nil || len(ev.Report.Findings) == 0 {
		return nil, fmt.Errorf("no findings to replay: the bundle shows no stuck, slow or blocked watch")
	}
	clients, namespaces := derivedClients(ev.Report.Findings)
	if len(clients) == 0 {
		return nil, fmt.Errorf("no finding of a type the replay models (%s, %s, %s)", api.StuckInitialEvents, api.SlowInitialEvents, api.BlockedStreaming)
	}
	counts, sizes := objectCounts(ev.Metrics)
	sc := &Scenario{
		Name:        ev.Name,
		Description: "derived from a bundle: object counts from apiserver_resource_objects, one client per finding",
		Duration:    Duration{DefaultStallTimeout * 20},
		Resources:   derivedResources(namespaces, counts, sizes),
		Clients:     clients,
	}
	fitSlowClients(sc)
	if err := sc.complete(); err != nil {
		return nil, fmt.Errorf("derived scenario: %w", err)
	}
	return sc, nil
}

// derivedClients returns one client per finding of a type the replay
// models, and the namespaces ("" for cluster scope) every finding, modelled
// or not, names per resource.
func derivedClients(findings []api.Finding) ([]Client, map[string]map[string]bool) {
	namespaces := map[string]map[string]bool{}
	var clients []Client
	for i, f := range findings {
		resource, ns, user, seats := "pods", "", "", 1
		if f.Client != nil {
			if f.Client.Resource != "" {
				resource = f.Client.Resource
			}
			ns, user = f.Client.Namespace, f.Client.User
			if user == "" {
				// Ambiguous: named after every candidate.
				user = strings.Join(f.CandidateUsers(), "-or-")
			}
			if f.Client.Seats > 0 {
				seats = f.Client.Seats
			}
		}
		if namespaces[resource] == nil {
			namespaces[resource] = map[string]bool{}
		}
		namespaces[resource][ns] = true
		c := Client{
			Name:      clientName(i, user, f.Type),
			Resource:  resource,
			Namespace: ns,
			Seats:     seats,
		}
		switch f.Type {
		case api.StuckInitialEvents:
			c.Model = "stops-after 1"
		case api.SlowInitialEvents:
			c.Model = "paced 1/s"
		case api.BlockedStreaming:
			c.Model = "stops-after initial-events"
		default:
			continue
		}
		clients = append(clients, c)
	}
	return clients, namespaces
}

// derivedResources returns the resources named, sorted by name, each with
// the object count and event size the metrics give (else 1000 objects of
// defaultDerivedBytes), spread evenly over its namespaces, the first
// namespace in sort order taking the remainder.
func derivedResources(namespaces map[string]map[string]bool, counts map[string]int, sizes map[string]int) []Resource {
	names := make([]string, 0, len(namespaces))
	for n := range namespaces {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Resource
	for _, n := range names {
		total := counts[n]
		if total == 0 {
			total = 1000
		}
		size := sizes[n]
		if size <= 0 {
			size = defaultDerivedBytes
		}
		var nss []string
		for ns := range namespaces[n] {
			nss = append(nss, ns)
		}
		sort.Strings(nss)
		per := total / len(nss)
		rest := total - per*len(nss)
		res := Resource{Name: n}
		for i, ns := range nss {
			c := per
			if i == 0 {
				c += rest
			}
			res.Objects = append(res.Objects, ObjectGroup{Namespace: ns, Count: c, Bytes: api.ByteSize(size)})
		}
		out = append(out, res)
	}
	return out
}

// fitSlowClients makes sc long enough for the slow clients to get through
// their initial events at one per second, so that the replay can tell slow
// from stuck; past maxDerivedDuration they read faster instead (the stall
// timeout looks at progress, not at the rate), so that a huge bundle still
// gives a scenario of bounded length.
func fitSlowClients(sc *Scenario) {
	for i, c := range sc.Clients {
		if c.Model != "paced 1/s" {
			continue
		}
		for _, r := range sc.Resources {
			if r.Name != c.Resource {
				continue
			}
			n := countIn(r.Objects, c.Namespace)
			rate := 1
			if limit := int(maxDerivedDuration/time.Second) - 120; n > limit {
				rate = (n + limit - 1) / limit
				sc.Clients[i].Model = fmt.Sprintf("paced %d/s", rate)
				sc.Description += fmt.Sprintf("; %s reads %d events per second (not 1) so that its %d initial events fit in %s", c.Name, rate, n, maxDerivedDuration)
			}
			need := time.Duration(n/rate+60) * time.Second
			sc.Duration.Duration = max(sc.Duration.Duration, need.Round(time.Minute)+time.Minute)
		}
	}
}

func clientName(i int, user string, typ api.FindingType) string {
	base := strings.ToLower(user)
	base = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, base)
	base = strings.Trim(base, "-.")
	if base == "" {
		base = strings.ToLower(string(typ))
	}
	return fmt.Sprintf("%s-%d", base, i+1)
}

// objectCounts reads apiserver_resource_objects (apiserver_storage_objects
// before 1.30) and the average watch event size per resource.
func objectCounts(s *metrics.Sample) (counts map[string]int, sizes map[string]int) {
	counts, sizes = map[string]int{}, map[string]int{}
	if s == nil {
		return counts, sizes
	}
	for _, family := range []string{"apiserver_resource_objects", "apiserver_storage_objects"} {
		fam := s.Family(family)
		if fam == nil {
			continue
		}
		for _, m := range fam.GetMetric() {
			name := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "resource" {
					name = l.GetValue()
				}
			}
			if name == "" || m.GetGauge() == nil {
				continue
			}
			if v := m.GetGauge().GetValue(); v > 0 && !math.IsNaN(v) {
				counts[name] = int(v)
			}
		}
		break
	}
	for _, r := range metrics.Extract(s).Resources {
		if !metrics.Absent(r.WatchEvents) && !metrics.Absent(r.WatchEventBytes) && r.WatchEvents > 0 {
			sizes[r.Resource] = int(r.WatchEventBytes / r.WatchEvents)
		}
	}
	return counts, sizes
}
