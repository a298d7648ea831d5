package watches

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// The trace route classifies with the dump's frame rules: on the real
// seed dumps, the stacks alone (no creator, parent or state, as a trace
// gives them) find the same initial-phase watchers, APF waits and handlers
// blocked writing as the Collector.
func TestClassifyTraceStackAgreesWithCollector(t *testing.T) {
	for _, dir := range []string{"t1", "t2"} {
		t.Run(dir, func(t *testing.T) {
			f, err := os.Open(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", dir, "goroutine-debug2.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			type kinds struct{ Initial, APF, BlockedHandlers, Kept []int64 }
			var fromStack kinds
			d, err := ReadDump(f, ReadOptions{AllArgs: true, Each: func(g *stacks.Goroutine) error {
				st := make([]trace.Frame, len(g.Frames))
				for i, fr := range g.Frames {
					st[i] = trace.Frame{Func: fr.Func, File: fr.File, Line: fr.Line}
				}
				c := classifyTraceStack(st)
				switch {
				case c.Class == TraceWatcher && c.Phase == api.PhaseInitial:
					fromStack.Initial = append(fromStack.Initial, g.ID)
				case c.Class == TraceAPFWait:
					fromStack.APF = append(fromStack.APF, g.ID)
				case c.Class == TraceHandler:
					fromStack.BlockedHandlers = append(fromStack.BlockedHandlers, g.ID)
				}
				if keepTraceStack(st) {
					fromStack.Kept = append(fromStack.Kept, g.ID)
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			var fromDump kinds
			for _, w := range d.Watchers {
				if w.Phase != api.PhaseInitial {
					continue
				}
				fromDump.Initial = append(fromDump.Initial, w.GoroutineID)
				fromDump.APF = append(fromDump.APF, w.APFGoroutineID)
				if w.Handler != nil && w.Handler.Block == api.HandlerClientNotReading {
					fromDump.BlockedHandlers = append(fromDump.BlockedHandlers, w.Handler.GoroutineID)
				}
			}
			fromDump.Kept = append(append(append([]int64(nil), fromDump.Initial...), fromDump.APF...), fromDump.BlockedHandlers...)
			sortIDs := func(k *kinds) {
				for _, s := range [][]int64{k.Initial, k.APF, k.BlockedHandlers, k.Kept} {
					slices.Sort(s)
				}
			}
			sortIDs(&fromStack)
			sortIDs(&fromDump)
			if diff := cmp.Diff(fromDump, fromStack); diff != "" {
				t.Errorf("watch-path goroutines (-dump's Collector +stacks alone):\n%s", diff)
			}
			if len(fromDump.Initial) != 2 {
				t.Errorf("initial-phase watchers %v, want the seed's two", fromDump.Initial)
			}
		})
	}
}
