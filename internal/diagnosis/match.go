package diagnosis

// Client matching: the contract. matchClients takes a matchInput (the
// watchers that hold an executing APF request, and the executing watch
// requests of the APF dump) and returns a matchResult; applyMatches
// (attribute.go) writes it into the findings. The algorithm is in files
// of its own: matcher.go (the sorted views: ages, object types,
// resources), classes.go (which object types may serve which
// group/resource), components.go (the watchers and requests that may pair
// only among themselves, decided by counting or one by one),
// ambiguity.go (the explanations), crosscheck.go (object types checked
// against /metrics).

import (
	"context"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// maxCandidatesListed bounds the candidates a finding lists: with more,
// the finding says how many there are and which fields they share.
const maxCandidatesListed = 10

// matchInput is what client matching needs of one dump and APF dump.
type matchInput struct {
	// ctx stops the matching early (halt.go); nil never does.
	ctx      context.Context
	watchers []api.Watcher
	reqs     []apf.Request
	at       time.Time
	slack    time.Duration
	// details: the APF dump names verbs and paths; without them every
	// executing non-exempt request is a candidate and nothing better than
	// ambiguous can be claimed.
	details bool
	// incomplete says why the APF dump may lack some watchers' requests
	// ("" when it lists at least one request per watcher and skipped no
	// row): a pair is then at best likely.
	incomplete string
	// mixed: the goroutine dump and the APF dump may come from different
	// processes; nothing better than ambiguous can be claimed.
	mixed string
	// seenAt is when an earlier sample of the same process saw each
	// watcher (by goroutine id), zero when it did not: the watcher's
	// request was executing then, so it is at least that old now.
	seenAt map[int64]time.Time
	// watchRequests is apiserver_longrunning_requests{verb="WATCH"} per
	// group/resource and scope, nil without /metrics: the object types
	// are checked against it (see contradiction).
	watchRequests map[string]map[string]float64
	// metricsAt is when /metrics was read; zero when unknown.
	metricsAt time.Time
}

// matchResult is the attribution of each watcher: pairs[i] is watcher i's.
//
// It guarantees, for any input: len(pairs) == len(in.watchers) and
// len(used) == len(in.reqs); no request is attributed to two watchers; a
// pairing with req >= 0 has conf MatchExact or MatchLikely (likely when
// in.incomplete is set), and then the request is old enough for the
// watcher (its age at in.at is at least the watcher's wait less in.slack,
// and at least the time since in.seenAt); a pairing with conf
// MatchAmbiguous has req == -1 and nCand > 0 candidates, listed when
// there are at most maxCandidatesListed; conf "" means no request fits.
// Without in.details, or with in.mixed set, no pairing is better than
// ambiguous. Every watcher has a why when conf is set.
type matchResult struct {
	pairs []pairing
	// used marks requests attributed to, or candidate of, some watcher
	// (used[j] is true for every attributed request and every listed
	// candidate).
	used []bool
	// typesDropped says why the handlers' object types were not used
	// although the counts allowed it: /metrics contradicts them.
	typesDropped string
}

// pairing is what client matching says of one watcher.
type pairing struct {
	req  int       // attributed request, -1 for none
	conf api.Match // api.MatchExact, MatchLikely, MatchAmbiguous or ""
	why  string
	// candidates of an ambiguous watcher, listed only when there are at
	// most maxCandidatesListed of them; nCand counts them all.
	candidates []int
	nCand      int
	// sameUser: every candidate of an ambiguous watcher has this user.
	sameUser string
	// hint is the request goroutine-id order would pair an ambiguous
	// watcher with, -1 for none: a lead, not a match (see orderHint).
	hint int
}

// matchClients attributes executing watch requests (APF) to the
// initial-phase watchers of one dump, in O((watchers + requests) log) time
// and linear memory.
//
// Every watcher in its initial phase holds one executing APF request: APF
// keeps a watch executing until WatchInitialized, which process() signals
// after the replay (cache_watcher.go:541). What ties a watcher to its
// request:
//   - age: the request is at least as old as the watcher has been blocked
//     (capture time - StartTime >= wait - slack), and at least as old as
//     the time since an earlier sample saw the watcher;
//   - object type: handlers of one group/resource print one itab word in
//     doEncode (objectType), so the requests of a group/resource go to the
//     watchers of one word; when the counts allow a single assignment of
//     resources to words, a watcher's candidates are its resource's
//     requests (inferClasses).
//
// A pair is exact only when the evidence forces it: the watcher has one
// possible request, or every pairing of its group gives it the same one.
// It is likely when it would be forced but the APF dump may be missing
// requests. Everything else is ambiguous, with the candidates. Goroutine
// id order is not used: ids are handed out per P in batches of 16
// (runtime/proc.go, _GoidCacheBatch), so a later request can get a
// smaller id.
func matchClients(in matchInput) matchResult {
	nw, nr := len(in.watchers), len(in.reqs)
	res := matchResult{pairs: make([]pairing, nw), used: make([]bool, nr)}
	for i := range res.pairs {
		res.pairs[i].req, res.pairs[i].hint = -1, -1
	}
	if nw == 0 || nr == 0 {
		return res
	}
	trusted := in.details && in.mixed == ""
	m := newMatcher(in, trusted)
	res.typesDropped = m.dropped
	m.run(&res)
	return res
}
