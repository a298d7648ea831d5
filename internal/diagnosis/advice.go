package diagnosis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// resample says how to take samples more than three minutes apart.
func resample(w english.Words) string {
	if w.Resample == "" {
		return "two captures that far apart"
	}
	return w.Resample + ", or two captures that far apart"
}

// captureTime says where a capture's time comes from.
func captureTime(w english.Words) string {
	if w.CapturedAt == "" {
		return "captured-at.txt"
	}
	return "captured-at.txt or " + w.CapturedAt
}

// typeAdvice says what to do about the findings of each type of
// api.FindingTypes: a new finding type's row needs an entry here
// (TestEveryFindingTypeHasAdvice fails until it has one).
var typeAdvice = map[api.FindingType]func(r *api.Report, words english.Words) []string{
	api.StuckInitialEvents:     func(r *api.Report, _ english.Words) []string { return stuckAdvice(r) },
	api.SlowInitialEvents:      slowAdvice,
	api.UndecidedInitialEvents: undecidedAdvice,
	api.BlockedStreaming:       streamingAdvice,
	api.HeldAfterWatcherClosed: func(r *api.Report, _ english.Words) []string { return heldAdvice(r) },
	api.WaitingForWatchCache:   func(r *api.Report, _ english.Words) []string { return cacheWaitAdvice(r) },
	api.WatchClosedByServer:    closedAdvice,
}

// advice turns the findings into what to do: each finding type's advice in
// the order of api.FindingTypes (most urgent first), then the requests no
// watcher was tied to.
func advice(r *api.Report, words english.Words) []string {
	var out []string
	for _, row := range api.FindingTypes() {
		if a := typeAdvice[row.Type]; a != nil {
			out = append(out, a(r, words)...)
		}
	}
	if len(r.UnmatchedRequests) > 0 {
		out = append(out, fmt.Sprintf("%d executing watch request(s) in the APF dump have no initial-phase watcher: they may be served without the watch cache or be between phases; see unmatchedRequests.", len(r.UnmatchedRequests)))
	}
	return out
}

// stuckAdvice says what to do about StuckInitialEvents findings: one
// sentence per API server and client.
func stuckAdvice(r *api.Report) []string {
	var out []string
	type key struct{ server, user, path string }
	stuck := map[key][]int{} // indices into r.Findings
	var keys []key
	for i, f := range r.Findings {
		if f.Type != api.StuckInitialEvents {
			continue
		}
		k := key{server: f.APIServer}
		if f.Client != nil {
			k.user, k.path = f.Client.User, f.Client.Path
			if f.Client.User == "" && len(f.Candidates) > 0 {
				k.user = strings.Join(f.CandidateUsers(), " | ")
			}
		}
		if _, ok := stuck[k]; !ok {
			keys = append(keys, k)
		}
		stuck[k] = append(stuck[k], i)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].server != keys[j].server {
			return keys[i].server < keys[j].server
		}
		return keys[i].user < keys[j].user
	})
	said := map[string]int{}
	var rest *stuckRest
	for _, k := range keys {
		if rest != nil && rest.server != k.server {
			out = append(out, rest.sentence())
			rest = nil
		}
		idx := stuck[k]
		gor, seats, seatsKnown := stuckCost(r, idx)
		if said[k.server]++; said[k.server] > maxClientAdvice {
			if rest == nil {
				rest = &stuckRest{server: k.server, seatsKnown: true}
			}
			rest.add(len(idx), gor, seats, seatsKnown)
			continue
		}
		seatText := seatsText(seats, seatsKnown)
		who := "an unidentified client"
		switch c := r.Findings[idx[0]].Client; {
		case c != nil && c.User != "" && c.Match == api.MatchAmbiguous:
			who = fmt.Sprintf("%q (user known exactly; which of its watches is ambiguous)", c.User)
		case c != nil && c.User != "":
			who = fmt.Sprintf("%q (%s match)", c.User, c.Match)
		case len(r.Findings[idx[0]].Candidates) > 0:
			who = fmt.Sprintf("one of %s (ambiguous match: the evidence cannot tell which of them is stuck, and the others may be healthy; check each)", candidatesNamed(r.Findings[idx[0]]))
		}
		what := "its watch"
		if c := r.Findings[idx[0]].Client; c != nil && c.Path != "" {
			what = fmt.Sprintf("its watch %s", c.Path)
		}
		out = append(out, fmt.Sprintf("%s: %s stopped reading %s during the initial-events replay (%d watch(es), %d goroutines, %s). Fix the client so it keeps draining its watch (a blocked event handler is the usual cause) or restart it: the API server frees the watch only when the request ends, at the client's timeoutSeconds or after 1 to 2 x --min-request-timeout when unset (k8s.io/apiserver endpoints/handlers/get.go:276). With the proposed stall timeout (kubernetes PR 141899) it would have been stopped 30 s after its last send.",
			k.server, who, what, len(idx), gor, seatText))
	}
	if rest != nil {
		out = append(out, rest.sentence())
	}
	return out
}

