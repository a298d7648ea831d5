package discovery

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// listing is a fake API server serving t2 whose EndpointSlices list is h
// (nil: its Endpoints), and the config to read it as token.
func listing(t *testing.T, h *fakeapiserver.Hostility, token string) (*fakeapiserver.Server, *rest.Config) {
	t.Helper()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	if h != nil {
		s.Hostile = map[string]*fakeapiserver.Hostility{fakeapiserver.DiscoveryPath: h}
	}
	return s, fakeapiserver.RESTConfig(t, s, token)
}

// TestDiscover: the instances are the ready addresses the EndpointSlices
// list, sorted, or the addresses given; a list refused or empty falls
// back to the kubeconfig host, unpinned, with a note saying why.
func TestDiscover(t *testing.T) {
	t.Parallel()
	s, cfg := listing(t, nil, fakeapiserver.TokenAdmin)
	s.Endpoints = []string{"10.0.0.2:6443", "10.0.0.1:6443", "10.0.0.2:6443"}
	_, refused := listing(t, nil, fakeapiserver.TokenNoDebug)
	refusedHost := HostOf(refused.Host)
	_, empty := listing(t, nil, fakeapiserver.TokenAdmin)
	emptyHost := HostOf(empty.Host)
	for _, tc := range []struct {
		name      string
		cfg       *rest.Config
		explicit  []string
		want      []model.Instance
		wantNotes []string
	}{
		{"listed", cfg, nil, []model.Instance{{Name: "10.0.0.1:6443", Address: "10.0.0.1:6443", Pinned: true}, {Name: "10.0.0.2:6443", Address: "10.0.0.2:6443", Pinned: true}}, nil},
		{"given", cfg, []string{"10.0.0.9:6443"}, []model.Instance{{Name: "10.0.0.9:6443", Address: "10.0.0.9:6443", Pinned: true}}, nil},
		{"refused", refused, nil, []model.Instance{{Name: refusedHost}}, []string{"cannot list the API server instances (default/kubernetes EndpointSlices): forbidden: missing RBAC rule " + model.EndpointSlicesRule().String()}},
		{"none ready", empty, nil, []model.Instance{{Name: emptyHost}}, []string{"the default/kubernetes EndpointSlices list no ready API server; reading through the kubeconfig host " + emptyHost + " instead"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Discover(context.Background(), tc.cfg, tc.explicit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, d.Instances); diff != "" {
				t.Errorf("instances (-want +got):\n%s", diff)
			}
			if len(d.Notes) != len(tc.wantNotes) {
				t.Fatalf("notes %q, want %d", d.Notes, len(tc.wantNotes))
			}
			for i, n := range tc.wantNotes {
				if !strings.HasPrefix(d.Notes[i], n) {
					t.Errorf("note %q, want it to start with %q", d.Notes[i], n)
				}
			}
		})
	}
	if _, err := Discover(context.Background(), cfg, []string{"10.0.0.9"}); err == nil || !strings.Contains(err.Error(), `invalid API server address "10.0.0.9": want HOST:PORT`) {
		t.Errorf("an address without a port: %v", err)
	}
}

// TestEndpointSlicesListIsBoundedAfterDecompression: an endless or
// gzip-bombed answer to the EndpointSlices list (client-go's LIST) is an
// error naming the server once 4 MiB were read, not an OOM.
func TestEndpointSlicesListIsBoundedAfterDecompression(t *testing.T) {
	t.Parallel()
	for _, kind := range []fakeapiserver.HostileKind{fakeapiserver.Endless, fakeapiserver.GzipBomb} {
		h := &fakeapiserver.Hostility{Kind: kind}
		s, cfg := listing(t, h, fakeapiserver.TokenAdmin)
		_, err := Discover(context.Background(), cfg, nil)
		var tl *model.TooLargeError
		if !errors.As(err, &tl) || tl.Limit != model.MaxListBytes || !strings.Contains(err.Error(), s.Address()+": GET "+fakeapiserver.DiscoveryPath+": the answer is larger than 4 MiB after decompression") {
			t.Errorf("kind %d: Discover = %v, want a *TooLargeError naming the server and the list", kind, err)
		}
		if kind == fakeapiserver.Endless && h.Sent() > model.MaxListBytes+fakeapiserver.FlowSlack {
			t.Errorf("the server wrote %d bytes before the client stopped, want at most %d", h.Sent(), model.MaxListBytes+fakeapiserver.FlowSlack)
		}
	}
}

