package live

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// flowSlack is what a server may write beyond what the client read: the
// HTTP/2 stream window of net/http's client (4 MiB, h2_bundle.go
// transportDefaultStreamFlow) and the socket buffers.
const flowSlack = 16 << 20

// hostileConfig is a Config reading s as its one pinned instance.
func hostileConfig(t *testing.T, s *fakeapiserver.Server) Config {
	t.Helper()
	return Config{REST: restConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: time.Minute, Clock: testingclock.NewFakeClock(time.Now()), Force: true}
}

// fetchOf returns the record of kind's fetch in the only sample of res.
func fetchOf(t *testing.T, res *Result, kind api.FileKind) api.FetchInfo {
	t.Helper()
	for _, f := range res.Instances[0].Samples[0].Fetches {
		if f.Kind == kind {
			return f
		}
	}
	t.Fatalf("no %s fetch in %+v", kind, res.Instances[0].Samples[0].Fetches)
	return api.FetchInfo{}
}

func hostileServer(t *testing.T, key string, h *fakeapiserver.Hostility) *fakeapiserver.Server {
	t.Helper()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Hostile = map[string]*fakeapiserver.Hostility{key: h}
	return s
}

// TestEndpointSlicesListIsBoundedAfterDecompression: an endless or
// gzip-bombed answer to the EndpointSlices list (client-go's LIST) is an
// error naming the server once 4 MiB were read, not an OOM.
func TestEndpointSlicesListIsBoundedAfterDecompression(t *testing.T) {
	for _, kind := range []fakeapiserver.HostileKind{fakeapiserver.Endless, fakeapiserver.GzipBomb} {
		h := &fakeapiserver.Hostility{Kind: kind}
		s := hostileServer(t, fakeapiserver.DiscoveryPath, h)
		cfg := hostileConfig(t, s)
		cfg.APIServers = nil
		_, err := Run(context.Background(), cfg, NewCaptures())
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Limit != maxListBytes || !strings.Contains(err.Error(), s.Address()+": GET "+fakeapiserver.DiscoveryPath+": the answer is larger than 4 MiB after decompression") {
			t.Errorf("kind %d: Run = %v, want a *TooLargeError naming the server and the list", kind, err)
		}
		if kind == fakeapiserver.Endless && h.Sent() > maxListBytes+flowSlack {
			t.Errorf("the server wrote %d bytes before the client stopped, want at most %d", h.Sent(), maxListBytes+flowSlack)
		}
	}
}

// TestNoRedirectIsFollowed: a 302 to another loopback port, answering
// client-go's LIST or one of our GETs, is an error naming the server and
// the Location's host; nothing reaches that host, the token least of all.
func TestNoRedirectIsFollowed(t *testing.T) {
	for _, key := range []string{fakeapiserver.DiscoveryPath, "/metrics"} {
		sink := fakeapiserver.StartSink(t)
		s := hostileServer(t, key, &fakeapiserver.Hostility{Kind: fakeapiserver.Redirect, Location: sink.URL + "/steal?token=x"})
		cfg := hostileConfig(t, s)
		var msg string
		if key == fakeapiserver.DiscoveryPath {
			cfg.APIServers = nil
			_, err := Run(context.Background(), cfg, NewCaptures())
			var re *RedirectError
			if !errors.As(err, &re) {
				t.Errorf("%s: Run = %v, want a *RedirectError", key, err)
				continue
			}
			msg = err.Error()
		} else {
			res, err := Run(context.Background(), cfg, NewCaptures())
			if err != nil {
				t.Fatal(err)
			}
			msg = fetchOf(t, res, api.FileMetrics).Error
		}
		want := s.Address() + ": GET " + key + ": answered HTTP 302 with a redirect to " + sink.URL + ": not followed"
		if !strings.Contains(msg, want) || strings.Contains(msg, "steal") {
			t.Errorf("%s: error %q, want %q and no path of the Location", key, msg, want)
		}
		if got := sink.Requests(); len(got) != 0 {
			t.Errorf("%s: the redirect was followed: the other port got %d request(s), Authorization %q", key, len(got), got)
		}
	}
}