// maxClientAdvice bounds the clients of one API server whose stuck
// watches get a sentence of their own: a relist storm of 50,000
// distinct clients would otherwise be 50,000 sentences (32 MB). The rest
// are one sentence, their counts summed.
const maxClientAdvice = 20

// stuckRest sums the stuck clients of a server past maxClientAdvice.
type stuckRest struct {
	server                              string
	clients, watches, goroutines, seats int
	seatsKnown                          bool
}

func (rs *stuckRest) add(watches, goroutines, seats int, seatsKnown bool) {
	rs.clients++
	rs.watches += watches
	rs.goroutines += goroutines
	rs.seats += seats
	rs.seatsKnown = rs.seatsKnown && seatsKnown
}

// sentence says what the clients past maxClientAdvice hold.
func (rs *stuckRest) sentence() string {
	return fmt.Sprintf("%s: %d more client(s) stopped reading their watches during the initial-events replay (%d watch(es), %d goroutines, %s). The same fix applies to each; the findings name them.",
		rs.server, rs.clients, rs.watches, rs.goroutines, seatsText(rs.seats, rs.seatsKnown))
}

// stuckCost sums the goroutines and seats of the findings idx.
func stuckCost(r *api.Report, idx []int) (goroutines, seats int, seatsKnown bool) {
	seatsKnown = true
	for _, i := range idx {
		f := r.Findings[i]
		goroutines += len(f.GoroutineIDs)
		if f.SeatsKnown() {
			seats += f.Client.Seats
		} else {
			seatsKnown = false
		}
	}
	return goroutines, seats, seatsKnown
}

// seatsText says the seats held, or that they are not known.
func seatsText(seats int, known bool) string {
	if !known {
		return "APF seats not known: no request attributed"
	}
	return fmt.Sprintf("%d APF seat(s) held", seats)
}

// perServer counts the findings keep accepts, per API server, and returns
// the servers in order.
func perServer(r *api.Report, keep func(api.Finding) bool) ([]string, map[string]int) {
	n := map[string]int{}
	var servers []string
	for _, f := range r.Findings {
		if !keep(f) {
			continue
		}
		if n[f.APIServer] == 0 {
			servers = append(servers, f.APIServer)
		}
		n[f.APIServer]++
	}
	sort.Strings(servers)
	return servers, n
}

// slowAdvice says how to decide SlowInitialEvents warnings, per API
// server: a second sample, or samples further apart.
func slowAdvice(r *api.Report, words english.Words) []string {
	samples := map[string]int{}
	for _, a := range r.APIServers {
		samples[a.Name] = a.Samples
	}
	servers, n := perServer(r, func(f api.Finding) bool {
		return f.Type == api.SlowInitialEvents && f.Severity == api.SeverityWarning
	})
	var out []string
	for _, srv := range servers {
		how := "take a second sample more than a minute later (`kubectl watch-doctor diagnose` does; offline, pass two captures of the same server to analyze) to tell progress from a stall"
		if samples[srv] >= 2 {
			how = fmt.Sprintf("the samples did not decide: take them more than three minutes apart (%s), since the runtime may start counting a wait up to two minutes late", resample(words))
		}
		out = append(out, fmt.Sprintf("%s: %d watch(es) are slow in their initial-events replay but not proven stuck: %s.", srv, n[srv], how))
	}
	return out
}

