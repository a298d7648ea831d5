package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// Tolerances of the replay-versus-real comparison (docs/replay-research.md, "The
// replay against the real servers", says why each).
const (
	// stallTolerance: the real server's stall comes at most this much
	// later than the replay's. The replay starts the timer at the watch's
	// start on a virtual clock; the real timer starts at the watcher's
	// first send after the request was set up, and runs on a loaded
	// machine (measured: 0.10 to 0.38 s late).
	stallTolerance = 2 * time.Second
	// startRounding: the replay starts a client on a whole tick (1 s);
	// the node reader's real arrival is rounded to the nearest.
	startRounding = 500 * time.Millisecond
	// seatTolerance: seat-seconds differ by the same lateness.
	seatTolerance = 2.0
	// skew: a real sample agrees with the replay if the replay shows the
	// same value at some tick within this much of the sample's time. One
	// sampling period covers a transition (a stall, a handler freed, a
	// client told) that falls between two samples, the sample's own
	// duration (a goroutine dump, the APF dump and /metrics, read one
	// after the other on a loaded machine) and the stall's lateness.
	skew = samplePeriod
)

// replayColumnOf maps a mode of the patched server to the replay column
// that models it.
var replayColumnOf = map[string]string{modeOff: "unpatched", modePR141899: "pr141899", modeComplete: "complete"}

// replayClient is the part of a replay client's result the comparison
// reads.
type replayClient struct {
	Name                  string   `json:"name"`
	Outcome               string   `json:"outcome"`
	StoppedAfterSeconds   *float64 `json:"stoppedAfterSeconds"`
	StoppedAtSeconds      *float64 `json:"stoppedAtSeconds"`
	HandlerBlockedInWrite bool     `json:"handlerBlockedInWrite"`
	ClientTold            bool     `json:"clientTold"`
	APFSeatSeconds        float64  `json:"apfSeatSeconds"`
}

// replayStep is one step of a client's state in `replay --timeline`.
type replayStep struct {
	AtSeconds             float64 `json:"atSeconds"`
	Watcher               bool    `json:"watcher"`
	HandlerBlockedInWrite bool    `json:"handlerBlockedInWrite"`
	Seats                 float64 `json:"seats"`
	Told                  bool    `json:"told"`
}

// replayResult is the part of `replay --timeline -o json` the comparison
// reads.
type replayResult struct {
	Columns []struct {
		Name              string         `json:"name"`
		WatcherGoroutines int            `json:"watcherGoroutines"`
		Clients           []replayClient `json:"clients"`
	} `json:"columns"`
	Timeline struct {
		Series []struct {
			Column  string `json:"column"`
			Clients []struct {
				Name  string       `json:"name"`
				Steps []replayStep `json:"steps"`
			} `json:"clients"`
		} `json:"series"`
	} `json:"timeline"`
}

// replayClients are the clients of a patched-server run, in the replay
// scenario's order.
var replayClients = []string{cluster.UserSlowInformer, cluster.UserPacedReader, cluster.UserNodeReader}