// TestGoroutineDumpIsBoundedNearTheRuntimeCut: an endless debug=2 stream
// is refused past 64 MiB, the runtime's own cut, with an error naming the
// server; collect's file of it is not left on disk.
func TestGoroutineDumpIsBoundedNearTheRuntimeCut(t *testing.T) {
	h := &fakeapiserver.Hostility{Kind: fakeapiserver.Endless}
	s := hostileServer(t, "/debug/pprof/goroutine?debug=2", h)
	dir := t.TempDir()
	res, err := Run(context.Background(), hostileConfig(t, s), &bundle.Dir{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	fi := fetchOf(t, res, api.FileGoroutineDebug2)
	want := s.Address() + ": GET /debug/pprof/goroutine: the answer is larger than 64 MiB after decompression"
	if !strings.Contains(fi.Error, want) || fi.Bytes > maxDumpBytes {
		t.Errorf("debug=2 fetch: error %q, %d bytes read; want %q within %d bytes", fi.Error, fi.Bytes, want, maxDumpBytes)
	}
	if h.Sent() > maxDumpBytes+flowSlack {
		t.Errorf("the server wrote %d bytes, want at most %d", h.Sent(), maxDumpBytes+flowSlack)
	}
	p := filepath.Join(dir, bundle.SampleDir(s.Address(), 1), bundle.FileName(api.FileGoroutineDebug2))
	if st, err := os.Stat(p); err == nil {
		t.Errorf("collect left %d bytes of the refused dump in %s", st.Size(), p)
	}
}

// TestMetricsBodyBoundedAfterDecompression: an endless /metrics, a gzip
// bomb with Content-Encoding and one without (raw gzip bytes) are each an
// error naming the server past 32 MiB of text, never a silent cut.
func TestMetricsBodyBoundedAfterDecompression(t *testing.T) {
	var raw bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&raw, gzip.BestSpeed)
	zw.Write(bytes.Repeat([]byte("apiserver_request_total 1\n"), (maxMetricsBytes/26)+1000))
	zw.Close()
	for name, h := range map[string]*fakeapiserver.Hostility{
		"endless":       {Kind: fakeapiserver.Endless},
		"gzip bomb":     {Kind: fakeapiserver.GzipBomb},
		"raw gzip body": {Kind: fakeapiserver.ErrorBody, Status: 200, Body: raw.String()},
	} {
		s := hostileServer(t, "/metrics", h)
		res, err := Run(context.Background(), hostileConfig(t, s), NewCaptures())
		if err != nil {
			t.Fatal(err)
		}
		fi := fetchOf(t, res, api.FileMetrics)
		if !strings.Contains(fi.Error, s.Address()+": GET /metrics") || !strings.Contains(fi.Error, "larger than 32 MiB after decompression") {
			t.Errorf("%s: /metrics fetch error %q, want it refused past 32 MiB", name, fi.Error)
		}
		if h.Kind == fakeapiserver.Endless && h.Sent() > maxMetricsBytes+flowSlack {
			t.Errorf("%s: the server wrote %d bytes, want at most %d", name, h.Sent(), maxMetricsBytes+flowSlack)
		}
	}
}

// TestErrorBodiesAreEscaped: the error body of a failed debug GET reaches
// the error text with its control characters (C0, C1, TAB) escaped.
func TestErrorBodiesAreEscaped(t *testing.T) {
	body := "boom\x1b[31m red\x07\r\u009b2J\there"
	s := hostileServer(t, "/debug/pprof/goroutine?debug=1", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Body: body})
	res, err := Run(context.Background(), hostileConfig(t, s), NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	got := fetchOf(t, res, api.FileGoroutineDebug1).Error
	want := `HTTP 500: boom\x1b[31m red\x07\x0d\u009b2J\there`
	if !strings.Contains(got, want) {
		t.Errorf("error %q, want it to hold %q", got, want)
	}
	for _, r := range got {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			t.Errorf("error %q holds the control character %U", got, r)
		}
	}
}

// TestThrottledDiscoveryIsSaidAtOnce: a 429 with Retry-After on the
// EndpointSlices list is asked once and said as APF throttling, not
// retried until the timeout and called "did not answer".
func TestThrottledDiscoveryIsSaidAtOnce(t *testing.T) {
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

// TestVersionContradictionIsWarned: /version saying v1.20.0 while
// kubernetes_build_info and the frames say v1.37 gives a note.
func TestVersionContradictionIsWarned(t *testing.T) {
	dir := fakeapiserver.CopyCapture(t, golden.Fixture("t2"), "2026-11-29T10:23:09Z")
	if err := os.WriteFile(filepath.Join(dir, "version.json"), []byte(`{"major":"1","minor":"20","gitVersion":"v1.20.0"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := fakeapiserver.Start(t, dir)
	res, err := Run(context.Background(), hostileConfig(t, s), NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	want := "the versions contradict each other: /version says v1.20.0, but kubernetes_build_info says v1.37.2 and the goroutine profile's k8s.io/apiserver module says v1.37"
	if notes := strings.Join(res.Instances[0].Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	// The real capture agrees with itself.
	res, err = Run(context.Background(), hostileConfig(t, fakeapiserver.Start(t, golden.Fixture("t2"))), NewCaptures())
	if err != nil || len(res.Instances[0].Notes) != 0 {
		t.Errorf("t2: %v, notes %q", err, res.Instances[0].Notes)
	}
}
