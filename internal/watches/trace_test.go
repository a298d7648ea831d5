package watches

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// The trace route classifies with the dump's frame rules: on the real
// seed dumps, the stacks alone (no creator, parent or state, as a trace
// gives them) find the same initial-phase watchers, APF waits and handlers
// blocked writing as the Collector; and so they do on the same dumps with
// their watchers in the v1.38 shape (dumpgen.Debug2To138, derived from
// them: process -> processInitialEvents -> sendWatchCacheEvent).
func TestClassifyTraceStackAgreesWithCollector(t *testing.T) {
	for _, tc := range []struct {
		dir    string
		derive func([]byte) ([]byte, error)
	}{
		{"t1", nil}, {"t2", nil}, {"t1", dumpgen.Debug2To138}, {"t2", dumpgen.Debug2To138},
	} {
		name := tc.dir
		if tc.derive != nil {
			name += "/v1.38-derived"
		}
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", tc.dir, "goroutine-debug2.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.derive != nil {
				if b, err = tc.derive(b); err != nil {
					t.Fatal(err)
				}
			}
			f := bytes.NewReader(b)
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

// ReadTrace on the real seed trace: two initial-phase watchers, one of
// which progresses; a Progress that stops once it has seen that stops the
// read early, with the window read so far.
func TestReadTraceSeedProgress(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1", "trace.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last TraceProgress
	calls := 0
	tr, err := ReadTrace(f, TraceOptions{Source: "seed", Progress: func(p TraceProgress) bool {
		calls++
		last = p
		return !(p.Initial == 2 && p.Progressed == 1 && p.Window > 3*time.Second)
	}})
	if err != nil {
		t.Fatalf("ReadTrace: %v", err)
	}
	if !tr.StoppedEarly || tr.Window >= 15*time.Second || last.Initial != 2 || last.Progressed != 1 || calls < 3 {
		t.Errorf("stopped %v after %v (%d calls), last progress %+v", tr.StoppedEarly, tr.Window, calls, last)
	}
	classes := map[TraceClass]int{}
	for _, g := range tr.Goroutines {
		classes[g.Class]++
	}
	if diff := cmp.Diff(map[TraceClass]int{TraceWatcher: 2, TraceAPFWait: 2, TraceHandler: 2}, classes); diff != "" {
		t.Errorf("kept goroutines by class (-want +got):\n%s", diff)
	}
}

// ReadTrace on a real Go 1.27 trace of kube-apiserver v1.38.0-beta.0 (its
// watchers under process -> processInitialEvents): the seed's two
// initial-phase watchers, their APF waits and their handlers blocked
// writing, as on v1.37.2's trace; the debug=2 dumps taken beside it
// (trace-seed/debug2) decide which is which: 38487 blocked on one event in
// both, 39259 progressing.
func TestReadTraceV138(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.38.0-beta.0", "trace-seed", "bundle", "127.0.0.1", "trace.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ReadTrace(f, TraceOptions{Source: "v1.38"})
	if err != nil {
		t.Fatalf("ReadTrace: %v", err)
	}
	classes := map[TraceClass]int{}
	var initial []int64
	for _, g := range tr.Goroutines {
		classes[g.Class]++
		if g.Class == TraceWatcher && g.Phase == api.PhaseInitial && g.InSend {
			initial = append(initial, int64(g.ID))
		}
	}
	if diff := cmp.Diff(map[TraceClass]int{TraceWatcher: 2, TraceAPFWait: 2, TraceHandler: 2}, classes); diff != "" {
		t.Errorf("kept goroutines by class (-want +got):\n%s", diff)
	}
	slices.Sort(initial)
	if diff := cmp.Diff([]int64{38487, 39259}, initial); diff != "" {
		t.Errorf("initial-phase watchers in send (-want +got):\n%s", diff)
	}
}