// replayScenario writes the scenario that replays run: the same pods, the
// clients with the seats APF gave them and the node reader starting when
// its watch arrived, over HTTP/1.1 (transport profile http1), the same
// stall timeout and duration.
func replayScenario(t *testing.T, run stallRun, pods int, duration time.Duration) string {
	t.Helper()
	seats := map[string]float64{}
	for _, s := range run.samples {
		for u, n := range s.UserSeats {
			seats[u] = max(seats[u], n)
		}
	}
	var clients strings.Builder
	for _, name := range replayClients {
		model, transport := "stops-after 1", "go"
		switch name {
		case cluster.UserPacedReader:
			model = "paced 2.5/s"
		case cluster.UserNodeReader:
			transport = "http1"
		}
		arrived, ok := run.arrived[name]
		if !ok {
			t.Fatalf("%s's watch never appeared in dump_requests", name)
		}
		n := seats[name]
		if n < 1 {
			n = 1
		}
		fmt.Fprintf(&clients, `- name: %s
  model: %s
  namespace: rand2
  initialEvents: watch-list
  resourceVersion: "0"
  bookmarks: true
  timeout: 1h
  seats: %g
  startAt: %s
  transport: {profile: %s}
`, name, model, n, arrived.Round(time.Second), transport)
	}
	scenario := fmt.Sprintf(`name: e2e-%[1]s
description: TestPatchedServers in mode %[1]s, replayed
duration: %[2]s
tick: 1s
stallTimeout: %[3]s
release: %[6]s
resources:
- name: pods
  objects:
  - namespace: rand2
    count: %[4]d
    bytes: 20480
clients:
%[5]s`, run.mode, duration, run.timeout, pods, clients.String(), scenarioRelease(run.release))
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// scenarioRelease is a scenario's release (v1.37, v1.38) for a
// kube-apiserver release (v1.37.2, v1.38.0-beta.0): its minor.
func scenarioRelease(kube string) string {
	major, rest, _ := strings.Cut(kube, ".")
	minor, _, _ := strings.Cut(rest, ".")
	return major + "." + minor
}

// compareWithReplay replays the scenario run measured in the column that
// models its mode, with the built plugin, and checks that they agree:
//   - over time (compareSeries): the watch goroutines of each transport,
//     the seats each client holds and those of their priority level, and
//     whether each client was told, at every sample;
//   - at the end, per client: its outcome and when it stopped, the
//     watcher goroutines left, the slow informer's seat-seconds, its
//     handler left blocked, and whether it was told.
//
// Every difference is reported, as a table.
func compareWithReplay(t *testing.T, c *cluster.Cluster, run stallRun, pods int, observe time.Duration) {
	t.Helper()
	column := replayColumnOf[run.mode]
	duration := observe.Round(time.Second)
	path := replayScenario(t, run, pods, duration)
	res := runPlugin(t, c, cluster.UserAdmin, "replay", path, "--columns", column, "--timeline", "-o", "json")
	if res.ExitCode != 0 {
		t.Fatalf("replay exit %d\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
	var rr replayResult
	if err := json.Unmarshal([]byte(res.Stdout), &rr); err != nil || len(rr.Columns) != 1 || len(rr.Columns[0].Clients) != len(replayClients) ||
		len(rr.Timeline.Series) != 1 || len(rr.Timeline.Series[0].Clients) != len(replayClients) {
		t.Fatalf("replay output (err %v):\n%.2000s", err, res.Stdout)
	}
	steps := map[string][]replayStep{}
	for _, c := range rr.Timeline.Series[0].Clients {
		steps[c.Name] = c.Steps
	}
	compareSeries(t, run, column, steps)

	col := rr.Columns[0]
	last := run.samples[len(run.samples)-1]
	slow, paced, node := col.Clients[0], col.Clients[1], col.Clients[2]
	var diffs [][]string
	diff := func(what string, replay, real any) {
		diffs = append(diffs, []string{what, fmt.Sprint(replay), fmt.Sprint(real)})
	}

	// Outcomes and when the stalled clients stopped: the server's stall
	// lines, the slow informer's first (the node reader starts later).
	stopped := func(i int) bool { return len(run.stalls) > i }
	for i, cl := range []replayClient{slow, node} {
		realOutcome := "blocked"
		if stopped(i) {
			realOutcome = "stopped"
		}
		if cl.Outcome != realOutcome {
			diff(cl.Name+"'s outcome", cl.Outcome, realOutcome)
		}
		if !stopped(i) {
			continue
		}
		if cl.StoppedAtSeconds == nil {
			diff("when "+cl.Name+" stopped", "never", seconds(run.stalls[i]))
			continue
		}
		// The replay starts the node reader on a whole second.
		lo := -startRounding
		if cl.Name == cluster.UserSlowInformer {
			lo = 0
		}
		if d := run.stalls[i] - time.Duration(*cl.StoppedAtSeconds*float64(time.Second)); d < lo || d > stallTolerance {
			diff(fmt.Sprintf("when %s stopped (real %v earlier to %v later)", cl.Name, -lo, stallTolerance), fmt.Sprintf("%gs", *cl.StoppedAtSeconds), seconds(run.stalls[i]))
		}
	}
	if paced.Outcome == "stopped" || paced.Outcome == "disconnected" || run.pacedErr != nil {
		diff("paced-reader's outcome", paced.Outcome, fmt.Sprintf("still reading (error %v)", run.pacedErr))
	}
	// Goroutines left: the watchers alive at the end.
	realWatchers := 0
	for _, g := range last.Goroutines {
		realWatchers += g.Watchers
	}
	if col.WatcherGoroutines != realWatchers {
		diff("watcher goroutines at the end", col.WatcherGoroutines, realWatchers)
	}
	// The slow informer's seat-seconds until the stall or the end.
	replayHeld := math.Abs(slow.APFSeatSeconds-duration.Seconds()) <= seatTolerance
	if replayHeld != last.SlowExecuting {
		diff("slow-informer's seat held at the end", replayHeld, last.SlowExecuting)
	}
	if !last.SlowExecuting && stopped(0) {
		if d := math.Abs(slow.APFSeatSeconds - run.stalls[0].Seconds()); d > seatTolerance {
			diff(fmt.Sprintf("slow-informer's seat-seconds (tolerance %g)", seatTolerance), slow.APFSeatSeconds, run.stalls[0].Seconds())
		}
	}
	// Handlers left blocked writing, and whether the clients were told.
	h2, h1 := last.Goroutines[transportH2], last.Goroutines[transportH1]
	if realBlocked := last.SlowExecuting && h2.Writers >= 1; slow.HandlerBlockedInWrite != realBlocked {
		diff("slow-informer's handler blocked writing at the end", slow.HandlerBlockedInWrite, realBlocked)
	}
	if realBlocked := h1.Writers >= 1; node.HandlerBlockedInWrite != realBlocked {
		diff("node-reader's handler blocked writing at the end", node.HandlerBlockedInWrite, realBlocked)
	}
	if told := len(run.streamEnds) > 0; slow.ClientTold != told {
		diff("whether slow-informer was told", slow.ClientTold, run.streamEnds)
	}
	if told := last.Node.told(); node.ClientTold != told {
		diff("whether node-reader was told (its socket)", node.ClientTold, last.Node.State)
	}
	if len(diffs) > 0 {
		t.Errorf("replay %s and the real %s server differ at the end:\n%s", column, run.mode, table([]string{"WHAT", "REPLAY", "REAL"}, diffs))
	}
	t.Logf("replay %s: slow-informer %s at %s s, handler blocked %t, told %t, %g seat-seconds; node-reader %s at %s s, handler blocked %t, told %t; paced-reader %s; %d watchers left",
		column, slow.Outcome, ptrText(slow.StoppedAtSeconds), slow.HandlerBlockedInWrite, slow.ClientTold, slow.APFSeatSeconds,
		node.Outcome, ptrText(node.StoppedAtSeconds), node.HandlerBlockedInWrite, node.ClientTold, paced.Outcome, col.WatcherGoroutines)
}

// seriesMeasure is one quantity compared over time: its value in a real
// sample, and in the replay at a given time, as the sum of its clients'.
type seriesMeasure struct {
	name string
	real func(s stallSample) float64
	// replay is each client's part of the measure in the replay at a
	// given time.
	replay []func(at float64) float64
	// between, when set, is how many of the replay's count may be caught
	// between two steps on the real server at instant at: a client that
	// progresses (the paced reader) has its handler blocked writing only
	// until its next read returns credit, then encodes and waits for the
	// watcher's next event, so one probe may miss it (measured: one probe
	// of a whole CI run, at t=20.1 s, writers=1 where the replay had 2).
	// A count above the replay's is never excused.
	between func(at float64) float64
}

// compareSeries compares every real sample with the replay's timeline: a
// sample agrees when it lies between the least and the most the replay
// shows at the ticks within skew of it, each client's part taken on its
// own. The clients' transitions are late on the real server each by its
// own amount (a stall's timer starts at the watcher's last send, the node
// reader's arrival is rounded to a tick), so two that the replay puts on
// one tick may come in either order: in one CI run the replay stopped the
// slow informer and started the node reader both at 10 s, while the real
// server saw the node reader arrive at 10.09 s and the slow informer's
// stall at 10.67 s, and its level held 3 seats at 10.1 s where no tick of
// the replay held more than 2. The whole table is logged; differences fail
// the test and are printed as a table.
func compareSeries(t *testing.T, run stallRun, column string, steps map[string][]replayStep) {
	t.Helper()
	all, diffs := seriesRows(run, steps)
	header := []string{"T(S)", "MEASURE", "REAL", "REPLAY", fmt.Sprintf("REPLAY AT TICKS WITHIN ±%v", skew), "VERDICT"}
	t.Logf("replay %s against the real %s server over time:\n%s", column, run.mode, table(header, all))
	if len(diffs) > 0 {
		t.Errorf("replay %s and the real %s server differ at %d instants (tolerance: between the least and the most of each client's part in the replay at the ticks within ±%v):\n%s",
			column, run.mode, len(diffs), skew, table(header, diffs))
	}
}

// seriesRows returns compareSeries' rows: every sample's measures, and
// those that differ.
func seriesRows(run stallRun, steps map[string][]replayStep) (all, diffs [][]string) {
	stateAt := func(client string, at float64) replayStep {
		var st replayStep
		for _, s := range steps[client] {
			if s.AtSeconds > at+1e-9 {
				break
			}
			st = s
		}
		return st
	}
	sum := func(f func(replayStep) float64, clients ...string) []func(float64) float64 {
		var parts []func(float64) float64
		for _, c := range clients {
			parts = append(parts, func(at float64) float64 { return f(stateAt(c, at)) })
		}
		return parts
	}
	total := func(parts []func(float64) float64, at float64) float64 {
		v := 0.0
		for _, p := range parts {
			v += p(at)
		}
		return v
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	watcher := func(s replayStep) float64 { return b(s.Watcher) }
	writer := func(s replayStep) float64 { return b(s.HandlerBlockedInWrite) }
	apfWait := func(s replayStep) float64 { return b(s.Seats > 0) }
	seats := func(s replayStep) float64 { return s.Seats }
	told := func(s replayStep) float64 { return b(s.Told) }
	h2Clients := []string{cluster.UserSlowInformer, cluster.UserPacedReader}
	node := cluster.UserNodeReader
	measures := []seriesMeasure{
		{"HTTP/2 watchers (slow+paced)", func(s stallSample) float64 { return float64(s.Goroutines[transportH2].Watchers) }, sum(watcher, h2Clients...), nil},
		{"HTTP/2 handlers writing an event", func(s stallSample) float64 { return float64(s.Goroutines[transportH2].Writers) }, sum(writer, h2Clients...), sum(writer, cluster.UserPacedReader)[0]},
		{"HTTP/2 APF waits", func(s stallSample) float64 { return float64(s.Goroutines[transportH2].APFWaits) }, sum(apfWait, h2Clients...), nil},
		{"HTTP/1.1 watchers (node)", func(s stallSample) float64 { return float64(s.Goroutines[transportH1].Watchers) }, sum(watcher, node), nil},
		{"HTTP/1.1 handlers writing an event", func(s stallSample) float64 { return float64(s.Goroutines[transportH1].Writers) }, sum(writer, node), nil},
		{"HTTP/1.1 APF waits", func(s stallSample) float64 { return float64(s.Goroutines[transportH1].APFWaits) }, sum(apfWait, node), nil},
	}
	for _, u := range replayClients {
		measures = append(measures, seriesMeasure{u + " seats (dump_requests)", func(s stallSample) float64 { return s.UserSeats[u] }, sum(seats, u), nil})
	}
	measures = append(measures,
		seriesMeasure{"level's executing seats (metric)", func(s stallSample) float64 { return s.Seats }, sum(seats, replayClients...), nil},
		seriesMeasure{"slow-informer told (RST_STREAM)", func(s stallSample) float64 {
			for _, e := range run.streamEnds {
				if e.At.Sub(run.started) <= s.At {
					return 1
				}
			}
			return 0
		}, sum(told, cluster.UserSlowInformer), nil},
		seriesMeasure{"node-reader told (socket: the server's FIN arrived)", func(s stallSample) float64 { return b(s.Node.told()) }, sum(told, node), nil},
	)

	for _, s := range run.samples {
		at := s.At.Seconds()
		lo, hi := math.Floor(at-skew.Seconds()), math.Ceil(at+skew.Seconds())
		for _, m := range measures {
			real := m.real(s)
			exact := total(m.replay, at)
			// The replay's values at the ticks within skew, and each
			// client's least and most there; before the replay starts,
			// nothing is held.
			partAt := func(part func(float64) float64, tick float64) float64 {
				if tick < 0 {
					return 0
				}
				return part(tick)
			}
			var seen []string
			tmin, tmax := math.Inf(1), math.Inf(-1)
			for tick := lo; tick <= hi; tick++ {
				v := 0.0
				for _, p := range m.replay {
					v += partAt(p, tick)
				}
				tmin, tmax = min(tmin, v), max(tmax, v)
				if len(seen) == 0 || seen[len(seen)-1] != fmt.Sprint(v) {
					seen = append(seen, fmt.Sprint(v))
				}
			}
			vmin, vmax := 0.0, 0.0
			for _, p := range m.replay {
				pmin, pmax := math.Inf(1), math.Inf(-1)
				for tick := lo; tick <= hi; tick++ {
					pmin, pmax = min(pmin, partAt(p, tick)), max(pmax, partAt(p, tick))
				}
				vmin, vmax = vmin+pmin, vmax+pmax
			}
			// Between two of them: a count caught halfway through a
			// transition of several clients.
			floor := vmin
			if m.between != nil {
				floor -= m.between(at)
			}
			ok := floor <= real && real <= vmax
			verdict := "ok"
			switch {
			case !ok:
				verdict = "DIFFERENT"
			case real < vmin:
				verdict = "ok (between writes)"
			case real < tmin || real > tmax:
				verdict = "ok (clients' skews apart)"
			case real != exact:
				verdict = "ok (skew)"
			}
			row := []string{fmt.Sprintf("%.1f", at), m.name, fmt.Sprint(real), fmt.Sprint(exact), strings.Join(seen, "/"), verdict}
			all = append(all, row)
			if !ok {
				diffs = append(diffs, row)
			}
		}
	}
	return all, diffs
}

// table renders rows under header, aligned.
func table(header []string, rows [][]string) string {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	return sb.String()
}

func ptrText(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprint(*f)
}
