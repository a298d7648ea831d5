package diagnosis

import (
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// A watcher's request is at least as old as its wait and as the time
// since an earlier sample saw it, each less the capture slack; with no
// capture time nothing bounds it.
func TestNeedOf(t *testing.T) {
	at := t0.Add(time.Hour)
	tests := []struct {
		name string
		at   time.Time
		wait int
		seen time.Time
		want time.Duration
	}{
		{"wait", at, 3, time.Time{}, 3*time.Minute - 30*time.Second},
		{"seen earlier than the wait", at, 1, at.Add(-10 * time.Minute), 10*time.Minute - 30*time.Second},
		{"wait longer than seen", at, 20, at.Add(-10 * time.Minute), 20*time.Minute - 30*time.Second},
		{"no wait", at, 0, time.Time{}, 0},
		{"no capture time", time.Time{}, 5, at.Add(-10 * time.Minute), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := initialWatcher(10, tt.wait)
			m := &matcher{in: matchInput{at: tt.at, slack: 30 * time.Second, seenAt: map[int64]time.Time{10: tt.seen}}}
			if got := m.needOf(w); got != tt.want {
				t.Errorf("needOf = %s, want %s", got, tt.want)
			}
		})
	}
}

// Untrusted requests (no details, or mixed processes) give watchers no
// class and requests no resource.
func TestNewMatcherUntrusted(t *testing.T) {
	in := matchInput{watchers: []api.Watcher{typed(10, 1, "0xa")}, reqs: []apf.Request{resourceRequest("u", "pods", t0)}, at: t0.Add(time.Hour)}
	m := newMatcher(in, false)
	if m.wclass[0] != wild || len(m.classes) != 0 || m.resources[0] != "" || m.typesUsed {
		t.Errorf("classes %v (watcher %d), resources %q, types used %v", m.classes, m.wclass[0], m.resources, m.typesUsed)
	}
	m = newMatcher(in, true)
	if m.wclass[0] != 0 || m.resources[0] != "/pods" || !m.typesUsed {
		t.Errorf("trusted: classes %v (watcher %d), resources %q, types used %v", m.classes, m.wclass[0], m.resources, m.typesUsed)
	}
}

func TestInterner(t *testing.T) {
	in := interner{}
	a := in.intern(string([]byte("same text")))
	b := in.intern(string([]byte("same text")))
	if a != b || len(in) != 1 {
		t.Errorf("interned %q and %q into %d entries", a, b, len(in))
	}
}
