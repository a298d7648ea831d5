package live

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestSilentInstancesAreProbedTogether: instances that accept and never
// answer are probed together, not Config.Parallel (4) at a time: the fake
// servers hold every probe until all 8 wait at once. (500 such instances
// took 1m21s, 8 x the 10 s probe, against 21 minutes 4 at a time.)
func TestSilentInstancesAreProbedTogether(t *testing.T) {
	t.Parallel()
	const n = 8
	gate := fakeapiserver.NewGate(n)
	var addrs []string
	var first *fakeapiserver.Server
	for i := 0; i < n; i++ {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.Hostile = map[string]*fakeapiserver.Hostility{
			"/version": {Kind: fakeapiserver.Silent, Gate: gate},
			"/metrics": {Kind: fakeapiserver.ErrorBody, Body: "no metrics here"},
		}
		if first == nil {
			first = s
		}
		addrs = append(addrs, s.Address())
	}
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, first, fakeapiserver.TokenAdmin), APIServers: addrs, Samples: 1, RequestTimeout: time.Minute, Clock: testingclock.NewFakeClock(time.Now()), Only: []api.FileKind{api.FileMetrics}}
	if _, err := Run(context.Background(), cfg, NewCaptures()); err != nil {
		t.Fatal(err)
	}
	if got := gate.MostWaiting(); got != n {
		t.Errorf("at most %d probes were in flight at once, want all %d", got, n)
	}
}

// TestProbeProgressNamesSilentInstances: while a probe waits, a progress
// line every ProgressEvery says so and names the instance.
func TestProbeProgressNamesSilentInstances(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Hostile = map[string]*fakeapiserver.Hostility{"/version": {Kind: fakeapiserver.Silent}}
	s.Started = make(chan string)
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	lines := make(chan string, 100)
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: time.Minute, Clock: clk, Progress: lineWriter{lines}, ProgressEvery: 5 * time.Second}
	stop := runInBackground(cfg)
	<-s.Started // the probe arrived
	clk.Step(5 * time.Second)
	want := "probing 1 API server instance(s): 0 done, 1 not answering yet (the slowest for 5s; each probe waits at most 10s): " + s.Address()
	for l := range lines {
		if strings.Contains(l, "probing") {
			if !strings.Contains(l, want) {
				t.Errorf("progress %q, want %q", l, want)
			}
			break
		}
	}
	if res, err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, %v, want context.Canceled", res, err)
	}
}

// runInBackground starts Run of cfg; stop cancels it and returns what Run
// returned.
func runInBackground(cfg model.Config) (stop func() (*Result, error)) {
	ctx, cancel := context.WithCancel(context.Background())
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Run(ctx, cfg, NewCaptures())
		done <- out{res, err}
	}()
	return func() (*Result, error) {
		cancel()
		o := <-done
		return o.res, o.err
	}
}
