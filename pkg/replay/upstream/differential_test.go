package upstream

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/pkg/replay"
)

// TestDifferential is the fidelity suite: every built-in scenario is
// replayed through k8s.io/apiserver's cacher (upstream) and through
// pkg/cacher with the patch off (unpatched), with the same clients, changes
// and transport, and the two must agree on every client's outcome (and its
// stop time) and on the goroutines left blocked, read from a goroutine
// dump by pkg/watches. A difference fails with both outcomes printed.
func TestDifferential(t *testing.T) {
	scenarios, clients := 0, 0
	for _, name := range replay.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc, err := replay.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			res, err := replay.Run(context.Background(), sc, []replay.Backend{New(), replay.NewOurs(replay.ColumnUnpatched, 0)}, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			up, un := &res.Columns[0], &res.Columns[1]
			diffs := replay.CompareColumns(up, un)
			for i := range up.Clients {
				a, b := up.Clients[i], un.Clients[i]
				if a.Outcome == b.Outcome && !sameStop(a, b) {
					diffs = append(diffs, fmt.Sprintf("%s: stopped at t=%v upstream, t=%v unpatched", a.Name, *a.StoppedAtSeconds, *b.StoppedAtSeconds))
				}
			}
			if len(diffs) > 0 {
				t.Errorf("upstream and unpatched differ on %s:\n  %s\nupstream:\n%s\nunpatched:\n%s",
					name, strings.Join(diffs, "\n  "), describeColumn(up), describeColumn(un))
			}
			scenarios++
			clients += len(up.Clients)
		})
	}
	t.Logf("differential suite: %d scenarios, %d clients compared between upstream and unpatched", scenarios, clients)
}

func sameStop(a, b replay.ClientResult) bool {
	if a.StoppedAtSeconds == nil || b.StoppedAtSeconds == nil {
		return a.StoppedAtSeconds == nil && b.StoppedAtSeconds == nil
	}
	return *a.StoppedAtSeconds == *b.StoppedAtSeconds
}

func describeColumn(c *replay.Column) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  blocked goroutines %d, watchers alive %d\n", c.BlockedGoroutines, c.WatcherGoroutines)
	for _, cl := range c.Clients {
		fmt.Fprintf(&b, "  %-24s %-12s events %d", cl.Name, cl.Outcome, cl.EventsReceived)
		if cl.StoppedAtSeconds != nil {
			fmt.Fprintf(&b, " stopped at t=%vs", *cl.StoppedAtSeconds)
		}
		b.WriteString("\n")
	}
	return b.String()
}
