package diagnosis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// typed returns an initial-phase watcher whose handler encodes objType
// ("" for a handler not encoding: waiting for its next event).
func typed(id int64, wait int, objType string) api.Watcher {
	w := initialWatcher(id, wait)
	w.Handler.ObjectType = objType
	return w
}

func resourceRequest(user, resource string, started time.Time) apf.Request {
	r := watchRequest(user, started)
	r.Resource, r.Path = resource, "/api/v1/"+resource
	return r
}

func TestMatchByObjectType(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	same := t0 // every request arrived at the same time: ages separate nothing
	tests := []struct {
		name string
		s    watches.Sample
		want []verdict
	}{
		{
			"the only watcher of its type, and the only request of the resource the counts give it: exact",
			sample(at, []api.Watcher{typed(1000, 2, "0xa"), typed(1100, 2, "0xa"), typed(1200, 2, "0xb")},
				resourceRequest("pods-1", "pods", same), resourceRequest("pods-2", "pods", same), resourceRequest("cm", "configmaps", same)),
			[]verdict{
				{1000, api.StuckInitialEvents, api.SeverityCritical, "", api.MatchAmbiguous},
				{1100, api.StuckInitialEvents, api.SeverityCritical, "", api.MatchAmbiguous},
				{1200, api.StuckInitialEvents, api.SeverityCritical, "cm", api.MatchExact},
			},
		},
		{
			"a handler waiting for events may be of either resource, but the counts still pin configmaps",
			sample(at, []api.Watcher{typed(1000, 2, "0xa"), typed(1100, 2, "0xa"), typed(1200, 2, "0xb"), typed(1300, 0, "")},
				resourceRequest("pods-1", "pods", same), resourceRequest("pods-2", "pods", same), resourceRequest("pods-3", "pods", same), resourceRequest("cm", "configmaps", same)),
			[]verdict{
				{1000, api.StuckInitialEvents, api.SeverityCritical, "", api.MatchAmbiguous},
				{1100, api.StuckInitialEvents, api.SeverityCritical, "", api.MatchAmbiguous},
				{1200, api.StuckInitialEvents, api.SeverityCritical, "cm", api.MatchExact},
				{1300, api.SlowInitialEvents, api.SeverityWarning, "", api.MatchAmbiguous},
			},
		},
		{
			"one watcher per type, one request per resource, and a waiting handler: the counts allow both assignments",
			sample(at, []api.Watcher{typed(1000, 2, "0xa"), typed(1200, 2, "0xb"), typed(1300, 0, "")},
				resourceRequest("pods-1", "pods", same), resourceRequest("pods-2", "pods", same), resourceRequest("cm", "configmaps", same)),
			[]verdict{
				{1000, api.StuckInitialEvents, api.SeverityCritical, "", api.MatchAmbiguous},
				{1200, api.StuckInitialEvents, api.SeverityCritical, "", api.MatchAmbiguous},
				{1300, api.SlowInitialEvents, api.SeverityWarning, "", api.MatchAmbiguous},
			},
		},
		{
			"same user on every candidate: the user is known exactly",
			sample(at, []api.Watcher{typed(1000, 2, "0xa"), typed(1100, 2, "0xa")},
				resourceRequest("team", "pods", same), resourceRequest("team", "pods", same)),
			[]verdict{
				{1000, api.StuckInitialEvents, api.SeverityCritical, "team", api.MatchAmbiguous},
				{1100, api.StuckInitialEvents, api.SeverityCritical, "team", api.MatchAmbiguous},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{tc.s}}}, Options{CaptureSlack: time.Second})
			if diff := cmp.Diff(tc.want, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchAnEarlierSampleBoundsTheAge(t *testing.T) {
	prevAt := t0.Add(5 * time.Minute)
	at := t0.Add(10 * time.Minute)
	// Both requests are old enough for the watcher's wait (none printed),
	// but the earlier sample saw the watcher 5 minutes ago: only the
	// request executing then can be its own.
	w := typed(1000, 0, "")
	prev := sample(prevAt, []api.Watcher{w})
	cur := sample(at, []api.Watcher{w}, resourceRequest("old", "pods", t0), resourceRequest("new", "pods", at.Add(-time.Minute)))
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{prev, cur}}}, Options{CaptureSlack: time.Second})
	// "new", a minute old with no watcher left for it, fails closed.
	want := []verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "new"}, {ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityInfo, User: "old", Match: api.MatchExact}}
	if diff := cmp.Diff(want, verdicts(r)); diff != "" {
		t.Errorf("verdicts (-want +got): want the request executing at the earlier sample (old), exact\n%s", diff)
	}
}

