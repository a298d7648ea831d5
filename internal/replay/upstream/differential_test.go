package upstream

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/replay"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestDifferential is the fidelity suite: every built-in scenario, and a
// matrix of small generated ones, is replayed through k8s.io/apiserver's
// cacher (upstream) and through internal/cacher with the patch off
// (unpatched), with the same clients, changes and transport, and the two
// columns must agree on everything replay.CompareColumns compares: every
// client's outcome, stop or disconnect time, events and bookmarks
// received, initial-events time, last progress, window updates and APF
// seat-seconds; the goroutines left, the bytes they hold, the APF
// seat-seconds and the per-resource counters. There is no exception. A
// difference fails with both columns printed.
func TestDifferential(t *testing.T) {
	var cases []*replay.Scenario
	for _, name := range replay.BuiltinNames() {
		sc, err := replay.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if sc.ModelRelease() != replay.DefaultRelease {
			// The in-process cacher is v0.37.2: compare it with our
			// model of the same release. A 1.38 scenario's upstream
			// column runs on v0.38 in hack/replay/v1.38 (make
			// test-replay-v1.38), and our 1.38 loop is held to our 1.37
			// one in internal/replay TestReleaseLoops.
			sc.Release = replay.DefaultRelease
		}
		cases = append(cases, sc)
	}
	matrix, err := matrixScenarios()
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, matrix...)
	edges, err := edgeScenarios()
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, edges...)
	scenarios, clients := 0, 0
	for _, sc := range cases {
		t.Run(sc.Name, func(t *testing.T) {
			res, err := replay.Run(context.Background(), sc, []replay.Backend{New(), replay.NewOurs(api.ColumnUnpatched, 0)}, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			up, un := &res.Columns[0], &res.Columns[1]
			if diffs := replay.CompareColumns(up, un); len(diffs) > 0 {
				t.Errorf("upstream and unpatched differ on %s:\n  %s\nupstream:\n%s\nunpatched:\n%s",
					sc.Name, strings.Join(diffs, "\n  "), describeColumn(up), describeColumn(un))
			}
			scenarios++
			clients += len(up.Clients)
		})
	}
	t.Logf("differential suite: %d scenarios, %d clients compared between upstream and unpatched", scenarios, clients)
}

// matrixScenarios are small scenarios around the decisions the two caches
// must take alike: a client that stops reading in its initial events is
// closed by the dispatcher outright, or gracefully if the bookmark it waits
// for reached its input first, which depends on when it started relative to
// the bookmark timer (start 0-3 s), on how fast its input fills (2, 6, 20
// updates a second), on the request (watch-list, whose client waits for a
// bookmark, or legacy resourceVersion=0, whose does not) and on bookmarks
// being allowed. Next to it, clients that read everything, read at 4 events
// a second, or stop after their initial events. Objects are few and small,
// the window 8 KiB, so that the upstream column replays each in a fraction
// of a second.
func matrixScenarios() ([]*replay.Scenario, error) {
	var out []*replay.Scenario
	for _, start := range []int{0, 1, 2, 3} {
		for _, rate := range []int{2, 6, 20} {
			for _, mode := range []string{replay.InitialWatchList, replay.InitialLegacyRV0} {
				for _, bookmarks := range []bool{true, false} {
					name := fmt.Sprintf("matrix-start%d-%dps-%s-bookmarks-%v", start, rate, mode, bookmarks)
					src := fmt.Sprintf(`
name: %s
duration: 10s
transport: {window: 8Ki}
resources:
- name: pods
  objects:
  - {namespace: ns, count: 30, bytes: 2Ki}
  - {namespace: other, count: 5, bytes: 2Ki}
  updates:
  - {perSecond: %d, namespace: ns}
clients:
- {name: stuck, model: stops-after 1, namespace: ns, startAt: %ds, initialEvents: %s, bookmarks: %v}
- {name: healthy, model: healthy, namespace: ns, startAt: %ds, initialEvents: %s, bookmarks: %v}
- {name: paced, model: paced 4/s, namespace: ns, startAt: %ds, initialEvents: %s, bookmarks: %v}
- {name: after-initial, model: stops-after initial-events, startAt: %ds, initialEvents: %s, bookmarks: %v}
`, name, rate, start, mode, bookmarks, start, mode, bookmarks, start, mode, bookmarks, start, mode, bookmarks)
					sc, err := replay.Parse(strings.NewReader(src))
					if err != nil {
						return nil, fmt.Errorf("%s: %w", name, err)
					}
					out = append(out, sc)
				}
			}
		}
	}
	return out, nil
}

func describeColumn(c *api.Column) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  blocked goroutines %d, watchers alive %d, handlers blocked in write %d, held %d objects (%d bytes), APF %g seat-seconds, counters %+v\n",
		c.BlockedGoroutines, c.WatcherGoroutines, c.HandlersBlockedInWrite, c.HeldObjects, c.HeldBytes, c.APFSeatSeconds, c.Counters)
	for _, cl := range c.Clients {
		fmt.Fprintf(&b, "  %-24s %-12s events %d, bookmarks %d", cl.Name, cl.Outcome, cl.EventsReceived, cl.BookmarksReceived)
		if cl.StoppedAtSeconds != nil {
			fmt.Fprintf(&b, ", stopped at t=%vs", *cl.StoppedAtSeconds)
		}
		if cl.InitialDoneAtSeconds != nil {
			fmt.Fprintf(&b, ", initial events by t=%vs", *cl.InitialDoneAtSeconds)
		}
		if cl.LastProgressSeconds != nil {
			fmt.Fprintf(&b, ", last progress t=%vs", *cl.LastProgressSeconds)
		}
		fmt.Fprintf(&b, ", %d window updates, APF %g\n", cl.WindowUpdates, cl.APFSeatSeconds)
	}
	return b.String()
}

// edgeScenarios cover what no built-in scenario and no matrix row does:
// clients that disconnect (in their initial events, and after them),
// request timeouts (between two writes, and while blocked in a write,
// where the handler does not see them), a half-window HTTP/2 client whose
// input the dispatcher overflows, and ticks of 500 ms and 250 ms, on which
// upstream's jittered bookmarks still fall on the same ticks in every run.
func edgeScenarios() ([]*replay.Scenario, error) {
	clients := `
clients:
- {name: leaves-early, model: disconnects-after 2s, namespace: ns}
- {name: leaves-later, model: disconnects-after 9s, namespace: ns, initialEvents: legacy-rv0}
- {name: stuck, model: stops-after 1, namespace: ns, transport: {window: 8Ki}}
- {name: stuck-with-timeout, model: stops-after 1, namespace: ns, timeout: 5s, transport: {window: 8Ki}}
- {name: healthy-with-timeout, model: healthy, namespace: ns, timeout: 6s}
- {name: half-window, model: paced 4/s, namespace: ns, transport: {window: 16Ki, refresh: half-window}}
- {name: paced, model: paced 3/s, startAt: 1s}
`
	var out []*replay.Scenario
	for _, tick := range []string{"1s", "500ms", "250ms"} {
		src := fmt.Sprintf(`
name: edges-tick-%s
duration: 12s
tick: %s
resources:
- name: pods
  objects:
  - {namespace: ns, count: 30, bytes: 2Ki}
  - {namespace: other, count: 5, bytes: 2Ki}
  updates:
  - {perSecond: 4, namespace: ns}
`, tick, tick) + clients
		sc, err := replay.Parse(strings.NewReader(src))
		if err != nil {
			return nil, fmt.Errorf("edges-tick-%s: %w", tick, err)
		}
		out = append(out, sc)
	}
	return out, nil
}
