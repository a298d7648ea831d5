package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	"github.com/watch-doctor/watch-doctor/internal/replay"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestUpstreamDeterministic replays, several times, a scenario whose
// outcome hangs on the upstream dispatcher's start: a watch-list client
// that stops reading at t=0 while 6 updates a second fill its input. It is
// closed outright at t=1 if its bookmark (due at t=2) has not reached it.
// Were the replay to step the clock while the dispatcher still polled for
// the first list on the wall clock (cacher.go:915), the bookmark timer
// and the queued changes would race when it got out, and the client would
// end stopped or blocked from one run to the next. Every run must give the
// same column.
func TestUpstreamDeterministic(t *testing.T) {
	sc, err := replay.Parse(strings.NewReader(`
name: dispatcher-start
duration: 6s
transport: {window: 8Ki}
resources:
- name: pods
  objects:
  - {namespace: ns, count: 30, bytes: 2Ki}
  updates:
  - {perSecond: 6, namespace: ns}
clients:
- {name: stuck, model: stops-after 1, namespace: ns}
- {name: healthy, model: healthy, namespace: ns}
`))
	if err != nil {
		t.Fatal(err)
	}
	var first *api.Column
	for run := 1; run <= 6; run++ {
		res, err := replay.Run(context.Background(), sc, []replay.Backend{New()}, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		col := &res.Columns[0]
		if first == nil {
			first = col
			if got := col.Clients[0]; got.Outcome != api.OutcomeStopped || *got.StoppedAtSeconds != 1 {
				t.Fatalf("run 1: stuck %s, want stopped at t=1s (its input full before its bookmark)\n%s", got.Outcome, describeColumn(col))
			}
			continue
		}
		if diffs := replay.CompareColumns(first, col); len(diffs) > 0 {
			t.Fatalf("run %d differs from run 1:\n  %s", run, strings.Join(diffs, "\n  "))
		}
	}
}

// TestIndexedTriggerChannelSize checks that a resource's indexed trigger
// reaches both caches: after 6500 changes within the freshness window the
// history holds 12800 events, about 171 a second, and a new watch's
// channels get 171 slots with the trigger and 100 without, upstream
// (IndexerFuncs) and in internal/cacher alike.
func TestIndexedTriggerChannelSize(t *testing.T) {
	var objs []*cacher.Object
	for i := 0; i < 10; i++ {
		objs = append(objs, &cacher.Object{Namespace: "ns", Name: fmt.Sprintf("pod-%d", i), ResourceVersion: uint64(1000 + i), Size: 100})
	}
	for _, trigger := range []string{"", replay.IndexedTriggerNodeName} {
		want := 100
		if trigger != "" {
			want = 171
		}
		for _, b := range []replay.Backend{New(), replay.NewOurs(api.ColumnUnpatched, 0)} {
			t.Run(b.Name()+"/trigger="+trigger, func(t *testing.T) {
				clk := testingclock.NewFakeClock(replay.Epoch())
				if err := b.Start([]replay.ResourceState{{Name: "pods", Objects: objs, ResourceVersion: 1009, IndexedTrigger: trigger}}, clk); err != nil {
					t.Fatal(err)
				}
				defer b.Stop()
				ctx := context.Background()
				settle := func() {
					t.Helper()
					if err := b.Settle(ctx, func() bool { return true }); err != nil {
						t.Fatal(err)
					}
				}
				settle()
				rv := uint64(1009)
				for i := 0; i < 6500; i++ {
					rv++
					o := *objs[i%len(objs)]
					o.ResourceVersion = rv
					for {
						err := b.Apply("pods", watch.Modified, &o)
						if err == nil {
							break
						}
						if !errors.Is(err, cacher.ErrBackpressure) {
							t.Fatal(err)
						}
						settle()
					}
				}
				settle()
				no := false
				wctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				w, err := b.Watch(wctx, replay.WatchRequest{Resource: "pods", Namespace: "ns", SendInitialEvents: &no})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				if got := cap(w.ResultChan()); got != want {
					t.Errorf("result channel of %d slots, want %d", got, want)
				}
			})
		}
	}
}

// TestIndexerFuncs checks the trigger functions handed to the upstream
// cacher: the pod's spec.nodeName.
func TestIndexerFuncs(t *testing.T) {
	if f, err := indexerFuncs(""); err != nil || f != nil {
		t.Errorf(`indexerFuncs(""): %v, %v; want none`, f, err)
	}
	f, err := indexerFuncs(replay.IndexedTriggerNodeName)
	if err != nil || len(f) != 1 {
		t.Fatalf("indexerFuncs(spec.nodeName): %v, %v", f, err)
	}
	p := toPod(&cacher.Object{Namespace: "ns", Name: "a", Size: 1})
	p.Spec.NodeName = "node-7"
	if got := f[replay.IndexedTriggerNodeName](p); got != "node-7" {
		t.Errorf("trigger value %q, want node-7", got)
	}
	if _, err := indexerFuncs("metadata.name"); err == nil {
		t.Error("indexerFuncs(metadata.name): no error")
	}
}
