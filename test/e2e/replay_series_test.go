package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/h2sniff"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
)

// TestSeriesClientsSkewedApart replays, without a server, the samples of
// the CI run (v1.38.0-beta.0, complete) where the replay stopped the slow
// informer and started the node reader on one tick (10 s) and the real
// server saw the node reader arrive at 10.09 s, before the slow informer's
// stall at 10.67 s: 3 seats on the level at 10.1 s, where no tick of the
// replay holds more than 2. Each client's part is skewed on its own, so it
// agrees; a fourth seat there, or a third at 16.1 s (no transition within
// skew), does not.
func TestSeriesClientsSkewedApart(t *testing.T) {
	slow, paced, node := cluster.UserSlowInformer, cluster.UserPacedReader, cluster.UserNodeReader
	held := replayStep{Watcher: true, HandlerBlockedInWrite: true, Seats: 1}
	steps := map[string][]replayStep{
		slow:  {withAt(held, 0), {AtSeconds: 10, Told: true}},
		paced: {withAt(held, 0)},
		node:  {withAt(held, 10), {AtSeconds: 20}},
	}
	// sample is the real server's state with the given clients holding
	// their watch (goroutines, APF wait, seats) and level seats.
	sample := func(at float64, levelSeats float64, holding ...string) stallSample {
		s := stallSample{At: time.Duration(at * float64(time.Second)), UserSeats: map[string]float64{}, Seats: levelSeats,
			Goroutines: map[string]probe.WatchGoroutines{}, Node: nodeSocket{State: "ESTABLISHED"}}
		for _, c := range holding {
			s.UserSeats[c] = 1
			tr := transportH2
			if c == node {
				tr = transportH1
			}
			g := s.Goroutines[tr]
			g.Watchers, g.Writers, g.APFWaits = g.Watchers+1, g.Writers+1, g.APFWaits+1
			s.Goroutines[tr] = g
		}
		return s
	}
	started := time.Now()
	// The slow informer's transport got RST_STREAM at its stall.
	run := stallRun{started: started, streamEnds: []h2sniff.End{{StreamID: 1, Reset: true, At: started.Add(10670 * time.Millisecond)}}}
	const level = "level's executing seats (metric)"
	for _, c := range []struct {
		name    string
		samples []stallSample
		want    []string // the measures that differ, by sample time
	}{
		{"the CI run", []stallSample{
			sample(8.1, 2, slow, paced), sample(10.1, 3, slow, paced, node), sample(12.1, 2, paced, node), sample(16.1, 2, paced, node),
		}, nil},
		{"a fourth seat at the transition", []stallSample{sample(10.1, 4, slow, paced, node)}, []string{"10.1 " + level}},
		{"a third seat with no transition near", []stallSample{sample(16.1, 3, paced, node)}, []string{"16.1 " + level}},
		{"the slow informer held far past its stall", []stallSample{sample(16.1, 3, slow, paced, node)},
			[]string{"16.1 HTTP/2 watchers (slow+paced)", "16.1 HTTP/2 handlers writing an event", "16.1 HTTP/2 APF waits",
				"16.1 " + slow + " seats (dump_requests)", "16.1 " + level}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run
			r.samples = c.samples
			_, diffs := seriesRows(r, steps)
			var got []string
			for _, d := range diffs {
				got = append(got, d[0]+" "+d[1])
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("differences %q, want %q\n%s", got, c.want, table([]string{"T(S)", "MEASURE", "REAL", "REPLAY", "TICKS", "VERDICT"}, diffs))
			}
		})
	}
}

func withAt(s replayStep, at float64) replayStep {
	s.AtSeconds = at
	return s
}
