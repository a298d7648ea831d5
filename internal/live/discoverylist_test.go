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
	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// TestHangingDiscoveryFailsWithinTheRequestTimeout: when the kubeconfig
// host does not answer the EndpointSlices list, falling back to it would
// only wait again: Run fails at once.
func TestHangingDiscoveryFailsWithinTheRequestTimeout(t *testing.T) {
	// Not parallel: it waits for a request timeout of a fraction of a
	// second, which the other reads must not reach on a loaded machine.
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.BlockDiscovery = true
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), Samples: 2, Interval: time.Hour, RequestTimeout: 300 * time.Millisecond, Clock: fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Now()), T: t}}
	_, err := Run(context.Background(), cfg, NewCaptures())
	var ue *discovery.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "no answer within the request timeout") {
		t.Errorf("Run = %v, want an *UnreachableError naming the timeout", err)
	}
	if got := s.Requests(); len(got) != 1 {
		t.Errorf("requests %q, want the list alone", got)
	}
}