// TestMatchSoundOnRandomInstances generates watchers with their true
// requests, then checks every claim against all assignments the evidence
// allows (brute force): an exact or likely pair must be the true one,
// every ambiguous watcher must list its true request among its
// candidates, and a user named on an ambiguous match must be the true
// request's.
func TestMatchSoundOnRandomInstances(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	at := t0.Add(30 * time.Minute)
	resources := []struct{ name, typ string }{{"pods", "0xa"}, {"configmaps", "0xb"}, {"secrets", "0xc"}}
	users := []string{"u1", "u2", "u3", "u4"}
	claims := map[api.Match]int{}
	for n := range 3000 {
		nw := 1 + rng.IntN(6)
		var ws []api.Watcher
		var reqs []apf.Request
		truth := map[int64]string{} // watcher id -> request key
		for i := range nw {
			res := resources[rng.IntN(len(resources))]
			started := at.Add(-time.Duration(1+rng.IntN(12)) * time.Minute)
			age := at.Sub(started)
			wait := rng.IntN(int(age/time.Minute) + 1) // waits never exceed the age
			typ := res.typ
			if rng.IntN(3) == 0 {
				typ = "" // handler not encoding
			}
			id := int64(1000 + 10*i)
			ws = append(ws, typed(id, wait, typ))
			key := fmt.Sprintf("r%d", i)
			r := resourceRequest(users[rng.IntN(len(users))], res.name, started)
			r.Name = key
			reqs = append(reqs, r)
			truth[id] = key
		}
		for range rng.IntN(2) { // an extra executing watch with no watcher
			res := resources[rng.IntN(len(resources))]
			r := resourceRequest(users[rng.IntN(len(users))], res.name, at.Add(-time.Duration(rng.IntN(12))*time.Minute))
			r.Name = "extra"
			reqs = append(reqs, r)
		}
		rng.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
		// /metrics as the truth makes it: every request counted under its
		// resource and scope, with streaming watches on top; an earlier
		// sample saw the watchers whose request is older than it.
		gauge := map[string]map[string]float64{}
		for _, r := range reqs {
			k := resourceKey(r)
			if gauge[k] == nil {
				gauge[k] = map[string]float64{}
			}
			gauge[k][scopeOf(r)] += float64(1 + rng.IntN(2))
		}
		prevAt := at.Add(-5 * time.Minute)
		seen := map[int64]time.Time{}
		for _, r := range reqs {
			for id, key := range truth {
				if r.Name == key && r.StartTime.Before(prevAt) {
					seen[id] = prevAt
				}
			}
		}
		in := matchInput{watchers: ws, reqs: reqs, at: at, slack: 0, details: true, seenAt: seen, watchRequests: gauge, metricsAt: at.Add(-time.Second)}
		res := matchClients(in)
		if err := checkContract(in, res); err != nil {
			t.Fatalf("instance %d: %v", n, err)
		}
		if res.typesDropped != "" {
			t.Fatalf("instance %d: /metrics consistent with the truth contradicted the object types: %s", n, res.typesDropped)
		}
		for i, w := range ws {
			want := truth[w.GoroutineID]
			claims[res.pairs[i].conf]++
			switch res.pairs[i].conf {
			case api.MatchExact, api.MatchLikely:
				if got := reqs[res.pairs[i].req].Name; got != want {
					t.Fatalf("instance %d: watcher %d paired %s with %s, truth %s\nwatchers %+v\nrequests %+v", n, w.GoroutineID, res.pairs[i].conf, got, want, ws, reqs)
				}
			case api.MatchAmbiguous:
				var names []string
				for _, j := range res.pairs[i].candidates {
					names = append(names, reqs[j].Name)
				}
				if !slices.Contains(names, want) {
					t.Fatalf("instance %d: watcher %d candidates %v lack the truth %s: %s", n, w.GoroutineID, names, want, res.pairs[i].why)
				}
				if u := res.pairs[i].sameUser; u != "" {
					for _, r := range reqs {
						if r.Name == want && r.User != u {
							t.Fatalf("instance %d: watcher %d user %q, truth %q", n, w.GoroutineID, u, r.User)
						}
					}
				}
			default:
				t.Fatalf("instance %d: watcher %d unmatched (%q) though its request is listed", n, w.GoroutineID, res.pairs[i].conf)
			}
		}
	}
	// The generator must exercise both claims, or the test proves nothing.
	if claims[api.MatchExact] < 1000 || claims[api.MatchAmbiguous] < 1000 {
		t.Errorf("claims %v: want at least 1000 exact and 1000 ambiguous", claims)
	}
	t.Logf("claims: %v", claims)
}

