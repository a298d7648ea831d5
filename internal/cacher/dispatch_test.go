package cacher

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDispatchReachesItsNamespace checks which watchers the dispatcher
// hands a change to (startDispatching): those of the object's namespace and
// the cluster-wide ones, not those of another namespace.
func TestDispatchReachesItsNamespace(t *testing.T) {
	objs := append(objects("a", 2, 100, 10), objects("b", 2, 100, 20)...)
	f := newFixture(t, 0, objs)
	streaming := WatchOptions{SendInitialEvents: sendInitialEvents(false)}
	watchers := map[string]*consumer{}
	for _, ns := range []string{"a", "b", ""} {
		opts := streaming
		opts.Namespace = ns
		watchers[ns] = f.watch(opts)
	}
	f.update(objs[0]) // namespace a
	got := map[string][]string{}
	for ns, cs := range watchers {
		cs.take(10)
		for _, ev := range cs.events {
			got[ns] = append(got[ns], string(ev.Type)+" "+ev.Object.(*Object).Namespace)
		}
	}
	want := map[string][]string{
		"a": {"MODIFIED a"},
		"":  {"MODIFIED a"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events per watcher namespace (-want +got):\n%s", diff)
	}
}

// TestDispatchPastABlockedWatcher checks dispatchEvent's two passes: a
// watcher that stopped reading does not keep the changes from one that
// reads, and once its input stays full past the budget it is closed.
func TestDispatchPastABlockedWatcher(t *testing.T) {
	objs := objects("ns", 30, 100, 10)
	f := newFixture(t, 0, objs)
	streaming := WatchOptions{Namespace: "ns", SendInitialEvents: sendInitialEvents(false)}
	stalled := f.watch(streaming)
	reader := f.watch(streaming)
	for _, o := range objs {
		f.update(o)
		reader.take(10)
	}
	if got := len(reader.events); got != len(objs) {
		t.Errorf("the reading watcher got %d changes, want %d", got, len(objs))
	}
	if got := f.c.Counters().TerminatedWatchers; got != 1 {
		t.Errorf("TerminatedWatchers = %d, want 1 (the stalled watcher)", got)
	}
	stalled.take(100)
	if !stalled.closed {
		t.Error("the stalled watcher's result channel is still open")
	}
}
