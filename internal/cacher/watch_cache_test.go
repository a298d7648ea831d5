package cacher

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

func TestProcessEvent(t *testing.T) {
	w := newWatchCache(testingclock.NewFakeClock(epoch), DefaultEventFreshDuration)
	w.replace(objects("ns", 2, 10, 100), 101)
	if _, err := w.processEvent(watch.Bookmark, &Object{Name: "x", ResourceVersion: 200}); err == nil || err.Error() != `unsupported event type "BOOKMARK": use ADDED, MODIFIED or DELETED` {
		t.Errorf("a bookmark: %v", err)
	}
	old := &Object{Namespace: "ns", Name: "pod-0001", ResourceVersion: 101}
	if _, err := w.processEvent(watch.Modified, old); !errors.Is(err, errNotNewer) || err.Error() != `change not newer than the cache: resource version 101 of "/ns/pod-0001", the cache's 101` {
		t.Errorf("an old version: %v", err)
	}
	e, err := w.processEvent(watch.Modified, &Object{Namespace: "ns", Name: "pod-0000", ResourceVersion: 102})
	if err != nil {
		t.Fatal(err)
	}
	if e.PrevObject == nil || e.PrevObject.ResourceVersion != 100 || e.ResourceVersion != 102 || !e.RecordTime.Equal(epoch) {
		t.Errorf("event %+v (previous %+v): want the version it replaced, at 102", e, e.PrevObject)
	}
	e, err = w.processEvent(watch.Added, &Object{Namespace: "ns", Name: "new", ResourceVersion: 103})
	if err != nil || e.PrevObject != nil {
		t.Errorf("an added object: %+v, %v", e, err)
	}
	if rv := w.resourceVersion(); rv != 103 {
		t.Errorf("resourceVersion() = %d, want 103", rv)
	}
}

// TestIntervalLocked: where a watch starts, by resource version and
// sendInitialEvents (upstream getAllEventsSinceLocked).
func TestIntervalLocked(t *testing.T) {
	w := newWatchCache(testingclock.NewFakeClock(epoch), DefaultEventFreshDuration)
	w.replace(objects("ns", 2, 10, 100), 101)
	for rv := uint64(102); rv <= 103; rv++ {
		if _, err := w.processEvent(watch.Modified, &Object{Namespace: "ns", Name: "pod-0000", ResourceVersion: rv}); err != nil {
			t.Fatal(err)
		}
	}
	yes, no := true, false
	for _, tc := range []struct {
		name string
		rv   uint64
		sie  *bool
		want []string
		err  error
	}{
		{name: "initial events", rv: 102, sie: &yes, want: []string{"ADDED /ns/pod-0000@103", "ADDED /ns/pod-0001@103"}},
		{name: "legacy rv 0", rv: 0, want: []string{"ADDED /ns/pod-0000@103", "ADDED /ns/pod-0001@103"}},
		{name: "rv 0, no initial events: from now", rv: 0, sie: &no},
		{name: "from the list", rv: 101, want: []string{"MODIFIED /ns/pod-0000@102", "MODIFIED /ns/pod-0000@103"}},
		{name: "from a change", rv: 102, sie: &no, want: []string{"MODIFIED /ns/pod-0000@103"}},
		{name: "from before the list", rv: 50, err: ErrResourceExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.RLock()
			i, err := w.intervalLocked(tc.rv, tc.sie)
			w.RUnlock()
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, drain(t, i)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func drain(t *testing.T, i *interval) []string {
	t.Helper()
	var out []string
	for {
		e, err := i.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return out
		}
		out = append(out, fmt.Sprintf("%s %s@%d", e.Type, e.Object.Key(), e.ResourceVersion))
	}
}
