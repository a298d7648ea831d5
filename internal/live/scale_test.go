package live

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

func tookDump(s *fakeapiserver.Server) bool {
	for _, p := range s.Requests() {
		if p == "/debug/pprof/goroutine?debug=2" {
			return true
		}
	}
	return false
}

// TestFailFast: a refused or hanging instance ends the run after its first
// sample, without the interval (issue 10 item 6).
func TestFailFast(t *testing.T) {
	// Not parallel: it waits for a request timeout, which the other reads
	// (discovery, answered at once) must not reach. At 300 ms they did, on
	// a machine at load 15 under -race (the first TLS handshake alone):
	// 2 s leaves them room, and costs the two hanging cases 2 s each.
	hanging := fakeapiserver.Start(t, golden.Fixture("t2"))
	hanging.BlockAll = true
	tests := []struct {
		name    string
		rest    func(t *testing.T) *rest.Config
		servers []string
		wantErr string
	}{
		{"refused", func(t *testing.T) *rest.Config { return fakeapiserver.RESTConfig(t, hanging, fakeapiserver.TokenAdmin) }, []string{"127.0.0.1:1"}, "127.0.0.1:1: not reachable directly"},
		{"hanging, pinned", func(t *testing.T) *rest.Config { return fakeapiserver.RESTConfig(t, hanging, fakeapiserver.TokenAdmin) }, []string{hanging.Address()}, "not reachable directly: no answer within 2s"},
		// Through the kubeconfig host (no probe): /metrics times out, and
		// nothing else of the instance is asked.
		{"hanging, through the kubeconfig host", func(t *testing.T) *rest.Config {
			cfg := fakeapiserver.RESTConfig(t, hanging, fakeapiserver.TokenAdmin)
			return cfg
		}, nil, "GET /metrics: timed out after 2s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Now()), T: t}
			cfg := model.Config{REST: tc.rest(t), APIServers: tc.servers, Samples: 2, Interval: time.Hour, RequestTimeout: 2 * time.Second, Clock: clk}
			res, err := Run(context.Background(), cfg, NewCaptures())
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, ir := range res.Instances {
				for _, e := range ir.Errors {
					all = append(all, e.Error())
				}
				if len(ir.Samples) > 1 {
					t.Errorf("%d samples taken of a dead instance", len(ir.Samples))
				}
			}
			if len(all) == 0 || !strings.Contains(all[0], tc.wantErr) {
				t.Errorf("errors %q, want the first to contain %q", all, tc.wantErr)
			}
			if tc.servers == nil && len(all) != 1 {
				t.Errorf("errors %q: want one failed fetch, the others not attempted", all)
			}
		})
	}
}

// lineWriter hands each progress line to a channel.
type lineWriter struct{ lines chan string }

func (w lineWriter) Write(p []byte) (int, error) {
	w.lines <- string(p)
	return len(p), nil
}

// TestProgressWhileWaiting: a fetch the server does not answer is reported
// on the progress writer every ProgressEvery of the (fake) clock.
func TestProgressWhileWaiting(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Block = true
	s.Started = make(chan string)
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	lines := make(chan string, 100)
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: time.Minute, Clock: clk, Progress: lineWriter{lines}, ProgressEvery: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg, NewCaptures())
		done <- err
	}()
	for p := range s.Started {
		if p == "/debug/pprof/goroutine?debug=2" {
			break
		}
	}
	// The watchdog's timer was set before the request was sent.
	clk.Step(5 * time.Second)
	for l := range lines {
		if strings.Contains(l, "GET /debug/pprof/goroutine?debug=2: no complete answer yet, waiting 5s so far") {
			if !strings.Contains(l, s.Address()) {
				t.Errorf("progress line names no instance: %q", l)
			}
			break
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
}

// TestInstancesAreReadConcurrently: two instances that do not answer are
// both asked before either request ends (sequential reading would ask the
// second only after the first timed out).
func TestInstancesAreReadConcurrently(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	b := fakeapiserver.Start(t, golden.Fixture("t2"))
	started := make(chan string)
	for _, s := range []*fakeapiserver.Server{a, b} {
		s.BlockAll = true
		s.Started = started
	}
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, a, fakeapiserver.TokenAdmin), APIServers: []string{a.Address(), b.Address()}, Samples: 1, RequestTimeout: time.Hour, Clock: testingclock.NewFakeClock(time.Now())}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg, NewCaptures())
		done <- err
	}()
	<-started
	<-started // the second request is in flight while the first hangs
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
}

func TestParallelBound(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	running, most := 0, 0
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		model.Parallel(context.Background(), 3, 10, func(int) {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			entered <- struct{}{}
			<-release
			mu.Lock()
			running--
			mu.Unlock()
		})
		close(done)
	}()
	for i := 0; i < 3; i++ {
		<-entered
	}
	close(release)
	<-done
	if most != 3 {
		t.Errorf("at most %d ran at once, want 3", most)
	}
}