// undecidedAdvice is empty: how to decide UndecidedInitialEvents findings
// is said in the report's Incomplete lines, which the caller phrases with
// its own words (a forced dump, a trace).
func undecidedAdvice(*api.Report, english.Words) []string { return nil }

// streamingAdvice says what to do about BlockedStreaming findings, per
// API server.
func streamingAdvice(r *api.Report, _ english.Words) []string {
	servers, n := perServer(r, func(f api.Finding) bool { return f.Type == api.BlockedStreaming })
	var out []string
	for _, srv := range servers {
		out = append(out, fmt.Sprintf("%s: %d streaming watcher(s) blocked sending for a minute or more: upstream closes them when the next event for them cannot be queued; if the resource changes rarely they stay, so check the clients named.", srv, n[srv]))
	}
	return out
}

// candidatesNamed lists the users of f's candidates, each once, with the
// pods (else the source addresses) their audit joins found: "check each"
// then names pods.
func candidatesNamed(f api.Finding) string {
	seen := map[string]int{}
	var users []string
	var where [][]string
	for _, c := range f.Candidates {
		i, ok := seen[c.User]
		if !ok {
			i = len(users)
			seen[c.User] = i
			users = append(users, c.User)
			where = append(where, nil)
		}
		for _, p := range c.Pods {
			where[i] = appendOnce(where[i], "pod "+p.Namespace+"/"+p.Name)
		}
		if len(c.Pods) == 0 {
			for _, ip := range c.SourceIPs {
				where[i] = appendOnce(where[i], "from "+ip)
			}
		}
	}
	q := make([]string, len(users))
	for i, u := range users {
		q[i] = fmt.Sprintf("%q", u)
		if len(where[i]) > 0 {
			q[i] += " (" + strings.Join(where[i], ", ") + ")"
		}
	}
	return strings.Join(q, " | ")
}

// closedAdvice says what to do about WatchClosedByServer findings: per
// API server and client (or resource, when no client is tied), fix or
// scale the client, or narrow its watch; never restart the API server.
func closedAdvice(r *api.Report, _ english.Words) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Type != api.WatchClosedByServer {
			continue
		}
		var cl api.Closures
		if f.Closures != nil {
			cl = *f.Closures
		}
		res := cl.Resource
		if cl.Group != "" {
			res += "." + cl.Group
		}
		if res == "" {
			res = "a resource"
		}
		loop := "once"
		if cl.Closed >= 2 {
			loop = fmt.Sprintf("%d times: a loop, each return replaying every object of its watch again", cl.Closed)
		}
		switch {
		case f.Client != nil && f.Client.User != "" && f.Client.Match != api.MatchAmbiguous:
			out = append(out, fmt.Sprintf("%s: the server closed watches of %s %s, and %q (%s match) came back each time; it reads slower than %s changes. Fix or scale %q so it keeps up (a slow event handler, too few workers), or narrow its watch with a label or field selector; restarting the API server does not help.", f.APIServer, res, loop, f.Client.User, f.Client.Match, res, f.Client.User))
		case len(f.Candidates) > 0:
			out = append(out, fmt.Sprintf("%s: the server closed watches of %s %s; one of %s (ambiguous: each came back with a new watch) reads slower than %s changes. Check each, then fix or scale it, or narrow its watch with a selector; restarting the API server does not help.", f.APIServer, res, loop, candidatesNamed(f), res))
		default:
			out = append(out, fmt.Sprintf("%s: the server closed watches of %s %s, and the evidence could not tie them to a client. Find the client in the API server's log (\"Forcing %s watcher close due to unresponsiveness\") or its audit log (watch requests of %s ending long before their timeoutSeconds), then fix or scale it, or narrow its watch with a selector; restarting the API server does not help.", f.APIServer, res, loop, res, res))
		}
	}
	return out
}

func appendOnce(ss []string, s string) []string {
	if slices.Contains(ss, s) {
		return ss
	}
	return append(ss, s)
}

// Readvise writes r's advice again: after the pods of the findings'
// source addresses were looked up, "check each" names them.
func Readvise(r *api.Report, words english.Words) { r.Advice = advice(r, words) }