func TestMatchOrderIsALeadNotAMatch(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	s := sample(at, []api.Watcher{typed(2000, 2, "0xa"), typed(1000, 2, "0xa")},
		resourceRequest("second", "pods", t0.Add(30*time.Millisecond)), resourceRequest("first", "pods", t0))
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s}}}, Options{CaptureSlack: time.Second})
	lead := map[int64]string{}
	for _, f := range r.Findings {
		if f.Client == nil || f.Client.Match != api.MatchAmbiguous || f.Client.User != "" {
			t.Errorf("watcher %d: client %+v, want ambiguous with no user", f.Watcher.GoroutineID, f.Client)
		}
		for _, e := range f.Evidence {
			if strings.HasPrefix(e, "a lead, not a match") {
				lead[f.Watcher.GoroutineID] = e
			}
		}
	}
	if !strings.Contains(lead[1000], "first's request") || !strings.Contains(lead[2000], "second's request") {
		t.Errorf("leads %v: want the lower handler id led to the earlier arrival", lead)
	}
}

// checkContract checks what matchResult's doc guarantees for any input.
func checkContract(in matchInput, res matchResult) error {
	if len(res.pairs) != len(in.watchers) || len(res.used) != len(in.reqs) {
		return fmt.Errorf("%d pairings for %d watchers, %d used marks for %d requests", len(res.pairs), len(in.watchers), len(res.used), len(in.reqs))
	}
	owner := map[int]int{}
	for i, p := range res.pairs {
		switch {
		case p.req >= 0:
			if p.conf != api.MatchExact && p.conf != api.MatchLikely {
				return fmt.Errorf("watcher %d: request %d attributed with conf %q", i, p.req, p.conf)
			}
			if o, ok := owner[p.req]; ok {
				return fmt.Errorf("request %d attributed to watchers %d and %d", p.req, o, i)
			}
			owner[p.req] = i
			w := in.watchers[i]
			age := in.at.Sub(in.reqs[p.req].StartTime)
			if need := time.Duration(w.WaitMinutes)*time.Minute - in.slack; age < need {
				return fmt.Errorf("watcher %d (wait %d minutes) paired with request %d, %s old", i, w.WaitMinutes, p.req, age)
			}
			if t, ok := in.seenAt[w.GoroutineID]; ok && age < in.at.Sub(t)-in.slack {
				return fmt.Errorf("watcher %d seen at %s paired with request %d, %s old", i, t, p.req, age)
			}
			if !res.used[p.req] {
				return fmt.Errorf("attributed request %d not marked used", p.req)
			}
		case p.conf == api.MatchAmbiguous:
			if p.nCand == 0 || (p.nCand <= maxCandidatesListed) != (len(p.candidates) == p.nCand) {
				return fmt.Errorf("watcher %d ambiguous with %d candidates, %d listed", i, p.nCand, len(p.candidates))
			}
			for _, j := range p.candidates {
				if !res.used[j] {
					return fmt.Errorf("candidate %d of watcher %d not marked used", j, i)
				}
			}
		case p.conf != "":
			return fmt.Errorf("watcher %d: conf %q without a request", i, p.conf)
		}
		if p.conf != "" && p.why == "" {
			return fmt.Errorf("watcher %d: conf %q without a why", i, p.conf)
		}
		if (!in.details || in.mixed != "") && p.conf != "" && p.conf != api.MatchAmbiguous {
			return fmt.Errorf("watcher %d: %q from an untrusted APF dump", i, p.conf)
		}
	}
	return nil
}