// TestNoRedirectIsFollowedByTheList: a 302 to another loopback port,
// answering client-go's LIST of the EndpointSlices, is a *RedirectError
// naming the server and the Location's host; nothing reaches that host,
// the token least of all. (A GET's: model's TestNoRedirectIsFollowed.)
func TestNoRedirectIsFollowedByTheList(t *testing.T) {
	t.Parallel()
	sink := fakeapiserver.StartSink(t)
	s, cfg := listing(t, &fakeapiserver.Hostility{Kind: fakeapiserver.Redirect, Location: sink.URL + "/steal?token=x"}, fakeapiserver.TokenAdmin)
	_, err := Discover(context.Background(), cfg, nil)
	var re *model.RedirectError
	if !errors.As(err, &re) {
		t.Fatalf("Discover = %v, want a *RedirectError", err)
	}
	want := s.Address() + ": GET " + fakeapiserver.DiscoveryPath + ": answered HTTP 302 with a redirect to " + sink.URL + ": not followed"
	if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "steal") {
		t.Errorf("error %q, want %q and no path of the Location", msg, want)
	}
	if got := sink.Requests(); len(got) != 0 {
		t.Errorf("the redirect was followed: the other port got %d request(s), Authorization %q", len(got), got)
	}
}

// TestThrottledDiscoveryIsSaidAtOnce: a 429 with Retry-After on the
// EndpointSlices list is asked once and said as APF throttling, not
// retried until the timeout and called "did not answer".
func TestThrottledDiscoveryIsSaidAtOnce(t *testing.T) {
	t.Parallel()
	h := &fakeapiserver.Hostility{Kind: fakeapiserver.TooManyRequests, RetryAfter: 30}
	_, cfg := listing(t, h, fakeapiserver.TokenAdmin)
	d, err := Discover(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Hits() != 1 {
		t.Errorf("the list was sent %d times, want once", h.Hits())
	}
	note := strings.Join(d.Notes, "\n")
	if !strings.Contains(note, "HTTP 429 Too Many Requests, Retry-After 30s: API Priority and Fairness is rejecting requests") {
		t.Errorf("notes %q, want the 429 said as APF throttling", note)
	}
}

// TestDiscoveryFailuresAreNamedAsWhatTheyAre: an HTML page and a TLS
// failure are said as such, not "did not answer".
func TestDiscoveryFailuresAreNamedAsWhatTheyAre(t *testing.T) {
	t.Parallel()
	html, cfg := listing(t, &fakeapiserver.Hostility{Kind: fakeapiserver.HTML}, fakeapiserver.TokenAdmin)
	_, err := Discover(context.Background(), cfg, nil)
	if err == nil || !strings.Contains(err.Error(), html.Address()+": GET "+fakeapiserver.DiscoveryPath+": answered with an HTML page, not the Kubernetes API") {
		t.Errorf("HTML: Discover = %v", err)
	}

	other := fakeapiserver.Start(t, golden.Fixture("t2"))
	_, err = Discover(context.Background(), &rest.Config{Host: other.URL, BearerToken: fakeapiserver.TokenAdmin}, nil) // the system roots: no CA of the fake
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), other.Address()+" failed TLS verification listing") {
		t.Errorf("TLS: Discover = %v, want the TLS failure named", err)
	}
}
