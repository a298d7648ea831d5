package replay

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestOursServesTheBackendContract: through the Backend interface, a
// watch asking for initial events gets the objects then the end bookmark,
// Inspect sizes them, and unknown resources are refused by name.
func TestOursServesTheBackendContract(t *testing.T) {
	var b Backend = NewOurs(api.ColumnPR141899, 30*time.Second)
	if b.Name() != api.ColumnPR141899 {
		t.Errorf("Name() = %q", b.Name())
	}
	objs := []*cacher.Object{{Namespace: "ns", Name: "a", ResourceVersion: 9, Size: 100}, {Namespace: "ns", Name: "b", ResourceVersion: 10, Size: 200}}
	if err := b.Start([]ResourceState{{Name: "pods", Objects: objs, ResourceVersion: 10}}, testingclock.NewFakeClock(time.Unix(0, 0))); err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	if err := b.Apply("nodes", watch.Added, &cacher.Object{Name: "n"}); err == nil || err.Error() != `unknown resource "nodes"` {
		t.Errorf("Apply to an unknown resource: %v", err)
	}
	if _, err := b.Watch(context.Background(), WatchRequest{Resource: "nodes"}); err == nil || err.Error() != `unknown resource "nodes"` {
		t.Errorf("Watch of an unknown resource: %v", err)
	}
	yes := true
	var received atomic.Int64
	w, err := b.Watch(context.Background(), WatchRequest{Resource: "pods", SendInitialEvents: &yes, AllowWatchBookmarks: true, Received: &received})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []EventInfo
	for len(got) < 3 {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("the watch ended after %+v", got)
		}
		got = append(got, b.Inspect(ev))
	}
	want := []EventInfo{{Bytes: 100}, {Bytes: 200}, {Bookmark: true, InitialEventsEnd: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !b.Alive(w) {
		t.Error("a watch being read is not Alive")
	}
	if n := len(b.Counters()); n != 1 {
		t.Errorf("%d counters, want one per resource", n)
	}
	if got := b.Inspect(watch.Event{Type: watch.Error}); got != (EventInfo{}) {
		t.Errorf("Inspect of an event without an object = %+v", got)
	}
}
