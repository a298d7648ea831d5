package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// Tolerances of the replay-versus-real comparison.
const (
	// stallTolerance: the real server's stall comes at most this much
	// later than the replay's. The replay starts the timer at the watch's
	// start on a virtual clock; the real timer starts at the watcher's
	// first send after the request was set up, and runs on a loaded
	// machine (measured: 0.10 to 0.38 s late).
	stallTolerance = 2 * time.Second
	// seatTolerance: seat-seconds differ by the same lateness.
	seatTolerance = 2.0
)

// replayColumnOf maps a mode of the patched server to the replay column
// that models it.
var replayColumnOf = map[string]string{modeOff: "unpatched", modePR141899: "pr141899", modeComplete: "complete"}

// replayResult is the part of `replay -o json` the comparison reads.
type replayResult struct {
	Columns []struct {
		Name              string `json:"name"`
		WatcherGoroutines int    `json:"watcherGoroutines"`
		Clients           []struct {
			Name                  string   `json:"name"`
			Outcome               string   `json:"outcome"`
			StoppedAfterSeconds   *float64 `json:"stoppedAfterSeconds"`
			HandlerBlockedInWrite bool     `json:"handlerBlockedInWrite"`
			ClientTold            bool     `json:"clientTold"`
			APFSeatSeconds        float64  `json:"apfSeatSeconds"`
		} `json:"clients"`
	} `json:"columns"`
}

// compareWithReplay replays the scenario run measured (same pods, clients,
// stall timeout and duration) in the column that models its mode, with the
// built plugin, and checks that they agree per client: outcome, when it
// stopped, the watcher goroutines left, the seats held at the end and
// seat-seconds, the handler left blocked, and whether the client was told.
// Every difference is reported.
func compareWithReplay(t *testing.T, c *cluster.Cluster, run stallRun, pods int, observe time.Duration) {
	t.Helper()
	column := replayColumnOf[run.mode]
	duration := observe.Round(time.Second)
	scenario := fmt.Sprintf(`name: e2e-%[1]s
description: TestPatchedServers in mode %[1]s, replayed
duration: %[2]s
tick: 1s
stallTimeout: %[3]s
resources:
- name: pods
  objects:
  - namespace: rand2
    count: %[4]d
    bytes: 20480
clients:
- name: slow-informer
  model: stops-after 1
  namespace: rand2
  initialEvents: watch-list
  resourceVersion: "0"
  bookmarks: true
  timeout: 1h
- name: paced-reader
  model: paced 2.5/s
  namespace: rand2
  initialEvents: watch-list
  resourceVersion: "0"
  bookmarks: true
  timeout: 1h
`, run.mode, duration, run.timeout, pods)
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runPlugin(t, c, cluster.UserAdmin, "replay", path, "--columns", column, "-o", "json")
	if res.ExitCode != 0 {
		t.Fatalf("replay exit %d\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
	var rr replayResult
	if err := json.Unmarshal([]byte(res.Stdout), &rr); err != nil || len(rr.Columns) != 1 || len(rr.Columns[0].Clients) != 2 {
		t.Fatalf("replay output (err %v):\n%s", err, res.Stdout)
	}
	col := rr.Columns[0]
	last := run.samples[len(run.samples)-1]
	slow, paced := col.Clients[0], col.Clients[1]
	diff := func(what string, replay, real any) {
		t.Errorf("replay %s and the real %s server differ on %s: replay %v, real %v", column, run.mode, what, replay, real)
	}

	// Outcomes.
	realSlow := "blocked"
	if len(run.stalls) > 0 {
		realSlow = "stopped"
	}
	if slow.Outcome != realSlow {
		diff("slow-informer's outcome", slow.Outcome, realSlow)
	}
	if paced.Outcome == "stopped" || paced.Outcome == "disconnected" || run.pacedErr != nil {
		diff("paced-reader's outcome", paced.Outcome, fmt.Sprintf("still reading (error %v)", run.pacedErr))
	}
	// When it stopped.
	if len(run.stalls) > 0 {
		if slow.StoppedAfterSeconds == nil {
			diff("when slow-informer stopped", "never", run.stalls[0])
		} else if d := run.stalls[0] - time.Duration(*slow.StoppedAfterSeconds*float64(time.Second)); d < 0 || d > stallTolerance {
			diff(fmt.Sprintf("when slow-informer stopped (tolerance: real up to %v later)", stallTolerance), *slow.StoppedAfterSeconds, run.stalls[0].Seconds())
		}
	}
	// Goroutines left: the watchers alive at the end.
	if col.WatcherGoroutines != last.Senders {
		diff("watcher goroutines at the end", col.WatcherGoroutines, last.Senders)
	}
	// Seats: held at the end, and seat-seconds until the stall or the end.
	replayHeld := math.Abs(slow.APFSeatSeconds-duration.Seconds()) <= seatTolerance
	if replayHeld != last.SlowExecuting {
		diff("slow-informer's seat held at the end", replayHeld, last.SlowExecuting)
	}
	if !last.SlowExecuting && len(run.stalls) > 0 {
		if d := math.Abs(slow.APFSeatSeconds - run.stalls[0].Seconds()); d > seatTolerance {
			diff(fmt.Sprintf("slow-informer's seat-seconds (tolerance %g)", seatTolerance), slow.APFSeatSeconds, run.stalls[0].Seconds())
		}
	}
	// The handler left blocked writing: the real slow informer's request
	// still executing with its handler in writeDataFromHandler.
	realBlocked := last.SlowExecuting && last.Writers >= 1
	if slow.HandlerBlockedInWrite != realBlocked {
		diff("slow-informer's handler blocked writing at the end", slow.HandlerBlockedInWrite, realBlocked)
	}
	// Whether the client was told.
	if told := len(run.streamEnds) > 0; slow.ClientTold != told {
		diff("whether slow-informer was told", slow.ClientTold, run.streamEnds)
	}
	t.Logf("replay %s: slow-informer %s after %v s, handler blocked %t, told %t, %g seat-seconds; paced-reader %s; %d watchers left",
		column, slow.Outcome, ptrText(slow.StoppedAfterSeconds), slow.HandlerBlockedInWrite, slow.ClientTold, slow.APFSeatSeconds, paced.Outcome, col.WatcherGoroutines)
}

func ptrText(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprint(*f)
}
