package live

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestEndpointSlicesListIsBoundedAfterDecompression: an endless or
// gzip-bombed answer to the EndpointSlices list (client-go's LIST) is an
// error naming the server once 4 MiB were read, not an OOM.
func TestEndpointSlicesListIsBoundedAfterDecompression(t *testing.T) {
	t.Parallel()
	for _, kind := range []fakeapiserver.HostileKind{fakeapiserver.Endless, fakeapiserver.GzipBomb} {
		h := &fakeapiserver.Hostility{Kind: kind}
		s := hostileServer(t, fakeapiserver.DiscoveryPath, h)
		cfg := hostileConfig(t, s)
		cfg.APIServers = nil
		_, err := Run(context.Background(), cfg, NewCaptures())
		var tl *model.TooLargeError
		if !errors.As(err, &tl) || tl.Limit != model.MaxListBytes || !strings.Contains(err.Error(), s.Address()+": GET "+fakeapiserver.DiscoveryPath+": the answer is larger than 4 MiB after decompression") {
			t.Errorf("kind %d: Run = %v, want a *TooLargeError naming the server and the list", kind, err)
		}
		if kind == fakeapiserver.Endless && h.Sent() > model.MaxListBytes+fakeapiserver.FlowSlack {
			t.Errorf("the server wrote %d bytes before the client stopped, want at most %d", h.Sent(), model.MaxListBytes+fakeapiserver.FlowSlack)
		}
	}
}

// TestThrottledDiscoveryIsSaidAtOnce: a 429 with Retry-After on the
// EndpointSlices list is asked once and said as APF throttling, not
// retried until the timeout and called "did not answer".
func TestThrottledDiscoveryIsSaidAtOnce(t *testing.T) {
	t.Parallel()
	h := &fakeapiserver.Hostility{Kind: fakeapiserver.TooManyRequests, RetryAfter: 30}
	s := hostileServer(t, fakeapiserver.DiscoveryPath, h)
	cfg := hostileConfig(t, s)
	cfg.APIServers, cfg.Only = nil, []api.FileKind{api.FileVersion}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if h.Hits() != 1 {
		t.Errorf("the list was sent %d times, want once", h.Hits())
	}
	note := strings.Join(res.Notes, "\n")
	if !strings.Contains(note, "HTTP 429 Too Many Requests, Retry-After 30s: API Priority and Fairness is rejecting requests") {
		t.Errorf("notes %q, want the 429 said as APF throttling", note)
	}
}

// TestDiscoveryFailuresAreNamedAsWhatTheyAre: an HTML page and a TLS
// failure are said as such, not "did not answer".
func TestDiscoveryFailuresAreNamedAsWhatTheyAre(t *testing.T) {
	t.Parallel()
	html := hostileServer(t, fakeapiserver.DiscoveryPath, &fakeapiserver.Hostility{Kind: fakeapiserver.HTML})
	cfg := hostileConfig(t, html)
	cfg.APIServers = nil
	_, err := Run(context.Background(), cfg, NewCaptures())
	if err == nil || !strings.Contains(err.Error(), html.Address()+": GET "+fakeapiserver.DiscoveryPath+": answered with an HTML page, not the Kubernetes API") {
		t.Errorf("HTML: Run = %v", err)
	}

	other := fakeapiserver.Start(t, golden.Fixture("t2"))
	cfg = hostileConfig(t, other)
	cfg.APIServers = nil
	cfg.REST = &rest.Config{Host: other.URL, BearerToken: fakeapiserver.TokenAdmin} // the system roots: no CA of the fake
	_, err = Run(context.Background(), cfg, NewCaptures())
	if err == nil || !strings.Contains(err.Error(), other.Address()+" failed TLS verification listing") {
		t.Errorf("TLS: Run = %v, want the TLS failure named", err)
	}
}

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
