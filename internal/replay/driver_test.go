package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestHealthyClientsKeepUp: clients that read everything complete at 11,
// 20 and 60 changes a second, in internal/cacher's columns (the differential
// suite compares upstream with them at up to 20), because they read between the
// changes of a tick. With all of a tick's changes delivered before any
// read, every client whose snapshot (3.2 MiB here) is larger than its
// flow-control window (256 KiB) was still in its initial events when they
// came, overflowed its 10-slot input at 11 changes a second or more, and
// was closed at its start tick. A client whose window holds only four
// events reads whenever its handler waits for credit, so that 60 changes a
// second do not overflow it either. A client that stops reading is still
// closed.
func TestHealthyClientsKeepUp(t *testing.T) {
	for _, rate := range []int{11, 20, 60} {
		sc, err := Parse(strings.NewReader(fmt.Sprintf(`
name: fast-changes
duration: 12s
transport: {window: 256Ki}
resources:
- name: pods
  objects:
  - {namespace: a, count: 400, bytes: 4Ki}
  - {namespace: b, count: 400, bytes: 4Ki}
  updates:
  - perSecond: %d
clients:
- {name: lister, count: 6, model: healthy, every: 1s}
- {name: legacy, count: 2, model: healthy, initialEvents: legacy-rv0, every: 3s}
- {name: small-window, model: healthy, namespace: a, startAt: 2s, transport: {window: 16Ki}}
- {name: stuck, model: stops-after 100, startAt: 1s, transport: {window: 64Ki}}
`, rate)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), sc, DefaultBackends(sc, nil), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range res.Columns {
			var terminated int64
			for _, c := range col.Counters {
				terminated += c.TerminatedWatchers
			}
			for _, c := range col.Clients {
				want := api.OutcomeCompleted
				if c.Name == "stuck" {
					continue
				}
				if c.Outcome != want {
					t.Errorf("%d changes/s, %s: %s %s, want %s", rate, col.Name, c.Name, describe(c), want)
				}
			}
			if stuck := col.Clients[len(col.Clients)-1]; stuck.Outcome == api.OutcomeCompleted || terminated != 1 {
				t.Errorf("%d changes/s, %s: stuck %s, %d closed by the dispatcher; want it ended and 1 closed", rate, col.Name, describe(stuck), terminated)
			}
		}
	}
}

// stoppingBackend stops its backend at the first change: every Apply after
// is refused with cacher.ErrStopped.
type stoppingBackend struct {
	Backend
	applies int
}

func (b *stoppingBackend) Apply(resource string, t watch.EventType, o *cacher.Object) error {
	b.applies++
	b.Backend.Stop()
	return b.Backend.Apply(resource, t, o)
}

// TestApplyToStoppedCache: a backend whose cache is stopped ends the
// replay with the error at once; the driver does not retry it as it does
// a full queue.
func TestApplyToStoppedCache(t *testing.T) {
	sc, err := Parse(strings.NewReader(`
name: stopped
duration: 10s
resources:
- name: pods
  objects: [{namespace: ns, count: 5, bytes: 1Ki}]
  updates: [{perSecond: 1}]
clients: [{name: c, model: healthy}]
`))
	if err != nil {
		t.Fatal(err)
	}
	b := &stoppingBackend{Backend: NewOurs(api.ColumnUnpatched, 0)}
	_, err = Run(context.Background(), sc, []Backend{b}, Options{})
	if !errors.Is(err, cacher.ErrStopped) {
		t.Fatalf("Run: %v, want an error wrapping %v", err, cacher.ErrStopped)
	}
	if b.applies != 1 {
		t.Errorf("%d applies, want 1: no retry", b.applies)
	}
}
