package tracefetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// A live trace covers the window asked for within the tolerance (2 s, or
// a tenth of the window) unless the run stopped it or it was cut short,
// and took at least the span it covers to arrive.
func TestImplausible(t *testing.T) {
	t.Parallel()
	cut := errors.New("unexpected EOF")
	for _, tc := range []struct {
		name           string
		asked, covered time.Duration
		took           time.Duration
		stopped        bool
		err            error
		want           []string
	}{
		{"live", 40 * time.Second, 39 * time.Second, 40 * time.Second, false, nil, nil},
		{"live, a tenth short", 70 * time.Second, 63 * time.Second, 70 * time.Second, false, nil, nil},
		{"live, 2 s over", 20 * time.Second, 22 * time.Second, 22 * time.Second, false, nil, nil},
		{"issue 35: 20 s of 40 s in 0.18 s", 40 * time.Second, 20 * time.Second, 180 * time.Millisecond, false, nil,
			[]string{"it covers 20s less than asked", "it arrived 19.8s sooner than the span it covers"}},
		{"short, in time", 40 * time.Second, 20 * time.Second, 40 * time.Second, false, nil, []string{"it covers 20s less than asked"}},
		{"whole, at once", 20 * time.Second, 20 * time.Second, 50 * time.Millisecond, false, nil, []string{"it arrived 20s sooner than the span it covers"}},
		{"more than asked", 20 * time.Second, 30 * time.Second, 30 * time.Second, false, nil, []string{"it covers 10s more than asked"}},
		{"covers little, arrives early", 40 * time.Second, time.Second, 2 * time.Second, false, nil,
			[]string{"it covers 39s less than asked", "it arrived 38s sooner than the window asked for"}},
		{"stopped early", 40 * time.Second, 5 * time.Second, 5 * time.Second, true, nil, nil},
		{"stopped early, at once", 40 * time.Second, 5 * time.Second, 10 * time.Millisecond, true, nil, []string{"it arrived 5s sooner than the span it covers"}},
		{"cut short", 40 * time.Second, 5 * time.Second, 6 * time.Second, false, cut, nil},
		{"cut short, at once", 40 * time.Second, 5 * time.Second, 10 * time.Millisecond, false, cut, []string{"it arrived 5s sooner than the span it covers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &model.TraceResult{Requested: tc.asked, Err: tc.err, Summary: &watches.Trace{Window: tc.covered, StoppedEarly: tc.stopped}}
			err := implausible("api", tr, tc.took)
			var got []string
			var ie *TraceImplausibleError
			if errors.As(err, &ie) {
				got = ie.Why
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("why set aside (-want +got):\n%s", diff)
			}
		})
	}
	if err := implausible("api", &model.TraceResult{Requested: time.Second}, 0); err != nil {
		t.Errorf("no summary: %v, want nothing to check", err)
	}
}

func TestTraceImplausibleErrorText(t *testing.T) {
	t.Parallel()
	err := implausible("10.0.0.12:6443", &model.TraceResult{Requested: 40 * time.Second, Summary: &watches.Trace{Window: 20 * time.Second}}, 180*time.Millisecond)
	want := "10.0.0.12:6443: the execution trace was set aside, nothing is decided from it: asked for 40s, it covers 20s and arrived in 180ms (request to end of body): it covers 20s less than asked, and it arrived 19.8s sooner than the span it covers; a live trace covers the window asked for, within 4s, and takes at least as long as it covers to arrive: this one was replayed or made up, not traced"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

func TestTraceTolerance(t *testing.T) {
	t.Parallel()
	for asked, want := range map[time.Duration]time.Duration{time.Second: 2 * time.Second, 20 * time.Second: 2 * time.Second, 40 * time.Second: 4 * time.Second, 70 * time.Second: 7 * time.Second} {
		if got := traceTolerance(asked); got != want {
			t.Errorf("traceTolerance(%s) = %s, want %s", asked, got, want)
		}
	}
}

// traceStore keeps the trace TraceInstance streams.
type traceStore struct{ got bytes.Buffer }

func (s *traceStore) Store(string, int, api.FileKind, io.Reader) error { return nil }

func (s *traceStore) StoreTrace(_ string, body io.Reader) error {
	_, err := io.Copy(&s.got, body)
	return err
}

// TraceInstance on a fake server answering every trace with the real seed
// server's (20.0 s, 2.4 MB): taking as long as asked on the run's clock
// (TraceClock) and asked for 20 s, it is kept whole; asked for 40 s, or
// arriving at once, it is set aside, with why, no summary and no file.
func TestTraceInstanceSetsAsideATraceThatCannotBeLive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		interval time.Duration
		live     bool
		why      []string
	}{
		{"20 s asked, 20 s in 20 s", 20 * time.Second, true, nil},
		{"40 s asked, 20 s in 40 s", 40 * time.Second, true, []string{"it covers 20s less than asked"}},
		{"40 s asked, 20 s at once", 40 * time.Second, false, []string{"it covers 20s less than asked", "it arrived 20s sooner than the span it covers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seed := fakeapiserver.TraceSeed(t)
			s := fakeapiserver.Start(t, fakeapiserver.TraceSeedSample(t, "1"))
			s.TraceBody = seed
			clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC))
			if tc.live {
				s.TraceClock = clk
			}
			cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), Interval: tc.interval, RequestTimeout: time.Minute, Clock: clk}
			c, err := cfg.ClientFor(model.Instance{Name: s.Address(), Address: s.Address(), Pinned: true})
			if err != nil {
				t.Fatal(err)
			}
			ir := &model.InstanceResult{GoVersion: "go1.26.8", Trace: &model.TraceResult{Reason: "test"}}
			store := &traceStore{}
			TraceInstance(context.Background(), cfg, c, ir, store)
			tr := ir.Trace
			if store.got.Len() != len(seed) || tr.Fetch == nil || tr.Fetch.Bytes != int64(len(seed)) {
				t.Fatalf("stored %d bytes, fetch %+v; want the seed's %d streamed to the store", store.got.Len(), tr.Fetch, len(seed))
			}
			if tc.why == nil {
				if tr.Summary == nil || tr.Err != nil || tr.SetAside || tr.Took != tc.interval || tr.Fetch.File != "trace.out" {
					t.Errorf("trace %+v, fetch %+v: want it kept, taking %s", tr, tr.Fetch, tc.interval)
				}
				if !strings.HasPrefix(tr.Window, "the trace covers 20s (2.4 MiB)") {
					t.Errorf("window %q", tr.Window)
				}
				return
			}
			var ie *TraceImplausibleError
			if tr.Summary != nil || !tr.SetAside || !errors.As(tr.Err, &ie) {
				t.Fatalf("trace %+v: want it set aside", tr)
			}
			if diff := cmp.Diff(tc.why, ie.Why); diff != "" {
				t.Errorf("why (-want +got):\n%s", diff)
			}
			if tr.Fetch.Error != tr.Err.Error() || tr.Fetch.File != "" || !strings.HasPrefix(tr.Window, "nothing proven: "+s.Address()+": the execution trace was set aside") {
				t.Errorf("fetch %+v, window %q: want the fetch's error to say why, and no file kept", tr.Fetch, tr.Window)
			}
		})
	}
}
